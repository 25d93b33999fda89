#include "worker/trainer/full_eval_dtype.h"

namespace lmtrain {
namespace {

// The module's floating-point parameters and buffers, in a fixed order.
std::vector<torch::Tensor> Floating(torch::nn::Module& module) {
  std::vector<torch::Tensor> out;
  for (const torch::Tensor& t : module.parameters()) {
    if (t.is_floating_point()) out.push_back(t);
  }
  for (const torch::Tensor& t : module.buffers()) {
    if (t.is_floating_point()) out.push_back(t);
  }
  return out;
}

}  // namespace

std::optional<torch::ScalarType> FullEvalDtype(const TrainingSpec& training) {
  if (training.bf16_full_eval) return torch::kBFloat16;
  if (training.fp16_full_eval) return torch::kHalf;
  return std::nullopt;
}

ScopedFullEvalCast::ScopedFullEvalCast(torch::nn::Module& module, torch::ScalarType dtype)
    : module_(module) {
  torch::NoGradGuard no_grad;
  for (const torch::Tensor& t : Floating(module_)) saved_.push_back(t.detach().clone());
  module_.to(dtype);
}

ScopedFullEvalCast::~ScopedFullEvalCast() {
  torch::NoGradGuard no_grad;
  module_.to(torch::kFloat);
  const std::vector<torch::Tensor> tensors = Floating(module_);
  for (size_t i = 0; i < tensors.size() && i < saved_.size(); ++i) tensors[i].copy_(saved_[i]);
}

}  // namespace lmtrain
