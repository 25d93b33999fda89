// HF Trainer's gradient clipping (training.max_grad_norm), applied once per optimizer update
// after the gradients of every micro-batch are accumulated (and reduced across ranks, and
// unscaled under fp16). Thread-safe as far as the tensors are: the training loop owns them.
#pragma once

#include <torch/torch.h>

#include <vector>

namespace lmtrain {

// Scales the gradients of `params` (those without a gradient are skipped) so that their global
// L2 norm is at most `max_grad_norm`, as torch.nn.utils.clip_grad_norm_; gradients already
// within the limit are left untouched. max_grad_norm <= 0 disables clipping (HF's
// max_grad_norm: 0). Returns the global norm before clipping (logged as grad_norm).
double ClipGradients(const std::vector<torch::Tensor>& params, double max_grad_norm);

}  // namespace lmtrain
