// Two runs of the same member by different engines, compared.
#pragma once

#include <cmath>
#include <complex>
#include <cstddef>
#include <string>

#include <gtest/gtest.h>

#include "lockstep/prop/member.hpp"

namespace lockstep::prop::testing {

/// The same steps as `reference`, made by another engine: FFTW_MEASURE may plan other
/// algorithms for each, so equal to rounding (the controller turns last-bit differences of an
/// error norm into ~1e-11 of a step length).
inline void expect_same_run(const Member& run, const Member& reference, const std::string& what) {
  EXPECT_EQ(run.ledger().accepted_steps, reference.ledger().accepted_steps) << what;
  EXPECT_EQ(run.z(), reference.z()) << what;
  ASSERT_EQ(run.statistics().dz.size(), reference.statistics().dz.size()) << what;
  for (std::size_t k = 0; k < run.statistics().dz.size(); ++k)
    EXPECT_NEAR(run.statistics().dz[k], reference.statistics().dz[k], 1e-8 * reference.statistics().dz[k]) << what;
  EXPECT_EQ(run.planes().z, reference.planes().z) << what;
  double d = 0, s = 0;
  for (std::size_t k = 0; k < reference.spectrum().size(); ++k) {
    d += std::norm(reference.spectrum()[k] - run.spectrum()[k]);
    s += std::norm(reference.spectrum()[k]);
  }
  EXPECT_LT(std::sqrt(d / s), 1e-10) << what;
}

}  // namespace lockstep::prop::testing
