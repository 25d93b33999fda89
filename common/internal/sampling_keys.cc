#include "common/internal/sampling_keys.h"

#include "absl/strings/str_cat.h"

namespace lmtrain::internal {

void CheckSamplingKeys(YamlReader& r, TrainingSpec& t) {
  constexpr const char* kStrategy = "training.train_sampling_strategy";
  if (r.HasProblem(kStrategy) || r.HasProblem("training.group_by_length")) return;
  if (t.train_sampling_strategy == "batch_rebalance") {
    r.ReportAt(kStrategy,
               "training.train_sampling_strategy batch_rebalance (HF's BatchRebalanceSampler, "
               "micro-batches of varying size) is not implemented; group_by_length also cuts "
               "padding");
    return;
  }
  if (t.group_by_length && r.Seen(kStrategy) && t.train_sampling_strategy != "group_by_length") {
    r.ReportAt("training.group_by_length",
               absl::StrCat("training.group_by_length: true conflicts with ", kStrategy, " ",
                            t.train_sampling_strategy,
                            " (group_by_length is transformers 4's name for "
                            "train_sampling_strategy: group_by_length; set one of them)"));
    return;
  }
  if (t.group_by_length) t.train_sampling_strategy = "group_by_length";
  t.group_by_length = t.train_sampling_strategy == "group_by_length";
}

}  // namespace lmtrain::internal
