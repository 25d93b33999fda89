// AdamW with HF Trainer's two parameter groups.
//
// HF rule (Trainer.create_optimizer): every trainable parameter decays, except the
// parameters of LayerNorm modules and any parameter whose full name contains "bias".
// A module counts as LayerNorm when it is a torch::nn::LayerNormImpl or its name() (the
// class name LibTorch records) contains "LayerNorm" — so a model's own LayerNorm module
// class is recognised too.
// Thread-safe: pure functions; the optimizer returned is not (the training loop owns it).
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/job_spec.h"

namespace lmtrain {

struct WeightDecayGroups {
  std::vector<std::string> decay_names;  // Full dotted names, in module order.
  std::vector<torch::Tensor> decay;
  std::vector<std::string> no_decay_names;
  std::vector<torch::Tensor> no_decay;
};

// Splits `model`'s trainable parameters (requires_grad) by the HF rule. Each parameter
// appears once (under its first name).
WeightDecayGroups SplitWeightDecayGroups(const torch::nn::Module& model);

// AdamW (as FusedAdamW, worker/optim: torch::optim::AdamW's update and state in one pass per
// parameter) over the two groups: training.weight_decay for `decay`, 0 for `no_decay`;
// lr = training.learning_rate, betas (adam_beta1, adam_beta2), eps adam_epsilon. Empty groups
// are left out.
std::unique_ptr<torch::optim::AdamW> MakeAdamW(const WeightDecayGroups& groups,
                                               const TrainingSpec& training);

// The optimizer training.optim names over the two groups: adamw_torch / adamw_hf / adamw →
// MakeAdamW; adafactor → Adafactor with HF Trainer's settings (lr = learning_rate, no
// relative step, no parameter scaling; the decay group gets weight_decay).
// InvalidArgument for another name.
absl::StatusOr<std::unique_ptr<torch::optim::Optimizer>> MakeOptimizer(
    const WeightDecayGroups& groups, const TrainingSpec& training);

// Sets every param group's learning rate (the schedule drives it each step).
void SetLearningRate(torch::optim::Optimizer* optimizer, double lr);

}  // namespace lmtrain
