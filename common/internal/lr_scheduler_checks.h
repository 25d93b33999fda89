// Job-file checks of training.lr_scheduler_kwargs against training.lr_scheduler_type: each
// kwarg must be one the schedule takes (HF passes them to the schedule's function, which refuses
// others), the cosine-with-floor schedules take exactly one of min_lr and min_lr_rate,
// warmup_stable_decay needs num_decay_steps, and polynomial's lr_end must be below
// learning_rate. Private to common/.
#pragma once

#include "common/internal/yaml_reader.h"
#include "common/job_spec.h"

namespace lmtrain::internal {

// Problems are reported at the offending key's line; nothing when lr_scheduler_type itself was
// refused. Call after the training section is read.
void CheckLrSchedulerKwargs(YamlReader& r, const TrainingSpec& t);

}  // namespace lmtrain::internal
