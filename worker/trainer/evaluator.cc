#include "worker/trainer/evaluator.h"

#include <string>

#include "common/status_macros.h"
#include "worker/trainer/autocast_guard.h"
#include "worker/trainer/batch_collator.h"
#include "worker/trainer/torch_errors.h"
#include "worker/trainer_base/batch_order.h"

namespace lmtrain {
namespace {

// Restores a module's train/eval mode on scope exit.
class ModeRestorer {
 public:
  explicit ModeRestorer(torch::nn::Module& module)
      : module_(module), was_training_(module.is_training()) {}
  ~ModeRestorer() { module_.train(was_training_); }
  ModeRestorer(const ModeRestorer&) = delete;
  ModeRestorer& operator=(const ModeRestorer&) = delete;

 private:
  torch::nn::Module& module_;
  const bool was_training_;
};

double BatchLoss(CausalLmModel& model, const Batch& batch, const AutocastSpec& spec) {
  AutocastGuard autocast(spec);
  return model.ForwardLoss(batch.input_ids, batch.attention_mask, batch.labels).item<double>();
}

}  // namespace

absl::StatusOr<EvalResult> EvaluateLoss(CausalLmModel& model, const std::vector<TokenIds>& examples,
                                        const EvalOptions& options) {
  ModeRestorer restore(model);
  torch::NoGradGuard no_grad;
  model.eval();
  EvalResult result;
  double weighted_sum = 0;
  std::string shape;
  ASSIGN_OR_RETURN(const std::vector<BatchIndices> batches,
                   EvaluationBatches(static_cast<int64_t>(examples.size()), options.batch_size,
                                     options.drop_last));
  for (const BatchIndices& indices : batches) {
    if (options.stop_requested != nullptr && options.stop_requested->load()) {
      return absl::CancelledError("evaluation stopped");
    }
    absl::Status status = CatchTorchErrors(
        [&] {
          const Batch batch = CollateBatch(examples, indices, options.pad_id);
          shape = ShapeString(batch.input_ids);
          weighted_sum += BatchLoss(model, batch, options.autocast) * batch.num_examples;
          return absl::OkStatus();
        },
        [&] {
          return "evaluation batch " + std::to_string(result.num_batches) + " (input_ids " + shape +
                 ")";
        });
    if (!status.ok()) return status;
    result.num_samples += static_cast<int64_t>(indices.size());
    ++result.num_batches;
  }
  result.loss = weighted_sum / static_cast<double>(result.num_samples);
  return result;
}

}  // namespace lmtrain
