// Evaluation loss of a causal LM over a fixed example set.
//
// eval_loss follows HF Trainer.evaluate(): each batch's mean token loss, averaged over
// batches weighted by the batch's number of examples (HF repeats each batch loss
// batch_size times and takes the mean). For group_texts blocks (all the same length) this
// is exactly the mean cross-entropy over all predicted tokens.
// Runs in eval() mode (dropout off) under NoGradGuard, and restores the model's previous
// train/eval mode. Not thread-safe: uses the model exclusively.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "text/clm/text_dataset.h"
#include "worker/models/pretrained_model.h"
#include "worker/trainer/autocast_guard.h"

namespace lmtrain {

struct EvalOptions {
  int64_t batch_size = 8;  // > 0: per_device_eval_batch_size.
  bool drop_last = false;  // Leave out a short last batch (dataloader_drop_last).
  int32_t pad_id = 0;      // For line_by_line examples of unequal length.
  AutocastSpec autocast;   // The forward passes' autocast (autocast_guard.h).
  // Checked between batches; when set, evaluation stops with Cancelled. May be null.
  const std::atomic<bool>* stop_requested = nullptr;
};

struct EvalResult {
  double loss = 0;          // HF's eval_loss (see above).
  int64_t num_samples = 0;  // Examples evaluated.
  int64_t num_batches = 0;
};

// Preconditions: `examples` non-empty. Errors: Cancelled (stop requested), Internal for
// LibTorch errors (with the batch number and input shape).
absl::StatusOr<EvalResult> EvaluateLoss(CausalLmModel& model, const std::vector<TokenIds>& examples,
                                        const EvalOptions& options);

}  // namespace lmtrain
