#include "worker/trainer/optimizer_factory.h"

#include <set>
#include <utility>

#include "common/status_macros.h"
#include "worker/optim/adafactor.h"
#include "worker/optim/fused_adamw.h"

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

std::unique_ptr<torch::optim::AdamW> MakeAdamW(const WeightDecayGroups& groups,
                                               const TrainingSpec& training) {
  std::vector<torch::optim::OptimizerParamGroup> param_groups;
  auto add = [&](const std::vector<torch::Tensor>& params, double weight_decay) {
    if (params.empty()) return;
    param_groups.emplace_back(
        params, std::make_unique<torch::optim::AdamWOptions>(GroupOptions(training, weight_decay)));
  };
  add(groups.decay, training.weight_decay);
  add(groups.no_decay, 0.0);
  return std::make_unique<FusedAdamW>(std::move(param_groups), GroupOptions(training, 0.0));
}

absl::StatusOr<std::unique_ptr<torch::optim::Optimizer>> MakeOptimizer(
    const WeightDecayGroups& groups, const TrainingSpec& training) {
  const std::string& name = training.optim;
  if (name == "adamw_torch" || name == "adamw_hf" || name == "adamw") {
    return std::unique_ptr<torch::optim::Optimizer>(MakeAdamW(groups, training));
  }
  if (name == "adafactor") {
    std::vector<torch::optim::OptimizerParamGroup> param_groups;
    auto add = [&](const std::vector<torch::Tensor>& params, double weight_decay) {
      if (params.empty()) return;
      AdafactorOptions options = HfTrainerAdafactorOptions(training.learning_rate);
      options.weight_decay(weight_decay);
      param_groups.emplace_back(params, std::make_unique<AdafactorOptions>(options));
    };
    add(groups.decay, training.weight_decay);
    add(groups.no_decay, 0.0);
    ASSIGN_OR_RETURN(std::unique_ptr<Adafactor> adafactor,
                     Adafactor::Create(std::move(param_groups),
                                       HfTrainerAdafactorOptions(training.learning_rate)));
    return std::unique_ptr<torch::optim::Optimizer>(std::move(adafactor));
  }
  return absl::InvalidArgumentError("training.optim '" + name +
                                    "' is not available (use adamw_torch or adafactor)");
}

void SetLearningRate(torch::optim::Optimizer* optimizer, double lr) {
  for (auto& group : optimizer->param_groups()) group.options().set_lr(lr);
}

}  // namespace lmtrain
