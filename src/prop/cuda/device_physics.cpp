// The CUDA engine's tables on the device (device_physics.hpp).
#include "device_physics.hpp"

#include <cstddef>

namespace lockstep::prop::cuda {

namespace {

constexpr const char* kWhere = "prop.cuda_engine";
namespace rt = ::lockstep::cuda;

template <class T> rt::DeviceBuffer<T> uploaded(const std::vector<T>& host, cudaStream_t stream) {
  rt::DeviceBuffer<T> buffer(static_cast<std::int64_t>(host.size()), stream, kWhere);
  buffer.upload(host, stream, kWhere);
  return buffer;
}

bool same_arrays(const MemberPhysics& a, const Windows& wa, const MemberPhysics& b, const Windows& wb) {
  return a.linear == b.linear && a.gamma_shock == b.gamma_shock && a.raman_spectrum == b.raman_spectrum &&
         wa.time == wb.time && wa.frequency == wb.frequency;
}

}  // namespace

template <class R> DevicePhysics<R>::DevicePhysics(const BatchPhysics& batch, cudaStream_t stream) {
  const std::vector<MemberPhysics>& physics = batch.physics;
  const std::vector<Windows>& windows = batch.windows;
  members = static_cast<std::int64_t>(physics.size());
  points = batch.grid.size();
  const double n = static_cast<double>(points);
  std::vector<int> member_group;
  std::vector<std::size_t> representative;  // the first member of each group
  std::vector<R> kerr_of, raman_of;
  std::vector<unsigned char> has_f, has_t;
  for (std::size_t i = 0; i < physics.size(); ++i) {
    const MemberPhysics& p = physics[i];
    const Windows& w = windows[i];
    raman = raman || p.has_raman();
    frequency_windows = frequency_windows || !w.frequency.empty();
    time_windows = time_windows || !w.time.empty();
    kerr_of.push_back(static_cast<R>((1 - p.raman_fraction) / (n * n * n)));
    raman_of.push_back(static_cast<R>(p.raman_fraction / (n * n * n * n)));
    has_f.push_back(w.frequency.empty() ? 0 : 1);
    has_t.push_back(w.time.empty() ? 0 : 1);
    std::size_t g = 0;
    while (g < representative.size() && !same_arrays(physics[representative[g]], windows[representative[g]], p, w)) ++g;
    if (g == representative.size()) representative.push_back(i);
    member_group.push_back(static_cast<int>(g));
  }
  groups = static_cast<std::int64_t>(representative.size());

  const std::int64_t half = points / 2 + 1;
  std::vector<double2> linear_of;
  std::vector<R> gamma_shock_of, frequency_window_of, time_window_of;
  std::vector<C<R>> response;
  for (std::size_t r : representative) {
    const MemberPhysics& p = physics[r];
    const Windows& w = windows[r];
    for (std::int64_t k = 0; k < points; ++k) {
      const auto u = static_cast<std::size_t>(k);
      linear_of.push_back({p.linear[u].real(), p.linear[u].imag()});
      gamma_shock_of.push_back(static_cast<R>(p.gamma_shock[u]));
      frequency_window_of.push_back(static_cast<R>(w.frequency.empty() ? 1.0 : w.frequency[u]));
      time_window_of.push_back(static_cast<R>(w.time.empty() ? 1.0 : w.time[u]));
    }
    for (std::int64_t k = 0; k < half; ++k) {
      const Complex h = p.has_raman() ? p.raman_spectrum[static_cast<std::size_t>(k)] : Complex{};
      response.push_back({static_cast<R>(h.real()), static_cast<R>(h.imag())});
    }
  }
  group = uploaded(member_group, stream);
  kerr = uploaded(kerr_of, stream);
  raman_coefficient = uploaded(raman_of, stream);
  has_frequency_window = uploaded(has_f, stream);
  has_time_window = uploaded(has_t, stream);
  linear = uploaded(linear_of, stream);
  gamma_shock = uploaded(gamma_shock_of, stream);
  if (frequency_windows) frequency_window = uploaded(frequency_window_of, stream);
  if (time_windows) time_window = uploaded(time_window_of, stream);
  if (raman) raman_response = uploaded(response, stream);
  omega = uploaded(batch.grid.omega(), stream);
}

DeviceErrorControls::DeviceErrorControls(std::int64_t members, cudaStream_t stream)
    : controls_(static_cast<std::size_t>(members)),
      kind_(members, stream, kWhere),
      rtol_(members, stream, kWhere),
      atol_(members, stream, kWhere) {}

void DeviceErrorControls::set(std::int64_t member, const ErrorControl& control) {
  controls_[static_cast<std::size_t>(member)] = control;
  changed_ = true;
}

void DeviceErrorControls::upload(cudaStream_t stream) {
  if (!changed_) return;
  std::vector<int> kind;
  std::vector<double> rtol, atol;
  for (const ErrorControl& c : controls_) {
    kind.push_back(static_cast<int>(c.norm));
    rtol.push_back(c.rtol);
    atol.push_back(c.atol);
  }
  kind_.upload(kind, stream, kWhere);
  rtol_.upload(rtol, stream, kWhere);
  atol_.upload(atol, stream, kWhere);
  changed_ = false;
}

template struct DevicePhysics<float>;
template struct DevicePhysics<double>;

}  // namespace lockstep::prop::cuda
