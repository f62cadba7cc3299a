// The CPU engine: the Stepper over a Problem, the members' rows in host memory.
#pragma once

#include <memory>
#include <vector>

#include "lockstep/prop/engine.hpp"
#include "lockstep/prop/problem.hpp"
#include "lockstep/prop/stepper.hpp"

namespace lockstep::prop {

class HostEngine final : public Engine {
 public:
  HostEngine(const Tableau& tableau, Problem& problem);
  /// The same, owning its problem.
  HostEngine(const Tableau& tableau, std::unique_ptr<Problem> problem);

  const Tableau& tableau() const override { return stepper_.tableau(); }
  std::int64_t members() const override { return stepper_.members(); }
  std::int64_t points() const override { return stepper_.points(); }
  void load(std::int64_t member, const Complex* spectrum, const ErrorControl& control) override;
  void start_trial(double h, Evaluation evaluation) override;
  void finish_trial() override {}  // start_trial computes the trial
  int evaluations(std::int64_t member) const override { return stepper_.evaluations(member); }
  std::int64_t ffts_per_evaluation(std::int64_t member) const override { return problem_.ffts_per_evaluation(member); }
  double norm(std::int64_t member) const override { return stepper_.norm(member); }
  bool finite(std::int64_t member) const override { return stepper_.finite(member); }
  void accept() override;
  FieldMeasures measures(std::int64_t member) override;
  void read_solutions(std::span<Complex* const> rows) override;
  void read_dense_output(double theta, std::span<Complex* const> rows) override;
  void finish_reads() override {}  // the reads above are synchronous

 private:
  void check_rows(std::span<Complex* const> rows) const;

  std::unique_ptr<Problem> owned_;
  Problem& problem_;
  Stepper stepper_;
  std::vector<FieldMeasures> measures_;        // per member, of the current solution
  std::vector<std::vector<Complex>> scratch_;  // per thread: a windowed solution
};

}  // namespace lockstep::prop
