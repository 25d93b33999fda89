// Job-file checks of the keys that use metric_for_best_model across keys: load_best_model_at_end
// (with the evaluation and save strategies it needs) and early stopping (each key's own range is
// checked by its row in job_spec_fields.cc). Private to common/.
#pragma once

#include "common/internal/yaml_reader.h"
#include "common/job_spec.h"

namespace lmtrain::internal {

// load_best_model_at_end needs evaluation_strategy steps or epoch, save_strategy equal to it
// (or best), and (steps) save_steps a multiple of eval_steps; save_strategy best needs
// evaluation_strategy steps or epoch; early_stopping_patience > 0 needs
// load_best_model_at_end; an early_stopping_threshold above 0 needs early_stopping_patience > 0.
// Problems are reported at the offending key's line. Call after the training section's own checks.
void CheckBestModelKeys(YamlReader& r, const TrainingSpec& t);

}  // namespace lmtrain::internal
