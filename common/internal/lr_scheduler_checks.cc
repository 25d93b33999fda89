#include "common/internal/lr_scheduler_checks.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"

namespace lmtrain::internal {
namespace {

// The kwargs HF's schedule functions cannot do without: the cosine-with-floor schedules take
// exactly one of min_lr and min_lr_rate, warmup_stable_decay its num_decay_steps.
void CheckScheduleNeeds(YamlReader& r, const TrainingSpec& t) {
  const LrSchedulerKwargs& k = t.lr_scheduler_kwargs;
  const std::string& type = t.lr_scheduler_type;
  const std::string path = "training.lr_scheduler_kwargs";
  if (type == "cosine_with_min_lr" || type == "cosine_warmup_with_min_lr") {
    if (k.min_lr.has_value() && k.min_lr_rate.has_value()) {
      r.ReportAt(path + ".min_lr_rate",
                 "training.lr_scheduler_kwargs: only one of min_lr and "
                 "min_lr_rate may be set (HF's " +
                     type + ")");
    } else if (!k.min_lr.has_value() && !k.min_lr_rate.has_value()) {
      r.ReportAt("training.lr_scheduler_type",
                 "lr_scheduler_type " + type +
                     " needs lr_scheduler_kwargs min_lr (the final learning rate) or "
                     "min_lr_rate (its share of learning_rate), as HF's");
    }
  }
  if (type == "warmup_stable_decay" && !k.num_decay_steps.has_value()) {
    r.ReportAt("training.lr_scheduler_type",
               "lr_scheduler_type warmup_stable_decay needs lr_scheduler_kwargs num_decay_steps "
               "(the decay's length), as HF's");
  }
}

}  // namespace

// Each lr_scheduler_kwargs key must be one the schedule takes (HF passes them to the schedule's
// function, which refuses others); polynomial decays from learning_rate down to lr_end.
void CheckLrSchedulerKwargs(YamlReader& r, const TrainingSpec& t) {
  if (r.HasProblem("training.lr_scheduler_type")) return;
  const LrSchedulerKwargs& k = t.lr_scheduler_kwargs;
  const std::string& type = t.lr_scheduler_type;
  const struct {
    const char* key;
    bool set;
    std::vector<std::string_view> types;
  } keys[] = {
      {"lr_end", k.lr_end.has_value(), {"polynomial"}},
      {"power", k.power.has_value(), {"polynomial"}},
      {"num_cycles",
       k.num_cycles.has_value(),
       {"cosine", "cosine_with_restarts", "cosine_with_min_lr", "cosine_warmup_with_min_lr",
        "warmup_stable_decay"}},
      {"timescale", k.timescale.has_value(), {"inverse_sqrt"}},
      {"mode", k.mode.has_value(), {"reduce_lr_on_plateau"}},
      {"factor", k.factor.has_value(), {"reduce_lr_on_plateau"}},
      {"patience", k.patience.has_value(), {"reduce_lr_on_plateau"}},
      {"threshold", k.threshold.has_value(), {"reduce_lr_on_plateau"}},
      {"threshold_mode", k.threshold_mode.has_value(), {"reduce_lr_on_plateau"}},
      {"cooldown", k.cooldown.has_value(), {"reduce_lr_on_plateau"}},
      {"min_lr",
       k.min_lr.has_value(),
       {"reduce_lr_on_plateau", "cosine_with_min_lr", "cosine_warmup_with_min_lr"}},
      {"eps", k.eps.has_value(), {"reduce_lr_on_plateau"}},
      {"min_lr_rate",
       k.min_lr_rate.has_value(),
       {"cosine_with_min_lr", "cosine_warmup_with_min_lr"}},
      {"warmup_lr_rate", k.warmup_lr_rate.has_value(), {"cosine_warmup_with_min_lr"}},
      {"num_decay_steps", k.num_decay_steps.has_value(), {"warmup_stable_decay"}},
      {"num_stable_steps", k.num_stable_steps.has_value(), {"warmup_stable_decay"}},
      {"warmup_type", k.warmup_type.has_value(), {"warmup_stable_decay"}},
      {"decay_type", k.decay_type.has_value(), {"warmup_stable_decay"}},
      {"min_lr_ratio", k.min_lr_ratio.has_value(), {"warmup_stable_decay"}},
  };
  for (const auto& key : keys) {
    const std::string path = absl::StrCat("training.lr_scheduler_kwargs.", key.key);
    if (!key.set || std::find(key.types.begin(), key.types.end(), type) != key.types.end()) {
      continue;
    }
    r.ReportAt(path, absl::StrCat(path, " applies to lr_scheduler_type ", JoinNames(key.types),
                                  ", not to '", type, "'"));
  }
  CheckScheduleNeeds(r, t);
  const double lr_end = k.lr_end.value_or(1e-7);
  if (type == "polynomial" && !(lr_end < t.learning_rate) &&
      !r.HasProblem("training.learning_rate") &&
      !r.HasProblem("training.lr_scheduler_kwargs.lr_end")) {
    r.ReportAt(k.lr_end ? "training.lr_scheduler_kwargs.lr_end" : "training.learning_rate",
               absl::StrCat("training.lr_scheduler_kwargs.lr_end (", FormatDouble(lr_end),
                            ") must be smaller than training.learning_rate (",
                            FormatDouble(t.learning_rate), ")"));
  }
}

}  // namespace lmtrain::internal
