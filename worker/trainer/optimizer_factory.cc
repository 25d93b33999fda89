#include "worker/trainer/optimizer_factory.h"

#include <functional>
#include <map>
#include <set>
#include <utility>

#include "common/status_macros.h"
#include "worker/optim/adafactor.h"
#include "worker/optim/fused_adamw.h"
#include "worker/trainer/layerwise_lr_decay.h"

namespace lmtrain {
namespace {

bool IsLayerNorm(const torch::nn::Module& module) {
  return dynamic_cast<const torch::nn::LayerNormImpl*>(&module) != nullptr ||
         module.name().find("LayerNorm") != std::string::npos;
}

std::string Join(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

torch::optim::AdamWOptions GroupOptions(const TrainingSpec& t, double weight_decay) {
  return torch::optim::AdamWOptions(t.learning_rate)
      .betas({t.adam_beta1, t.adam_beta2})
      .eps(t.adam_epsilon)
      .weight_decay(weight_decay);
}

// `params` split by their lr scale (all 1 when `scales` is empty), largest first.
void AddGroups(const std::vector<torch::Tensor>& params, const std::vector<double>& scales,
               double weight_decay, std::vector<ParamGroupPlan>* plans) {
  std::map<double, ParamGroupPlan, std::greater<double>> by_scale;
  for (size_t i = 0; i < params.size(); ++i) {
    ParamGroupPlan& plan = by_scale[scales.empty() ? 1.0 : scales[i]];
    plan.params.push_back(params[i]);
  }
  for (auto& [scale, plan] : by_scale) {
    plan.weight_decay = weight_decay;
    plan.lr_scale = scale;
    plans->push_back(std::move(plan));
  }
}

// torch's SGD / Adagrad / RMSprop over PlanParamGroups, as HF's Trainer builds them: lr and
// the group's weight decay per group, optim_args for the rest (torch's defaults where unset).
torch::optim::SGDOptions SgdOptions(const TrainingSpec& t, double lr, double weight_decay) {
  const OptimArgs& a = t.optim_args;
  return torch::optim::SGDOptions(lr)
      .momentum(a.momentum.value_or(0))
      .dampening(a.dampening.value_or(0))
      .nesterov(a.nesterov.value_or(false))
      .weight_decay(weight_decay);
}

torch::optim::AdagradOptions AdagradOptions(const TrainingSpec& t, double lr, double weight_decay) {
  const OptimArgs& a = t.optim_args;
  return torch::optim::AdagradOptions(lr)
      .lr_decay(a.lr_decay.value_or(0))
      .eps(a.eps.value_or(1e-10))
      .weight_decay(weight_decay);
}

torch::optim::RMSpropOptions RmspropOptions(const TrainingSpec& t, double lr, double weight_decay) {
  const OptimArgs& a = t.optim_args;
  return torch::optim::RMSpropOptions(lr)
      .momentum(a.momentum.value_or(0))
      .alpha(a.alpha.value_or(0.99))
      .eps(a.eps.value_or(1e-8))
      .centered(a.centered.value_or(false))
      .weight_decay(weight_decay);
}

template <typename Optimizer, typename OptionsFn>
std::unique_ptr<torch::optim::Optimizer> MakeTorchOptimizer(const WeightDecayGroups& groups,
                                                            const TrainingSpec& training,
                                                            OptionsFn options_for) {
  std::vector<torch::optim::OptimizerParamGroup> param_groups;
  for (const ParamGroupPlan& plan : PlanParamGroups(groups, training)) {
    param_groups.emplace_back(
        plan.params, std::make_unique<decltype(options_for(training, 0.0, 0.0))>(options_for(
                         training, training.learning_rate * plan.lr_scale, plan.weight_decay)));
  }
  return std::make_unique<Optimizer>(std::move(param_groups),
                                     options_for(training, training.learning_rate, 0.0));
}

}  // namespace

WeightDecayGroups SplitWeightDecayGroups(const torch::nn::Module& model) {
  WeightDecayGroups groups;
  std::set<const void*> seen;  // Tied parameters are listed under each owner.
  auto visit = [&](const std::string& prefix, const torch::nn::Module& module) {
    const bool layer_norm = IsLayerNorm(module);
    for (const auto& item : module.named_parameters(/*recurse=*/false)) {
      const torch::Tensor& p = item.value();
      if (!p.requires_grad() || !seen.insert(p.unsafeGetTensorImpl()).second) continue;
      const std::string name = Join(prefix, item.key());
      const bool no_decay = layer_norm || name.find("bias") != std::string::npos;
      (no_decay ? groups.no_decay_names : groups.decay_names).push_back(name);
      (no_decay ? groups.no_decay : groups.decay).push_back(p);
    }
  };
  visit("", model);
  for (const auto& item : model.named_modules("", /*include_self=*/false)) {
    visit(item.key(), *item.value());
  }
  return groups;
}

absl::Status ApplyLayerwiseLrDecay(double decay, WeightDecayGroups* groups) {
  ASSIGN_OR_RETURN(groups->decay_lr_scales, LayerwiseLrScales(groups->decay_names, decay));
  ASSIGN_OR_RETURN(groups->no_decay_lr_scales, LayerwiseLrScales(groups->no_decay_names, decay));
  return absl::OkStatus();
}

std::vector<ParamGroupPlan> PlanParamGroups(const WeightDecayGroups& groups,
                                            const TrainingSpec& training) {
  std::vector<ParamGroupPlan> plans;
  AddGroups(groups.decay, groups.decay_lr_scales, training.weight_decay, &plans);
  AddGroups(groups.no_decay, groups.no_decay_lr_scales, 0.0, &plans);
  return plans;
}

std::unique_ptr<torch::optim::AdamW> MakeAdamW(const WeightDecayGroups& groups,
                                               const TrainingSpec& training) {
  std::vector<torch::optim::OptimizerParamGroup> param_groups;
  for (const ParamGroupPlan& plan : PlanParamGroups(groups, training)) {
    auto options =
        std::make_unique<torch::optim::AdamWOptions>(GroupOptions(training, plan.weight_decay));
    options->lr(training.learning_rate * plan.lr_scale);
    param_groups.emplace_back(plan.params, std::move(options));
  }
  return std::make_unique<FusedAdamW>(std::move(param_groups), GroupOptions(training, 0.0));
}

absl::StatusOr<std::unique_ptr<torch::optim::Optimizer>> MakeOptimizer(
    const WeightDecayGroups& groups, const TrainingSpec& training) {
  const std::string& name = training.optim;
  if (name == "adamw_torch" || name == "adamw_torch_fused" || name == "adamw_hf" ||
      name == "adamw") {
    return std::unique_ptr<torch::optim::Optimizer>(MakeAdamW(groups, training));
  }
  if (name == "adafactor") {
    std::vector<torch::optim::OptimizerParamGroup> param_groups;
    for (const ParamGroupPlan& plan : PlanParamGroups(groups, training)) {
      AdafactorOptions options = HfTrainerAdafactorOptions(training.learning_rate * plan.lr_scale);
      options.weight_decay(plan.weight_decay);
      param_groups.emplace_back(plan.params, std::make_unique<AdafactorOptions>(options));
    }
    ASSIGN_OR_RETURN(std::unique_ptr<Adafactor> adafactor,
                     Adafactor::Create(std::move(param_groups),
                                       HfTrainerAdafactorOptions(training.learning_rate)));
    return std::unique_ptr<torch::optim::Optimizer>(std::move(adafactor));
  }
  if (name == "sgd") {
    return MakeTorchOptimizer<torch::optim::SGD>(groups, training, SgdOptions);
  }
  if (name == "adagrad") {
    return MakeTorchOptimizer<torch::optim::Adagrad>(groups, training, AdagradOptions);
  }
  if (name == "rmsprop") {
    return MakeTorchOptimizer<torch::optim::RMSprop>(groups, training, RmspropOptions);
  }
  return absl::InvalidArgumentError(
      "training.optim '" + name +
      "' is not available (use adamw_torch, adamw_torch_fused, adafactor, sgd, adagrad or "
      "rmsprop)");
}

void SetLearningRate(torch::optim::Optimizer* optimizer, double lr,
                     const std::vector<double>& group_lr_scales) {
  std::vector<torch::optim::OptimizerParamGroup>& groups = optimizer->param_groups();
  for (size_t g = 0; g < groups.size(); ++g) {
    groups[g].options().set_lr(g < group_lr_scales.size() ? lr * group_lr_scales[g] : lr);
  }
}

}  // namespace lmtrain
