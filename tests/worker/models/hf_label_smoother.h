// HF transformers' LabelSmoother (trainer_pt_utils.py, transformers 5.17), transcribed op for op
// with LibTorch: the reference the models' label-smoothed losses are checked against.
#pragma once

#include <torch/torch.h>

namespace lmtrain::testing {

// logits [..., C], labels [...] int64 with -100 ignored; `shift_labels` as the Trainer passes for
// causal LMs (position t predicts label t + 1). The mean over the non-ignored targets, as the
// Trainer computes it without num_items_in_batch.
inline torch::Tensor HfLabelSmoothedLoss(torch::Tensor logits, torch::Tensor labels, double epsilon,
                                         bool shift_labels) {
  if (shift_labels) {
    logits = logits.narrow(-2, 0, logits.size(-2) - 1).contiguous();
    labels = labels.narrow(-1, 1, labels.size(-1) - 1).contiguous();
  }
  torch::Tensor log_probs = -torch::log_softmax(logits, -1);
  if (labels.dim() == log_probs.dim() - 1) labels = labels.unsqueeze(-1);
  torch::Tensor padding_mask = labels.eq(-100);
  labels = torch::clamp(labels, 0);
  torch::Tensor nll_loss = log_probs.gather(-1, labels);
  torch::Tensor smoothed_loss = log_probs.sum(-1, /*keepdim=*/true, torch::kFloat32);
  nll_loss.masked_fill_(padding_mask, 0.0);
  smoothed_loss.masked_fill_(padding_mask, 0.0);
  torch::Tensor active = padding_mask.numel() - padding_mask.to(torch::kLong).sum();
  nll_loss = nll_loss.sum() / active;
  smoothed_loss = smoothed_loss.sum() / (active * log_probs.size(-1));
  return (1 - epsilon) * nll_loss + epsilon * smoothed_loss;
}

}  // namespace lmtrain::testing
