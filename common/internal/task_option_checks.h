// Job-file checks of training keys that only some tasks (or devices) can use: cuda_graphs
// (clm and mlm steps on one GPU), tf32 (a GPU) and label_smoothing_factor (the cross-entropy
// of language models and single-label classification). Problems are reported at the key's line.
// Private to common/.
#pragma once

#include "common/internal/yaml_reader.h"
#include "common/job_spec.h"

namespace lmtrain::internal {

// training.cuda_graphs: what a captured update can hold, refused here rather than at step 1.
void CheckCudaGraphs(YamlReader& r, const ParseOptions& options, const JobSpec& spec);

// training.tf32: true needs a GPU, as HF's TrainingArguments raises without one: refused with
// device cpu (or use_cpu), and under lm-server without resources.gpus_per_worker. Call after
// the device checks (use_cpu has set device).
void CheckTf32(YamlReader& r, const ParseOptions& options, const JobSpec& spec);

// training.auto_find_batch_size trains one process: refused with resources for several
// (call after the resource checks)
// (workers × slots_per_worker > 1), where one rank's smaller batch would leave the others
// waiting in an all-reduce.
void CheckAutoFindBatchSize(YamlReader& r, const JobSpec& spec);

// training.bf16_full_eval / fp16_full_eval: at most one, and fp16 needs a GPU (refused with
// device cpu or use_cpu, and under lm-server without resources.gpus_per_worker). Call after
// the device checks.
void CheckFullEval(YamlReader& r, const ParseOptions& options, const JobSpec& spec);

// data.keep_linebreaks is run_clm.py's: refused for the other tasks (run_mlm.py reads text
// files without line breaks; the others read tables).
void CheckKeepLinebreaks(YamlReader& r, const JobSpec& spec);

// training.label_smoothing_factor > 0: refused for qa (HF's Trainer smooths only a model given
// `labels`; answer spans are start and end positions, so the key would change nothing there)
// and for GLUE's stsb (a regression: there are no classes to smooth over). A regression or
// multi-label classification found in the data is refused when lm-train reads it.
void CheckLabelSmoothing(YamlReader& r, const JobSpec& spec);

}  // namespace lmtrain::internal
