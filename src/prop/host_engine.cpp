#include "host_engine.hpp"

#include <algorithm>

#include "lockstep/core/error.hpp"
#include "lockstep/core/parallel.hpp"
#include "member_threads.hpp"

namespace lockstep::prop {

namespace {
constexpr const char* kWhere = "prop.host_engine";
}

HostEngine::HostEngine(const Tableau& tableau, Problem& problem)
    : problem_(problem),
      stepper_(tableau, problem),
      measures_(static_cast<std::size_t>(problem.members())),
      scratch_(static_cast<std::size_t>(num_threads()),
               std::vector<Complex>(static_cast<std::size_t>(problem.points()))) {}

HostEngine::HostEngine(const Tableau& tableau, std::unique_ptr<Problem> problem) : HostEngine(tableau, *problem) {
  owned_ = std::move(problem);
}

void HostEngine::load(std::int64_t member, const Complex* spectrum, const ErrorControl& control) {
  stepper_.load(member, spectrum, control);
  measures_[static_cast<std::size_t>(member)] = problem_.measure(member, spectrum);
}

void HostEngine::start_trial(double h, Evaluation evaluation) {
  if (evaluation == Evaluation::batched) {
    stepper_.trial(0, members(), h);
  } else {
    for (std::int64_t i = 0; i < members(); ++i) stepper_.trial(i, 1, h);
  }
}

void HostEngine::accept() {
  // Per member: the hand-over, the windows (a transform pair) and the measures (a transform for
  // the peak power), threaded like the stepper's passes.
  for_each_member(0, members(), points(), [&](std::int64_t i, int thread) {
    stepper_.accept(i);
    std::vector<Complex>& row = scratch_[static_cast<std::size_t>(thread)];
    const Complex* y = stepper_.solution(i);
    std::copy(y, y + points(), row.begin());
    if (problem_.apply_windows(i, row.data())) stepper_.replace(i, row.data());
    measures_[static_cast<std::size_t>(i)] = problem_.measure(i, row.data());
  });
}

FieldMeasures HostEngine::measures(std::int64_t member) { return measures_[static_cast<std::size_t>(member)]; }

void HostEngine::check_rows(std::span<Complex* const> rows) const {
  if (static_cast<std::int64_t>(rows.size()) != members())
    invalid_argument(kWhere, rows.size(), " rows for ", members(), " members");
}

void HostEngine::read_solutions(std::span<Complex* const> rows) {
  check_rows(rows);
  for (std::int64_t i = 0; i < members(); ++i) {
    const Complex* y = stepper_.solution(i);
    std::copy(y, y + points(), rows[static_cast<std::size_t>(i)]);
  }
}

void HostEngine::read_dense_output(double theta, std::span<Complex* const> rows) {
  check_rows(rows);
  for_each_member(0, members(), points(),
                  [&](std::int64_t i, int) { stepper_.dense_output(i, theta, rows[static_cast<std::size_t>(i)]); });
}

}  // namespace lockstep::prop
