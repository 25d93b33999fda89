// The job file's training.optim_args (HF's optim_args) and training.include_num_input_tokens_seen:
// how they are read and written back, and the check that needs training.optim. Private to
// common/ (job_spec.cc and job_spec_fields.cc).
#pragma once

#include "common/internal/yaml_reader.h"
#include "common/job_spec.h"

namespace lmtrain::internal {

// training.optim_args: HF's string of key=value pairs separated by commas (spaces ignored, as
// its _parse_optim_args: "momentum=0.9, nesterov=True") or a mapping of the same keys. Numbers
// must parse whole; booleans are true/false, 1/0 or yes/no in any case. Unknown keys, repeated
// keys and a pair without '=' are reported with the key. Written back as a mapping of the set
// keys (an empty mapping when none is).
Field<TrainingSpec> OptimArgsField();

// training.include_num_input_tokens_seen: "all", "non_padding" or "no", or a boolean (true is
// "all", false "no", as TrainingArguments.__post_init__). Written back as the string.
Field<TrainingSpec> IncludeNumInputTokensSeenField();

// Each optim_args key must be one that HF's Trainer passes to training.optim's optimizer:
// sgd momentum, dampening, nesterov; adagrad lr_decay, eps; rmsprop momentum, alpha, eps,
// centered; the AdamW names and adafactor take none (weight_decay is refused as it is read:
// training.weight_decay sets it). nesterov needs momentum > 0 and dampening 0, as torch's SGD.
void CheckOptimArgs(YamlReader& r, const TrainingSpec& t);

}  // namespace lmtrain::internal
