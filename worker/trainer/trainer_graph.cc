// The Trainer with training.cuda_graphs: whether the job can capture its updates, and one
// update through CudaGraphStep (cuda_graph_step.h).
#include <string>
#include <vector>

#include "worker/trainer/autocast_guard.h"
#include "worker/trainer/optimizer_factory.h"
#include "worker/trainer/trainer.h"  // The class these members belong to.

namespace lmtrain {

absl::Status Trainer::BuildGraphStep(const c10::Device& device) {
  const TrainingSpec& t = options_.training;
  if (!t.cuda_graphs) return absl::OkStatus();
  auto* adamw = dynamic_cast<FusedAdamW*>(optimizer_.get());
  std::string why;
  if (!device.is_cuda()) {
    why = "needs the model on a CUDA device (it is on " + device.str() + ")";
  } else if (!CudaGraphStep::Supported()) {
    why = "needs an lm-train built against LibTorch with CUDA";
  } else if (scaler_ != nullptr || t.gradient_accumulation_steps != 1 || t.gradient_checkpointing ||
             options_.group != nullptr) {
    why =
        "captures one bf16 or fp32 batch per update in one process, without gradient "
        "checkpointing";
  } else if (adamw == nullptr) {
    why = "needs an AdamW optim (adamw_torch)";
  }
  if (!why.empty()) return absl::FailedPreconditionError("training.cuda_graphs " + why);
  graph_step_ = std::make_unique<CudaGraphStep>(adamw, t.max_grad_norm);
  return absl::OkStatus();
}

void Trainer::GraphUpdate(const std::vector<BatchIndices>& micro_batches, StepStats* stats,
                          std::string* shape) {
  TORCH_CHECK(micro_batches.size() == 1, "cuda_graphs: ", micro_batches.size(),
              " micro-batches in one update");
  task_->model().train();
  const int64_t step = state_.global_step + 1;
  const BatchIndices share =
      RankShare(micro_batches[0], Rank(), options_.training.per_device_train_batch_size);
  const std::unique_ptr<PreparedBatch> batch = TakeBatch(step, 0, share);
  *shape = batch->shape;
  batch->Check();
  PrefetchAfter(step, 0, micro_batches);
  const std::vector<torch::Tensor*> slots = batch->GraphInputs();
  TORCH_CHECK(!slots.empty(), "cuda_graphs: this task's batches cannot be captured");
  std::vector<torch::Tensor> inputs;
  for (const torch::Tensor* slot : slots) inputs.push_back(*slot);
  SetLearningRate(optimizer_.get(), CurrentLearningRate(), group_lr_scales_);
  // Called for the eager warm-up updates and the capture: the batch then reads the graph's
  // device buffers.
  const auto loss_of = [&](const std::vector<torch::Tensor>& device_inputs) {
    for (size_t i = 0; i < slots.size(); ++i) *slots[i] = device_inputs[i];
    AutocastGuard autocast(autocast_);
    return task_->TrainLossOf(*batch).loss;
  };
  const CudaGraphStep::Result result = graph_step_->Run(inputs, loss_of);
  stats->loss = result.loss;
  stats->grad_norm = result.grad_norm;
  stats->tokens = batch->num_tokens;
  stats->positions = batch->num_positions;
  stats->samples = batch->num_examples;
}

}  // namespace lmtrain
