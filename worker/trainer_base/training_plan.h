// How many updates a run makes and when it logs, evaluates and saves: HF Trainer's
// arithmetic on TrainingSpec. Torch-free.
// Thread-safe: pure functions over values.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/job_spec.h"
#include "worker/trainer_base/batch_order.h"
#include "worker/trainer_base/lr_schedule.h"

namespace lmtrain {

struct TrainingPlan {
  // ceil(examples / per_device_train_batch_size), floor with dataloader_drop_last.
  int64_t batches_per_epoch = 0;
  // ceil(batches_per_epoch / gradient_accumulation_steps): an update never spans two
  // epochs; the last update of an epoch may accumulate fewer batches.
  int64_t steps_per_epoch = 0;
  int64_t max_steps = 0;         // max_steps if > 0, else ceil(num_train_epochs * steps_per_epoch)
  int64_t num_train_epochs = 0;  // ceil(max_steps / steps_per_epoch), as trainer_state.json
  std::string logging_strategy = "steps";  // no | steps | epoch
  int64_t logging_steps = 0;
  bool logging_first_step = false;
  int64_t eval_steps = 0;      // eval_steps, or logging_steps when 0
  int64_t save_steps = 0;      // 0: only at the end
  LrScheduleOptions schedule;  // base lr, warmup (steps or ratio) and total = max_steps
};

// Plans training on `num_train_examples` (> 0) examples. InvalidArgument for a spec that
// ParseJobSpec would reject (non-positive sizes, unknown scheduler), so that directly
// constructed specs fail cleanly too, and when dataloader_drop_last leaves no batch.
absl::StatusOr<TrainingPlan> PlanTraining(const TrainingSpec& training, int64_t num_train_examples);

// The seed of the training data's order: training.data_seed, else training.seed.
int64_t DataSeedOf(const TrainingSpec& training);

// The training data's order: train_sampling_strategy, or "group_by_length" when the
// transformers 4 flag is set (ParseJobSpec makes them agree; a directly built spec may not).
std::string SamplingStrategyOf(const TrainingSpec& training);

// How the training examples are ordered: DataSeedOf's seed, in order with
// train_sampling_strategy "sequential", or with group_by_length the examples' lengths (from
// `lengths`, called only then) grouped per update of `global_batch` ×
// gradient_accumulation_steps examples, as HF's LengthGroupedSampler; and whether an epoch's
// short last batch is left out (dataloader_drop_last).
TrainOrder TrainOrderFor(const TrainingSpec& training, int64_t global_batch,
                         const std::function<std::vector<int64_t>()>& lengths);

// Whether the training loss is logged after update `step` (>= 1), HF's DefaultFlowCallback:
// step 1 with logging_first_step; every logging_steps with strategy "steps"; the update that
// ends an epoch (`epoch_end`) with "epoch"; never otherwise ("no").
bool LogDue(const TrainingPlan& plan, int64_t step, bool epoch_end);

// Whether `step` (>= 1) is a multiple of `every` (> 0); false when every <= 0.
bool IsDue(int64_t step, int64_t every);

// HF's "***** Running training *****" block (Trainer._inner_training_loop's log lines), one line
// each without a newline after the last, numbers with thousands separators as Python's f"{n:,}":
// the examples, epochs, updates per epoch, per-device batch, total batch (per device × processes ×
// accumulation), accumulation, total updates and trainable parameters.
std::string RunningTrainingBanner(const TrainingPlan& plan, int64_t num_examples,
                                  int64_t per_device_batch, int64_t world_size,
                                  int64_t accumulation, int64_t trainable_parameters);

}  // namespace lmtrain
