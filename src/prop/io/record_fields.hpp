// The tables of Statistics and Ledger fields as the result files name them. Like the Config
// table, every field appears once; tests/cpp/prop/test_result_file.cpp counts them.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "lockstep/prop/record.hpp"

namespace lockstep::prop::io {

template <class Member> using Named = std::pair<std::string_view, Member>;

inline constexpr std::array<Named<std::vector<double> Statistics::*>, 7> kStatisticsFields{{
    {"z", &Statistics::z},
    {"dz", &Statistics::dz},
    {"error_norm", &Statistics::error_norm},
    {"energy", &Statistics::energy},
    {"photon_number", &Statistics::photon_number},
    {"peak_power", &Statistics::peak_power},
    {"spectral_centroid", &Statistics::spectral_centroid},
}};

inline constexpr std::array<Named<std::int64_t Ledger::*>, 6> kLedgerCounters{{
    {"accepted_steps", &Ledger::accepted_steps},
    {"rejected_steps", &Ledger::rejected_steps},
    {"rhs_evaluations", &Ledger::rhs_evaluations},
    {"ffts", &Ledger::ffts},
    {"schedule_position", &Ledger::schedule_position},
    {"tolerance_violations", &Ledger::tolerance_violations},
}};

inline constexpr std::array<Named<double Ledger::*>, 4> kLedgerReals{{
    {"wall_time", &Ledger::wall_time},
    {"z", &Ledger::z},
    {"next_dz", &Ledger::next_dz},
    {"previous_error", &Ledger::previous_error},
}};

/// The ledger entries a resume needs, linked into /state.
inline constexpr std::array<std::string_view, 4> kStateLinks{"z", "next_dz", "previous_error", "schedule_position"};

}  // namespace lockstep::prop::io
