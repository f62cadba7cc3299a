#include "problem.hpp"

#include "lockstep/core/error.hpp"

namespace lockstep::qkan::detail {
namespace {

bool is_float(DType d) { return d == DType::f32 || d == DType::f64; }

/// Element count of an input, as invalid_argument past 2^63; a non-empty view needs data.
std::int64_t checked_numel(std::string_view where, const char* name, const ConstTensor& t) {
  std::int64_t n = 0;
  try {
    n = numel(t.shape);
  } catch (const std::exception& e) {
    invalid_argument(where, name, ": ", e.what());
  }
  if (n > 0 && t.data == nullptr)
    invalid_argument(where, name, " is missing: shape ", to_string(t.shape), " but no data");
  return n;
}

/// Reads a per-edge table's layout from its shape: natural (O, I, tail...) or grouped
/// (g, tail...) / (1, g, tail...). `tail` is the per-row shape, e.g. (R', k) for θ.
TableLayout table_layout(std::string_view where, const char* name, const ConstTensor& t, const Shape& tail,
                         std::int64_t I, std::int64_t* O_natural) {
  const int rank = t.rank();
  const int tr = static_cast<int>(tail.size());
  auto expected = [&] {
    std::string s = "(O, I";
    for (auto d : tail) s += ", " + std::to_string(d);
    s += ") or (g";
    for (auto d : tail) s += ", " + std::to_string(d);
    return s + ")";
  };
  if (rank != tr + 1 && rank != tr + 2)
    invalid_argument(where, name, " has shape ", to_string(t.shape), ", expected ", expected());
  checked_numel(where, name, t);
  for (int k = 0; k < tr; ++k)
    if (t.shape[rank - tr + k] != tail[k])
      invalid_argument(where, name, " has shape ", to_string(t.shape), ", expected ", expected());
  TableLayout L;
  if (rank == tr + 1) {
    L.po = 1;
    L.pi = t.shape[0];
  } else if (t.shape[1] == I) {
    L.po = t.shape[0];
    L.pi = I;
    if (L.po != 1) *O_natural = L.po;
  } else if (t.shape[0] == 1) {
    L.po = 1;
    L.pi = t.shape[1];
  } else {
    invalid_argument(where, name, " has shape ", to_string(t.shape), ": a table with both O and g is (O, I=", I,
                     ", ...) or (1, g, ...)");
  }
  if (L.pi < 1) invalid_argument(where, name, " has an empty group dimension: ", to_string(t.shape));
  return L;
}

/// Every input shares x's dtype and device.
void check_like_x(std::string_view where, const char* name, const ConstTensor& t, const Problem& p) {
  if (t.dtype != p.dtype)
    invalid_argument(where, name, " has dtype ", to_string(t.dtype), ", expected ", to_string(p.dtype), " like x");
  if (t.device != p.device)
    invalid_argument(where, name, " is on ", to_string(t.device), " but x is on ", to_string(p.device));
}

}  // namespace

void check_options(std::string_view where, const Options& opt) {
  (void)to_string(opt.ansatz);  // throws for a value outside the enum
  if (opt.reps < 1) invalid_argument(where, "reps must be >= 1, got ", opt.reps);
  if (opt.ansatz == Ansatz::px && !encoding_active(opt.ansatz, opt.preacts_trainable))
    invalid_argument(where,
                     "px_encoding needs the encoding active (preacts_trainable=true): its "
                     "data gate is RX(arccos(w*x + c)), undefined for raw x outside [-1, 1]");
}

Problem resolve(std::string_view where, Kind kind, const Options& opt, const ConstTensor& x, const ConstTensor& theta,
                const ConstTensor& w, const ConstTensor& c, const ConstTensor* W) {
  check_options(where, opt);
  Problem p;
  p.kind = kind;
  p.ansatz = opt.ansatz;
  p.reps = opt.reps;
  p.R = theta_rows(opt.ansatz, opt.reps);
  p.K = theta_cols(opt.ansatz);
  p.encoding = encoding_active(opt.ansatz, opt.preacts_trainable);
  p.fast_measure = opt.fast_measure;

  if (!x.given()) invalid_argument(where, "x is missing");
  if (!is_float(x.dtype)) invalid_argument(where, "x has an unsupported dtype");
  if (x.rank() != 2) invalid_argument(where, "x has shape ", to_string(x.shape), ", expected (B, I)");
  checked_numel(where, "x", x);
  p.dtype = x.dtype;
  p.device = x.device;
  p.stream = opt.stream;
  p.B = x.shape[0];
  p.I = x.shape[1];
  if (p.I < 1) invalid_argument(where, "x has shape ", to_string(x.shape), ": I must be >= 1");
  p.x = x.data;

  if (!theta.given()) invalid_argument(where, "theta is missing");
  check_like_x(where, "theta", theta, p);
  std::int64_t O_natural = -1;
  p.theta_layout = table_layout(where, "theta", theta, {p.R, p.K}, p.I, &O_natural);
  p.theta = theta.data;

  if (p.encoding) {
    if (!w.given()) invalid_argument(where, "preacts_weight is missing but the encoding is active");
    if (!c.given()) invalid_argument(where, "preacts_bias is missing but the encoding is active");
    check_like_x(where, "preacts_weight", w, p);
    check_like_x(where, "preacts_bias", c, p);
    checked_numel(where, "preacts_bias", c);
    if (w.shape != c.shape)
      invalid_argument(where, "preacts_weight has shape ", to_string(w.shape), " but preacts_bias has shape ",
                       to_string(c.shape), "; they must match");
    std::int64_t O_pre = -1;
    p.pre_layout = table_layout(where, "preacts_weight", w, {p.reps}, p.I, &O_pre);
    if (O_natural != -1 && O_pre != -1 && O_pre != O_natural)
      invalid_argument(where, "theta has shape ", to_string(theta.shape), " but preacts_weight has ",
                       to_string(w.shape), ": their O differ");
    if (O_natural == -1) O_natural = O_pre;
    p.w = w.data;
    p.c = c.data;
  }

  if (kind == Kind::contract) {
    if (W == nullptr || !W->given()) invalid_argument(where, "weight is missing");
    check_like_x(where, "weight", *W, p);
    if (W->rank() != 2 || W->shape[1] != p.I || W->shape[0] < 1)
      invalid_argument(where, "weight has shape ", to_string(W->shape), ", expected (O, I=", p.I, ") with O >= 1");
    checked_numel(where, "weight", *W);
    p.O = W->shape[0];
    if (opt.out_dim != -1 && opt.out_dim != p.O)
      invalid_argument(where, "out_dim is ", opt.out_dim, " but weight has shape ", to_string(W->shape));
    p.W = W->data;
  } else {
    p.O = opt.out_dim != -1 ? opt.out_dim : (O_natural != -1 ? O_natural : p.I);
  }
  if (p.O < 1) invalid_argument(where, "out_dim must be >= 1, got ", p.O);
  if (O_natural != -1 && O_natural != p.O)
    invalid_argument(where, "theta/preacts have O = ", O_natural, " rows but ",
                     kind == Kind::contract ? "weight has O = " : "out_dim is ", p.O);

  const bool shared = p.theta_layout.shared_over_o(p.I) && (!p.encoding || p.pre_layout.shared_over_o(p.I));
  p.O_edges = shared ? 1 : p.O;
  // Every index below is int64; this guards the products the kernels form.
  try {
    (void)numel({p.B, p.O, p.I});
  } catch (const std::exception& e) {
    invalid_argument(where, "the circuit count B*O*I: ", e.what());
  }
  return p;
}

void check_output(std::string_view where, const char* name, const MutTensor& t, const Problem& p,
                  const Shape& expected) {
  check_input(where, name, t.view(), p, expected);
}

void check_input(std::string_view where, const char* name, const ConstTensor& t, const Problem& p,
                 const Shape& expected) {
  if (!t.given()) invalid_argument(where, name, " is missing");
  checked_numel(where, name, t);
  if (t.dtype != p.dtype)
    invalid_argument(where, name, " has dtype ", to_string(t.dtype), ", expected ", to_string(p.dtype));
  if (t.device != p.device)
    invalid_argument(where, name, " is on ", to_string(t.device), ", expected ", to_string(p.device), " like x");
  if (t.shape != expected)
    invalid_argument(where, name, " has shape ", to_string(t.shape), ", expected ", to_string(expected));
}

}  // namespace lockstep::qkan::detail
