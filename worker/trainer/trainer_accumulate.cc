// The Trainer's gradient accumulation: one update's micro-batches, built (or taken from the
// prefetch), weighted and backpropagated. See trainer.h.
#include <future>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/status_macros.h"
#include "worker/trainer/autocast_guard.h"
#include "worker/trainer/trainer.h"  // The class these members belong to.

namespace lmtrain {

absl::Status Trainer::AccumulateGradients(const std::vector<BatchIndices>& micro_batches,
                                          StepStats* stats, std::string* shape) {
  task_->model().train();
  optimizer_->zero_grad();
  const int64_t step = state_.global_step + 1;
  // This rank's micro-batches, all built first: their target counts weigh them.
  std::vector<std::unique_ptr<PreparedBatch>> batches(micro_batches.size());
  std::vector<double> weights(micro_batches.size(), 0.0);
  for (size_t i = 0; i < micro_batches.size(); ++i) {
    const BatchIndices share =
        RankShare(micro_batches[i], Rank(), options_.training.per_device_train_batch_size);
    if (share.empty()) continue;  // A short last batch: the group still sums zeros from here.
    batches[i] = TakeBatch(step, i, share);
    *shape = batches[i]->shape;
    batches[i]->Check();
    PrefetchAfter(step, i, micro_batches);
    // This rank's examples' part of the micro-batch mean (1 / micro-batches in one process).
    weights[i] =
        (static_cast<double>(share.size()) / static_cast<double>(micro_batches[i].size())) /
        static_cast<double>(micro_batches.size());
  }
  if (task_->LossAveragesTargets()) RETURN_IF_ERROR(WeighByTargets(batches, &weights));
  // The weighted losses summed where they are (float64), read once per step: on a GPU the host
  // queues every micro-batch without waiting for the device in between.
  torch::Tensor loss_sum;
  for (size_t i = 0; i < batches.size(); ++i) {
    if (batches[i] == nullptr) continue;  // No examples of this micro-batch here.
    if (weights[i] == 0) {  // Nothing to predict (by targets): a mean over nothing adds nothing.
      stats->tokens += batches[i]->num_tokens;  // Still trained on, as HF counts it.
      stats->positions += batches[i]->num_positions;
      stats->samples += batches[i]->num_examples;
      continue;
    }
    *shape = batches[i]->shape;
    TaskLoss loss;
    {
      AutocastGuard autocast(autocast_);  // Forward only, as HF.
      loss = task_->TrainLossOf(*batches[i]);
    }
    torch::Tensor weighted = loss.loss * weights[i];
    if (scaler_ != nullptr) weighted = scaler_->Scale(weighted);
    if (OverlapsGradientSync() && i + 1 == batches.size()) {
      // The last backward of the step: buckets start their all-reduce as gradients complete.
      const absl::Status armed = options_.group->BeginGradientSync(sync_params_);
      TORCH_CHECK(armed.ok(), std::string(armed.message()));
    }
    weighted.backward();
    torch::Tensor part = loss.loss.detach().to(torch::kDouble) * weights[i];
    loss_sum = loss_sum.defined() ? loss_sum + part : part;
    stats->tokens += loss.num_tokens;
    stats->positions += batches[i]->num_positions;
    stats->samples += loss.num_examples;
    batches[i].reset();
  }
  if (loss_sum.defined()) stats->loss += loss_sum.item<double>();
  return absl::OkStatus();
}

absl::Status Trainer::WeighByTargets(const std::vector<std::unique_ptr<PreparedBatch>>& batches,
                                     std::vector<double>* weights) const {
  double targets = 0;
  for (const auto& batch : batches) {
    if (batch != nullptr) targets += static_cast<double>(batch->loss_targets);
  }
  if (options_.group != nullptr) {
    ASSIGN_OR_RETURN(const std::vector<double> sums, options_.group->SumValues({targets}));
    targets = sums[0];
  }
  // Nothing to predict anywhere: the example weights keep the mean over nothing (NaN), which
  // stops the job as a non-finite loss, as one process's would.
  if (targets == 0) return absl::OkStatus();
  for (size_t i = 0; i < batches.size(); ++i) {
    (*weights)[i] =
        batches[i] == nullptr ? 0 : static_cast<double>(batches[i]->loss_targets) / targets;
  }
  return absl::OkStatus();
}

std::unique_ptr<PreparedBatch> Trainer::TakeBatch(int64_t step, size_t micro,
                                                  const BatchIndices& share) {
  if (prefetch_.has_value()) {
    Prefetch ahead = std::move(*prefetch_);
    prefetch_.reset();
    if (ahead.step == step && ahead.micro == micro) return ahead.batch.get();
    try {
      ahead.batch.get();  // Built for another position (training resumed elsewhere): dropped.
    } catch (const std::exception&) {
    }
  }
  return task_->PrepareTrainBatch(share, BatchSeed(step, micro));
}

void Trainer::PrefetchAfter(int64_t step, size_t micro,
                            const std::vector<BatchIndices>& micro_batches) {
  if (autocast_.device_type != c10::DeviceType::CUDA) return;  // On a CPU it would compete.
  const int64_t batch_size = options_.training.per_device_train_batch_size;
  BatchIndices next;
  if (micro + 1 < micro_batches.size()) {
    next = RankShare(micro_batches[micro + 1], Rank(), batch_size);
    ++micro;
  } else if (step < plan_.max_steps) {
    next = RankShare(cursor_->PeekFirst(), Rank(), batch_size);
    ++step;
    micro = 0;
  }
  if (next.empty()) return;
  const uint64_t seed = BatchSeed(step, micro);
  const TrainingTask* task = task_;
  prefetch_ = Prefetch{step, micro, std::async(std::launch::async, [task, next, seed] {
                         return task->PrepareTrainBatch(next, seed);
                       })};
}

bool Trainer::OverlapsGradientSync() const {
  // Reentrant gradient checkpointing accumulates a layer's gradients in a backward of its own.
  return options_.group != nullptr && !task_->model().GradientCheckpointing();
}

}  // namespace lmtrain
