#include "worker/trainer_base/training_plan.h"

#include <cmath>
#include <string>

#include "common/status_macros.h"
#include "worker/trainer_base/batch_order.h"

namespace lmtrain {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

absl::Status CheckSpec(const TrainingSpec& t, int64_t num_train_examples) {
  auto positive = [](const char* name, double value) -> absl::Status {
    if (value > 0) return absl::OkStatus();
    return absl::InvalidArgumentError(std::string("training.") + name + " must be > 0 (got " +
                                      std::to_string(value) + ")");
  };
  RETURN_IF_ERROR(positive("per_device_train_batch_size", t.per_device_train_batch_size));
  RETURN_IF_ERROR(positive("gradient_accumulation_steps", t.gradient_accumulation_steps));
  RETURN_IF_ERROR(positive("logging_steps", static_cast<double>(t.logging_steps)));
  RETURN_IF_ERROR(positive("learning_rate", t.learning_rate));
  if (t.logging_strategy != "no" && t.logging_strategy != "steps" &&
      t.logging_strategy != "epoch") {
    return absl::InvalidArgumentError(
        "training.logging_strategy must be no, steps or epoch (got '" + t.logging_strategy + "')");
  }
  if (t.max_steps <= 0) RETURN_IF_ERROR(positive("num_train_epochs", t.num_train_epochs));
  if (num_train_examples <= 0) {
    return absl::InvalidArgumentError("no training examples");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TrainingPlan> PlanTraining(const TrainingSpec& t, int64_t num_train_examples) {
  RETURN_IF_ERROR(CheckSpec(t, num_train_examples));
  TrainingPlan plan;
  plan.batches_per_epoch =
      NumBatches(num_train_examples, t.per_device_train_batch_size, t.dataloader_drop_last);
  if (plan.batches_per_epoch == 0) {
    return absl::InvalidArgumentError(
        "training.dataloader_drop_last leaves no training batch: " +
        std::to_string(num_train_examples) + " training examples do not fill one batch of " +
        std::to_string(t.per_device_train_batch_size) +
        " examples (per_device_train_batch_size × data-parallel ranks)");
  }
  plan.steps_per_epoch = CeilDiv(plan.batches_per_epoch, t.gradient_accumulation_steps);
  plan.max_steps = t.max_steps > 0
                       ? t.max_steps
                       : static_cast<int64_t>(std::ceil(t.num_train_epochs *
                                                        static_cast<double>(plan.steps_per_epoch)));
  plan.num_train_epochs = CeilDiv(plan.max_steps, plan.steps_per_epoch);
  plan.logging_strategy = t.logging_strategy;
  // HF's TrainerState.compute_steps: a fraction is that share of the updates, rounded up.
  const auto steps = [&](int64_t count, const std::optional<double>& ratio) {
    if (!ratio.has_value()) return count;
    return static_cast<int64_t>(std::ceil(static_cast<double>(plan.max_steps) * *ratio));
  };
  plan.logging_steps = steps(t.logging_steps, t.logging_steps_ratio);
  plan.logging_first_step = t.logging_first_step;
  plan.eval_steps = t.eval_steps_ratio.has_value() || t.eval_steps > 0
                        ? steps(t.eval_steps, t.eval_steps_ratio)
                        : plan.logging_steps;
  plan.save_steps = steps(t.save_steps, t.save_steps_ratio);
  ASSIGN_OR_RETURN(plan.schedule.type, ParseLrScheduleType(t.lr_scheduler_type));
  plan.schedule.base_lr = t.learning_rate;
  plan.schedule.total_steps = plan.max_steps;
  plan.schedule.warmup_steps = ResolveWarmupSteps(t.warmup_steps, t.warmup_ratio, plan.max_steps);
  const LrSchedulerKwargs& kwargs = t.lr_scheduler_kwargs;
  plan.schedule.num_cycles = kwargs.num_cycles;
  if (kwargs.lr_end) plan.schedule.lr_end = *kwargs.lr_end;
  if (kwargs.power) plan.schedule.power = *kwargs.power;
  if (kwargs.timescale) plan.schedule.timescale = *kwargs.timescale;
  if (kwargs.min_lr_rate) plan.schedule.min_lr_rate = *kwargs.min_lr_rate;
  if (kwargs.min_lr && (plan.schedule.type == LrScheduleType::kCosineWithMinLr ||
                        plan.schedule.type == LrScheduleType::kCosineWarmupWithMinLr)) {
    plan.schedule.min_lr_rate = *kwargs.min_lr / t.learning_rate;  // HF: min_lr / lr.
  }
  plan.schedule.warmup_lr_rate = kwargs.warmup_lr_rate;
  if (kwargs.num_decay_steps) plan.schedule.num_decay_steps = *kwargs.num_decay_steps;
  plan.schedule.num_stable_steps = kwargs.num_stable_steps;
  if (kwargs.warmup_type)
    plan.schedule.warmup_type = ParseWsdShape(*kwargs.warmup_type).value_or(WsdShape::kLinear);
  if (kwargs.decay_type)
    plan.schedule.decay_type = ParseWsdShape(*kwargs.decay_type).value_or(WsdShape::kCosine);
  if (kwargs.min_lr_ratio) plan.schedule.min_lr_ratio = *kwargs.min_lr_ratio;
  if (plan.schedule.type == LrScheduleType::kPolynomial &&
      !(plan.schedule.lr_end < plan.schedule.base_lr)) {
    return absl::InvalidArgumentError(
        "training.lr_scheduler_kwargs.lr_end (" + std::to_string(plan.schedule.lr_end) +
        ") must be smaller than training.learning_rate (" + std::to_string(t.learning_rate) + ")");
  }
  return plan;
}

int64_t DataSeedOf(const TrainingSpec& training) {
  return training.data_seed.value_or(training.seed);
}

std::string SamplingStrategyOf(const TrainingSpec& training) {
  return training.group_by_length ? "group_by_length" : training.train_sampling_strategy;
}

TrainOrder TrainOrderFor(const TrainingSpec& training, int64_t global_batch,
                         const std::function<std::vector<int64_t>()>& lengths) {
  TrainOrder order;
  order.seed = static_cast<uint64_t>(DataSeedOf(training));
  const std::string strategy = SamplingStrategyOf(training);
  order.sequential = strategy == "sequential";
  order.drop_last = training.dataloader_drop_last;
  if (strategy == "group_by_length") {
    order.lengths = lengths();
    order.group_size = global_batch * training.gradient_accumulation_steps;
  }
  return order;
}

bool LogDue(const TrainingPlan& plan, int64_t step, bool epoch_end) {
  if (step == 1 && plan.logging_first_step) return true;
  if (plan.logging_strategy == "steps") return IsDue(step, plan.logging_steps);
  return plan.logging_strategy == "epoch" && epoch_end;
}

bool IsDue(int64_t step, int64_t every) { return every > 0 && step % every == 0; }

namespace {

// Python's f"{n:,}".
std::string WithThousands(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(i, ",");
  return (n < 0 ? "-" : "") + digits;
}

}  // namespace

std::string RunningTrainingBanner(const TrainingPlan& plan, int64_t num_examples,
                                  int64_t per_device_batch, int64_t world_size,
                                  int64_t accumulation, int64_t trainable_parameters) {
  return "***** Running training *****\n"
         "  Num examples = " +
         WithThousands(num_examples) + "\n" +
         "  Num Epochs = " + WithThousands(plan.num_train_epochs) + "\n" +
         "  Num update steps per epoch = " + WithThousands(plan.steps_per_epoch) + "\n" +
         "  Instantaneous batch size per device = " + WithThousands(per_device_batch) + "\n" +
         "  Total train batch size (w. parallel, distributed & accumulation) = " +
         WithThousands(per_device_batch * world_size * accumulation) + "\n" +
         "  Gradient Accumulation steps = " + std::to_string(accumulation) + "\n" +
         "  Total optimization steps = " + WithThousands(plan.max_steps) + "\n" +
         "  Number of trainable parameters = " + WithThousands(trainable_parameters);
}

}  // namespace lmtrain
