// The figure of a QKAN fit: the fit itself (or, for several inputs, predicted against true
// values) beside the loss history. It takes plain arrays, so any training code can fill it.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "lockstep/core/plot.hpp"

namespace lockstep::qkan {

struct FitPlotData {
  std::string title;  ///< over the figure, e.g. the data set's name; empty: none
  /// One-input models: the inputs of the samples (any order; drawn sorted), with `target` the
  /// function and `prediction` the model's output at each, drawn as two lines over x.
  /// Models with several inputs (or outputs): leave x empty; target[i] and prediction[i] are
  /// then paired values (e.g. every output of the test samples), drawn as a predicted-against-
  /// true scatter with the diagonal y = x.
  std::vector<double> x;
  std::vector<double> target, prediction;
  std::vector<double> train_loss;  ///< the loss after each step (drawn on a log axis); may be empty
  std::vector<double> test_loss;   ///< the same on the test set: empty or as long as train_loss
  std::string loss_name = "loss";  ///< the loss panel's y label, e.g. "MSE"
};

/// The figure (1200×800 px): the fit panel on the left, the loss panel on the right (absent
/// when there is no loss history). Non-finite values are skipped. std::invalid_argument, naming
/// the field, when target or prediction is empty, or sizes disagree.
plot::Figure fit_figure(const FitPlotData& data);

/// Writes fit_figure(data) to `path` as PNG (atomically).
void write_fit_plot(const std::filesystem::path& path, const FitPlotData& data);

}  // namespace lockstep::qkan
