// HF's bf16_full_eval / fp16_full_eval: evaluations and predictions outside training (the
// final evaluation, an evaluation-only job, do_predict) run on the model cast to bfloat16 or
// float16, not under autocast. The float32 weights are kept aside and put back afterwards, so
// the model written after them is the trained one, bit for bit.
// Thread safety: not thread-safe; used by the thread that owns the model.
#pragma once

#include <torch/torch.h>

#include <optional>
#include <vector>

#include "common/job_spec.h"

namespace lmtrain {

// The dtype that training.bf16_full_eval / fp16_full_eval ask for; nullopt for neither.
std::optional<torch::ScalarType> FullEvalDtype(const TrainingSpec& training);

// Casts `module`'s floating-point parameters and buffers to `dtype` for its lifetime; the
// destructor casts them back to float32 and restores the values they had.
class ScopedFullEvalCast {
 public:
  ScopedFullEvalCast(torch::nn::Module& module, torch::ScalarType dtype);
  ~ScopedFullEvalCast();
  ScopedFullEvalCast(const ScopedFullEvalCast&) = delete;
  ScopedFullEvalCast& operator=(const ScopedFullEvalCast&) = delete;

 private:
  torch::nn::Module& module_;
  std::vector<torch::Tensor> saved_;  // Clones of the floating tensors, in Floating() order.
};

}  // namespace lmtrain
