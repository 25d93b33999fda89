#include "worker/trainer_base/run_results.h"

#include "common/status_macros.h"
#include "common/atomic_file.h"
#include "worker/trainer_base/py_repr.h"

namespace lmtrain {
namespace {

absl::Status WriteJson(const std::string& dir, const std::string& name, const nlohmann::json& j) {
  return WriteFileAtomically(dir + "/" + name, j.dump(4) + "\n");
}

}  // namespace

nlohmann::json TrainResultsJson(const TrainSummary& s, int64_t train_samples) {
  const double t = s.runtime_seconds;
  nlohmann::json j = {{"epoch", PyRound(s.epoch, 2)},
                      {"total_flos", s.total_flos},
                      {"train_loss", s.train_loss},
                      {"train_runtime", PyRound(t, 4)},
                      {"train_samples", train_samples},
                      {"train_samples_per_second", PyRound(t > 0 ? s.num_samples / t : 0.0, 3)},
                      {"train_steps_per_second", PyRound(t > 0 ? s.step / t : 0.0, 3)}};
  for (const auto& [name, bytes] : s.memory) j[name] = bytes;
  return j;
}

nlohmann::json EvalResultsJson(const EvalLogRecord& record) {
  nlohmann::json j = EvalMetricsJson(record);
  j["epoch"] = PyRound(record.epoch, 2);
  j["eval_samples"] = record.num_samples;
  return j;
}

nlohmann::json PredictResultsJson(const std::vector<std::pair<std::string, double>>& metrics,
                                  double t, int64_t num_samples, int64_t num_batches) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, value] : metrics) j[name] = value;
  j["predict_runtime"] = PyRound(t, 4);
  j["predict_samples_per_second"] = PyRound(t > 0 ? num_samples / t : 0.0, 3);
  j["predict_steps_per_second"] = PyRound(t > 0 ? num_batches / t : 0.0, 3);
  j["predict_samples"] = num_samples;
  return j;
}

absl::Status WriteRunResults(const std::string& dir, const std::optional<nlohmann::json>& train,
                             const std::optional<nlohmann::json>& eval,
                             const std::optional<nlohmann::json>& predict) {
  nlohmann::json all = nlohmann::json::object();
  if (train.has_value()) {
    RETURN_IF_ERROR(WriteJson(dir, "train_results.json", *train));
    all.update(*train);
  }
  if (eval.has_value()) {
    RETURN_IF_ERROR(WriteJson(dir, "eval_results.json", *eval));
    all.update(*eval);
  }
  if (predict.has_value()) {
    RETURN_IF_ERROR(WriteJson(dir, "predict_results.json", *predict));
    all.update(*predict);
  }
  return WriteJson(dir, "all_results.json", all);
}

}  // namespace lmtrain
