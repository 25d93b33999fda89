// AdamW with HF Trainer's two parameter groups, each split further by learning rate under
// ELECTRA's layer-wise decay (training.layerwise_lr_decay, layerwise_lr_decay.h).
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
  // Learning-rate multipliers, parallel to decay / no_decay; empty: all 1.
  std::vector<double> decay_lr_scales;
  std::vector<double> no_decay_lr_scales;
};

// Splits `model`'s trainable parameters (requires_grad) by the HF rule. Each parameter
// appears once (under its first name).
WeightDecayGroups SplitWeightDecayGroups(const torch::nn::Module& model);

// Fills the groups' lr scales from their names by LayerwiseLrScales (errors as it gives).
absl::Status ApplyLayerwiseLrDecay(double decay, WeightDecayGroups* groups);

// One optimizer param group: its parameters, weight decay and learning-rate multiplier.
struct ParamGroupPlan {
  std::vector<torch::Tensor> params;
  double weight_decay = 0;
  double lr_scale = 1;
};

// The optimizer's param groups, in order: the decay parameters (training.weight_decay), then
// the no-decay ones (0), each split by lr scale, largest first; empty groups are left out.
// Without lr scales these are HF Trainer's two groups.
std::vector<ParamGroupPlan> PlanParamGroups(const WeightDecayGroups& groups,
                                            const TrainingSpec& training);

// AdamW (as FusedAdamW, worker/optim: torch::optim::AdamW's update and state in one pass per
// parameter) over PlanParamGroups: lr = training.learning_rate x the group's lr scale, betas
// (adam_beta1, adam_beta2), eps adam_epsilon.
std::unique_ptr<torch::optim::AdamW> MakeAdamW(const WeightDecayGroups& groups,
                                               const TrainingSpec& training);

// The optimizer training.optim names over PlanParamGroups: adamw_torch / adamw_torch_fused /
// adamw_hf / adamw → MakeAdamW; adafactor → Adafactor with HF Trainer's settings (lr =
// learning_rate, no relative step, no parameter scaling; the decay groups get weight_decay);
// sgd / adagrad / rmsprop → torch::optim's SGD / Adagrad / RMSprop as HF's Trainer makes torch's
// (lr and the group's weight_decay per group, training.optim_args' keys, torch's defaults
// otherwise). InvalidArgument for another name.
absl::StatusOr<std::unique_ptr<torch::optim::Optimizer>> MakeOptimizer(
    const WeightDecayGroups& groups, const TrainingSpec& training);

// Sets param group g's learning rate to lr x group_lr_scales[g], or every group's to lr when
// group_lr_scales is empty (the schedule drives it each step). group_lr_scales comes from
// PlanParamGroups (one per group, in its order).
void SetLearningRate(torch::optim::Optimizer* optimizer, double lr,
                     const std::vector<double>& group_lr_scales = {});

}  // namespace lmtrain
