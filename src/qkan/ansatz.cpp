#include "lockstep/qkan/ansatz.hpp"

#include "lockstep/core/error.hpp"

namespace lockstep::qkan {

Ansatz parse_ansatz(std::string_view name) {
  if (name == "pz_encoding" || name == "pz") return Ansatz::pz;
  if (name == "rpz_encoding" || name == "rpz") return Ansatz::rpz;
  if (name == "px_encoding" || name == "px") return Ansatz::px;
  if (name == "real") return Ansatz::real;
  if (name == "mix") return Ansatz::mix;
  invalid_argument("qkan", "unknown ansatz '", name,
                   "'; supported: pz_encoding (pz), rpz_encoding (rpz), px_encoding (px), real, mix");
}

const char* to_string(Ansatz a) {
  switch (a) {
    case Ansatz::pz: return "pz_encoding";
    case Ansatz::rpz: return "rpz_encoding";
    case Ansatz::px: return "px_encoding";
    case Ansatz::real: return "real";
    case Ansatz::mix: return "mix";
  }
  invalid_argument("qkan", "unknown ansatz value ", static_cast<int>(a),
                   "; supported: pz_encoding, rpz_encoding, px_encoding, real, mix");
}

int theta_rows(Ansatz a, int reps) { return a == Ansatz::real ? reps : reps + 1; }
int theta_cols(Ansatz a) { return (a == Ansatz::pz || a == Ansatz::mix) ? 2 : 1; }
bool encoding_active(Ansatz a, bool preacts_trainable) { return preacts_trainable || a == Ansatz::rpz; }

}  // namespace lockstep::qkan
