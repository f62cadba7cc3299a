// Figures of QKAN models: a fit (the fit itself or, for several inputs, predicted against true
// values, beside the loss history) and the learned activations. They take plain arrays, so any
// training code can fill them.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "lockstep/core/plot.hpp"

namespace lockstep::qkan {

struct FitPlotData {
  std::string title{};  ///< over the figure, e.g. the data set's name; empty: none
  /// One-input models: the inputs of the samples (any order; drawn sorted), with `target` the
  /// function and `prediction` the model's output at each, drawn as two lines over x.
  /// Models with several inputs (or outputs): leave x empty; target[i] and prediction[i] are
  /// then paired values (e.g. every output of the test samples), drawn as a predicted-against-
  /// true scatter with the diagonal y = x.
  std::vector<double> x{};
  std::vector<double> target{}, prediction{};
  std::vector<double> train_loss{};  ///< the loss after each step (drawn on a log axis); may be empty
  std::vector<double> test_loss{};   ///< the same on the test set: empty or as long as train_loss
  std::string loss_name = "loss";    ///< the loss panel's y label, e.g. "MSE"
};

/// The figure (1200×800 px): the fit panel on the left, the loss panel on the right (absent
/// when there is no loss history). Non-finite values are skipped. std::invalid_argument, naming
/// the field, when target or prediction is empty, or sizes disagree.
plot::Figure fit_figure(const FitPlotData& data);

/// Writes fit_figure(data) to `path` as PNG (atomically).
void write_fit_plot(const std::filesystem::path& path, const FitPlotData& data);

/// One learned activation: the function on edge input → output of a layer, sampled at x.
struct ActivationCurve {
  int layer = 0, input = 0, output = 0;  ///< 0-based
  std::vector<double> x{}, y{};
};

/// The learned activations: one panel per layer (up to 16 layers, four panels a row), each
/// edge's curve in it, labelled "in → out" in a legend when the layer has at most 7 edges (as
/// many as there are series colours).
/// std::invalid_argument for no curves, a curve without samples or with x and y of unequal
/// sizes, a negative index, or more than 16 layers.
plot::Figure activations_figure(const std::vector<ActivationCurve>& curves, const std::string& title = "");

/// Writes activations_figure(curves, title) to `path` as PNG (atomically).
void write_activations_plot(const std::filesystem::path& path, const std::vector<ActivationCurve>& curves,
                            const std::string& title = "");

}  // namespace lockstep::qkan
