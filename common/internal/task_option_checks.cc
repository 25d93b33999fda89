#include "common/internal/task_option_checks.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace lmtrain::internal {

void CheckCudaGraphs(YamlReader& r, const ParseOptions& options, const JobSpec& spec) {
  const TrainingSpec& t = spec.training;
  if (!t.cuda_graphs || r.HasProblem("training.cuda_graphs")) return;
  const auto refuse = [&](absl::string_view why) {
    r.ReportAt("training.cuda_graphs", absl::StrCat("training.cuda_graphs ", why));
  };
  if (spec.task != "clm" && spec.task != "mlm") {
    refuse(absl::StrCat("captures clm and mlm steps only (task is ", spec.task, ")"));
  } else if (t.device == "cpu" || (options.scheduled && spec.resources.gpus_per_worker <= 0)) {
    refuse("needs a GPU (resources.gpus_per_worker > 0, training.device auto or cuda)");
  } else if (t.fp16) {
    refuse("captures bf16 or fp32 steps (fp16's loss scaling decides on the host to skip one)");
  } else if (t.gradient_accumulation_steps != 1) {
    refuse("needs gradient_accumulation_steps 1 (one batch per captured update)");
  } else if (t.gradient_checkpointing) {
    refuse("cannot capture gradient_checkpointing (it saves and restores RNG states)");
  } else if (t.optim.rfind("adamw", 0) != 0) {
    refuse(absl::StrCat("needs an AdamW optim (adamw_torch); ", t.optim, " is not captured"));
  } else if (spec.resources.workers * std::max(spec.resources.gpus_per_worker, 1) > 1) {
    refuse("trains one process (workers: 1 and at most one GPU)");
  }
}

void CheckTf32(YamlReader& r, const ParseOptions& options, const JobSpec& spec) {
  const TrainingSpec& t = spec.training;
  if (!t.tf32.value_or(false) || r.HasProblem("training.tf32") || r.HasProblem("training.device")) {
    return;
  }
  if (t.device == "cpu") {
    r.ReportAt("training.tf32",
               absl::StrCat("training.tf32 needs a CUDA GPU (Ampere or newer): training.",
                            r.Seen("training.use_cpu") ? "use_cpu is true" : "device is cpu"));
  } else if (options.scheduled && spec.resources.gpus_per_worker <= 0) {
    r.ReportAt("training.tf32",
               "training.tf32 needs a CUDA GPU (Ampere or newer): set "
               "resources.gpus_per_worker > 0");
  }
}

void CheckAutoFindBatchSize(YamlReader& r, const JobSpec& spec) {
  const ResourcesSpec& res = spec.resources;
  const int64_t ranks = static_cast<int64_t>(res.workers) * res.slots_per_worker;
  if (!spec.training.auto_find_batch_size || ranks <= 1 ||
      r.HasProblem("training.auto_find_batch_size")) {
    return;
  }
  r.ReportAt("training.auto_find_batch_size",
             absl::StrCat("training.auto_find_batch_size trains one process (this job has ", ranks,
                          ": resources.workers × slots_per_worker); set "
                          "per_device_train_batch_size for data-parallel jobs"));
}

void CheckFullEval(YamlReader& r, const ParseOptions& options, const JobSpec& spec) {
  const TrainingSpec& t = spec.training;
  if (r.HasProblem("training.bf16_full_eval") || r.HasProblem("training.fp16_full_eval") ||
      !t.fp16_full_eval) {
    return;
  }
  if (t.bf16_full_eval) {
    r.ReportAt("training.fp16_full_eval",
               "training: set at most one of bf16_full_eval and fp16_full_eval");
  } else if (t.device == "cpu") {
    r.ReportAt("training.fp16_full_eval",
               absl::StrCat("training.fp16_full_eval needs a GPU: training.",
                            r.Seen("training.use_cpu") ? "use_cpu is true" : "device is cpu",
                            " (bf16_full_eval runs on the CPU)"));
  } else if (options.scheduled && spec.resources.gpus_per_worker <= 0) {
    r.ReportAt("training.fp16_full_eval",
               "training.fp16_full_eval needs a GPU: set resources.gpus_per_worker > 0 (or use "
               "bf16_full_eval)");
  }
}

void CheckKeepLinebreaks(YamlReader& r, const JobSpec& spec) {
  if (!spec.data.keep_linebreaks.has_value() || spec.task == "clm" ||
      r.HasProblem("data.keep_linebreaks")) {
    return;
  }
  r.ReportAt(
      "data.keep_linebreaks",
      absl::StrCat("data.keep_linebreaks is run_clm.py's (task clm); task ", spec.task,
                   spec.task == "mlm" ? " reads text lines without their breaks, as run_mlm.py"
                                      : " reads tables",
                   " (leave it out)"));
}

void CheckLabelSmoothing(YamlReader& r, const JobSpec& spec) {
  const TrainingSpec& t = spec.training;
  if (t.label_smoothing_factor <= 0 || r.HasProblem("training.label_smoothing_factor")) return;
  const auto refuse = [&](absl::string_view why) {
    r.ReportAt("training.label_smoothing_factor",
               absl::StrCat("training.label_smoothing_factor ", why));
  };
  if (spec.task == "qa") {
    refuse(
        "smooths class labels; qa trains on answer start and end positions, which HF's Trainer "
        "does not smooth (leave it out)");
  } else if (spec.task == "glue" && spec.data.task_name == "stsb") {
    refuse("smooths class labels; GLUE stsb is a regression (leave it out)");
  }
}

}  // namespace lmtrain::internal
