// TrainingArguments keys that lmtrain reads without acting on them, so that a job file made
// from HF's arguments (a run script's flags, TrainingArguments.to_dict()) is accepted rather
// than refused key by key as unknown. Private to common/ (job_spec_fields.cc).
//
// Two kinds, each with the reason docs/hf-options.md gives:
// - ignored: any value is accepted with a warning at its line saying that the key has no effect
//   and why (dataloader_num_workers, disable_tqdm, ddp_find_unused_parameters, ...);
// - off only: the value that turns the feature off (false, null, an empty string, list or
//   mapping, or a mapping whose every value is one of those) is accepted without a word; any
//   other value is an error at its line saying the feature is not available and why
//   (torch_compile: true, push_to_hub: true, fsdp: full_shard, deepspeed: ds.json, ...).
// save_safetensors (transformers 4) is accepted only as true (lmtrain always writes them).
// None is written back.
#pragma once

#include <string_view>
#include <vector>

#include "common/internal/yaml_reader.h"
#include "common/job_spec.h"

namespace lmtrain::internal {

// The rows of both kinds, for training's table.
std::vector<Field<TrainingSpec>> HfIgnoredTrainingFields();

}  // namespace lmtrain::internal
