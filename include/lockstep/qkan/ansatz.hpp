// The five circuit ansätze of docs/QKAN.md §1 and the shape of their parameters.
#pragma once

#include <string>
#include <string_view>

namespace lockstep::qkan {

enum class Ansatz { pz, rpz, px, real, mix };

/// Parses an ansatz name or alias ("pz_encoding"/"pz", "rpz_encoding"/"rpz",
/// "px_encoding"/"px", "real", "mix"); anything else throws std::invalid_argument listing them.
Ansatz parse_ansatz(std::string_view name);
/// Canonical name ("pz_encoding", ...); a value outside the enum throws std::invalid_argument.
const char* to_string(Ansatz ansatz);

/// θ rows per edge: reps + 1, or reps for `real`.
int theta_rows(Ansatz ansatz, int reps);
/// θ columns per row (k): 2 for pz and mix, 1 otherwise.
int theta_cols(Ansatz ansatz);
/// Whether the data angle is w·x + c (true) or x itself; rpz always encodes.
bool encoding_active(Ansatz ansatz, bool preacts_trainable);

}  // namespace lockstep::qkan
