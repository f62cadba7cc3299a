#include "lockstep/qkan/plots.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "lockstep/core/error.hpp"

namespace lockstep::qkan {

namespace {

constexpr const char* kWhere = "qkan.plot";
constexpr plot::Color kTargetColor{0, 0, 0};
constexpr plot::Color kDiagonalColor{150, 150, 150};

void check(const FitPlotData& d) {
  if (d.target.empty()) invalid_argument(kWhere, "target is empty");
  if (d.prediction.size() != d.target.size())
    invalid_argument(kWhere, "prediction has ", d.prediction.size(), " values but target has ", d.target.size());
  if (!d.x.empty() && d.x.size() != d.target.size())
    invalid_argument(kWhere, "x has ", d.x.size(), " values but target has ", d.target.size(),
                     " (leave x empty for a model with several inputs)");
  if (!d.test_loss.empty() && d.test_loss.size() != d.train_loss.size())
    invalid_argument(kWhere, "test_loss has ", d.test_loss.size(), " values but train_loss has ", d.train_loss.size(),
                     " (one per step, or none)");
}

/// The indices of `x` in ascending order (stable), NaN last (the plot skips them): curves are
/// drawn left to right whatever order they were sampled in.
std::vector<std::size_t> order_by_x(const std::vector<double>& x) {
  std::vector<std::size_t> order(x.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return std::isnan(x[b]) ? !std::isnan(x[a]) : x[a] < x[b]; });
  return order;
}

void draw_curves(plot::Axes& axes, const FitPlotData& d) {
  std::vector<double> x, target, prediction;
  for (std::size_t i : order_by_x(d.x)) {
    x.push_back(d.x[i]);
    target.push_back(d.target[i]);
    prediction.push_back(d.prediction[i]);
  }
  axes.add_line(x, std::move(target), {.label = "target", .color = kTargetColor, .width = 2.0, .dashed = true})
      .add_line(std::move(x), std::move(prediction), {.label = "model", .color = plot::series_color(0), .width = 2.5})
      .set_title("Fit")
      .set_xlabel("x")
      .set_ylabel("f(x)");
}

void draw_scatter(plot::Axes& axes, const FitPlotData& d) {
  // The diagonal spans the finite values of both, so a perfect model lies on it.
  double lo = INFINITY, hi = -INFINITY;
  for (const auto* v : {&d.target, &d.prediction})
    for (double e : *v)
      if (std::isfinite(e)) lo = std::min(lo, e), hi = std::max(hi, e);
  if (lo < hi)
    axes.add_line({lo, hi}, {lo, hi}, {.label = "y = x", .color = kDiagonalColor, .width = 1.5, .dashed = true});
  axes.add_scatter(d.target, d.prediction,
                   {.label = "samples", .color = plot::series_color(0), .radius = d.target.size() > 2000 ? 2.0 : 3.0})
      .set_title("Predicted against true")
      .set_xlabel("true value")
      .set_ylabel("model's prediction");
}

}  // namespace

plot::Figure fit_figure(const FitPlotData& data) {
  check(data);
  const bool losses = !data.train_loss.empty();
  plot::Figure figure(1, losses ? 2 : 1);
  if (!data.title.empty()) figure.set_title(data.title);
  if (data.x.empty()) draw_scatter(figure.axes(0, 0), data);
  else draw_curves(figure.axes(0, 0), data);
  if (losses) {
    std::vector<double> step(data.train_loss.size());
    std::iota(step.begin(), step.end(), 1.0);
    plot::Axes& axes = figure.axes(0, 1);
    axes.add_line(step, data.train_loss, {.label = "train", .color = plot::series_color(0)});
    if (!data.test_loss.empty()) axes.add_line(step, data.test_loss, {.label = "test", .color = plot::series_color(1)});
    axes.set_log_y().set_title("Loss history").set_xlabel("step").set_ylabel(data.loss_name);
  }
  return figure;
}

void write_fit_plot(const std::filesystem::path& path, const FitPlotData& data) { fit_figure(data).write_png(path); }

plot::Figure activations_figure(const std::vector<ActivationCurve>& curves, const std::string& title) {
  if (curves.empty()) invalid_argument(kWhere, "activations: no curves");
  int layers = 0;
  for (std::size_t k = 0; k < curves.size(); ++k) {
    const ActivationCurve& c = curves[k];
    if (c.layer < 0 || c.input < 0 || c.output < 0)
      invalid_argument(kWhere, "activations: curve ", k, " has a negative layer, input or output index");
    if (c.x.empty() || c.x.size() != c.y.size())
      invalid_argument(kWhere, "activations: curve ", k, " has ", c.x.size(), " x and ", c.y.size(),
                       " y values (need equal, non-zero counts)");
    layers = std::max(layers, c.layer + 1);
  }
  constexpr int kMaxLayers = 16, kPerRow = 4, kMaxLabelled = 7;  // the series colours repeat after 7
  if (layers > kMaxLayers) invalid_argument(kWhere, "activations: ", layers, " layers; at most ", kMaxLayers);
  const int cols = std::min(layers, kPerRow), rows = (layers + kPerRow - 1) / kPerRow;
  plot::Figure figure(rows, cols, 1200, std::max(800, 400 * rows));
  if (!title.empty()) figure.set_title(title);
  std::vector<int> edges(static_cast<std::size_t>(layers), 0);
  for (const ActivationCurve& c : curves) ++edges[static_cast<std::size_t>(c.layer)];
  for (int l = 0; l < layers; ++l)
    figure.axes(l / kPerRow, l % kPerRow)
        .set_title("layer " + std::to_string(l))
        .set_xlabel("input x")
        .set_ylabel("φ(x)");
  for (const ActivationCurve& c : curves) {
    std::vector<double> x, y;
    for (std::size_t i : order_by_x(c.x)) x.push_back(c.x[i]), y.push_back(c.y[i]);
    const bool labelled = edges[static_cast<std::size_t>(c.layer)] <= kMaxLabelled;
    figure.axes(c.layer / kPerRow, c.layer % kPerRow)
        .add_line(std::move(x), std::move(y),
                  {.label = labelled ? std::to_string(c.input) + " → " + std::to_string(c.output) : ""});
  }
  return figure;
}

void write_activations_plot(const std::filesystem::path& path, const std::vector<ActivationCurve>& curves,
                            const std::string& title) {
  activations_figure(curves, title).write_png(path);
}

}  // namespace lockstep::qkan
