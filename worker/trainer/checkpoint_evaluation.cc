#include "worker/trainer/checkpoint_evaluation.h"

#include <map>
#include <utility>
#include <vector>

#include "common/atomic_file.h"
#include "common/status_macros.h"
#include "worker/trainer/trainer_checkpoint.h"
#include "worker/trainer_base/checkpoint_writer.h"
#include "worker/trainer_base/py_repr.h"

namespace lmtrain {
namespace {

// The model's weights as they are now, to put back after the checkpoints'.
class WeightsSnapshot {
 public:
  explicit WeightsSnapshot(torch::nn::Module& model) : model_(model) {
    torch::NoGradGuard no_grad;
    for (const torch::Tensor& p : model_.parameters()) saved_.push_back(p.detach().clone());
  }
  WeightsSnapshot(const WeightsSnapshot&) = delete;
  WeightsSnapshot& operator=(const WeightsSnapshot&) = delete;
  ~WeightsSnapshot() {
    torch::NoGradGuard no_grad;
    std::vector<torch::Tensor> params = model_.parameters();
    for (size_t i = 0; i < params.size() && i < saved_.size(); ++i) params[i].copy_(saved_[i]);
  }

 private:
  torch::nn::Module& model_;
  std::vector<torch::Tensor> saved_;
};

// eval_loss and the task's metrics, sorted by key (std::map), as the legacy scripts wrote them.
std::map<std::string, double> MetricsOf(const TaskEval& eval) {
  std::map<std::string, double> metrics(eval.metrics.begin(), eval.metrics.end());
  if (eval.loss.has_value()) metrics["eval_loss"] = *eval.loss;
  return metrics;
}

absl::Status WriteResultsText(const std::string& dir,
                              const std::map<std::string, double>& metrics) {
  std::string text;
  for (const auto& [key, value] : metrics) text += key + " = " + PyFloatRepr(value) + "\n";
  return WriteFileAtomically(dir + "/" + kCheckpointEvalResultsFile, text);
}

}  // namespace

absl::StatusOr<nlohmann::json> EvaluateAllCheckpoints(TrainingTask& task, EvalContext context,
                                                      const std::string& output_dir) {
  nlohmann::json merged = nlohmann::json::object();
  const WeightsSnapshot snapshot(task.model());
  for (const auto& [step, dir] : CheckpointWriter::List(output_dir)) {
    RETURN_IF_ERROR(LoadModelWeights(dir, &task.model()));
    context.output_dir = dir;
    ASSIGN_OR_RETURN(const TaskEval eval, task.Evaluate(context));
    const std::map<std::string, double> metrics = MetricsOf(eval);
    RETURN_IF_ERROR(WriteResultsText(dir, metrics));
    for (const auto& [key, value] : metrics) merged[key + "_" + std::to_string(step)] = value;
  }
  return merged;
}

}  // namespace lmtrain
