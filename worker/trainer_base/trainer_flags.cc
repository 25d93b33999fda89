#include "worker/trainer_base/trainer_flags.h"

#include <limits>
#include <memory>

#include "common/command_line.h"

namespace lmtrain {
namespace {

// The flags, declared once on common/command_line.h's table-driven parser.
struct FlagValues {
  std::string output_dir;
  int64_t events_fd = -1;
  int64_t threads = 0;
  bool resume = false;
  bool auto_resume = false;
  bool overwrite_output_dir = false;
};

std::unique_ptr<CommandLine> MakeCommandLine(FlagValues* v) {
  auto cl = std::make_unique<CommandLine>(
      "lm-train JOB.yaml --output-dir DIR",
      "fine-tunes the model a job file describes (clm, mlm, qa, glue, classification)");
  cl->AddString("output-dir", &v->output_dir,
                "where checkpoints, the final model and results go (required)");
  cl->AddInt("events-fd", &v->events_fd,
             "write trainer events (JSON lines) to this open file descriptor; -1: none");
  cl->AddInt("threads", &v->threads, "torch threads; 0: the machine's cores");
  cl->AddBool("resume", &v->resume,
              "continue from the newest complete checkpoint-N in --output-dir");
  cl->AddBool("auto-resume", &v->auto_resume,
              "as --resume when --output-dir has a complete checkpoint, else start fresh "
              "(what lm-worker passes to a retried or preempted job's next attempt)");
  cl->AddBool("overwrite-output-dir", &v->overwrite_output_dir,
              "delete the checkpoint-N folders of an earlier run in --output-dir before training "
              "(training.overwrite_output_dir: true); without it, or --resume, such a folder is "
              "refused");
  return cl;
}

absl::Status CheckRange(const char* flag, int64_t value, int64_t min) {
  if (value >= min && value <= std::numeric_limits<int>::max()) return absl::OkStatus();
  return absl::InvalidArgumentError(std::string("bad value for ") + flag + ": " +
                                    std::to_string(value));
}

}  // namespace

absl::StatusOr<TrainerFlags> ParseTrainerFlags(const std::vector<std::string>& args) {
  FlagValues values;
  std::unique_ptr<CommandLine> cl = MakeCommandLine(&values);
  absl::StatusOr<std::vector<std::string>> positional = cl->Parse(args);
  TrainerFlags flags;
  if (IsHelpRequest(positional.status())) {
    flags.help = true;
    return flags;
  }
  if (!positional.ok()) return positional.status();
  if (positional->size() > 1) {
    return absl::InvalidArgumentError("unexpected argument '" + (*positional)[1] + "'");
  }
  if (positional->empty()) return absl::InvalidArgumentError("missing JOB.yaml");
  if (values.output_dir.empty()) return absl::InvalidArgumentError("missing --output-dir");
  if (values.events_fd != -1) {
    if (absl::Status s = CheckRange("--events-fd", values.events_fd, 0); !s.ok()) return s;
  }
  if (absl::Status s = CheckRange("--threads", values.threads, 0); !s.ok()) return s;
  flags.job_file = (*positional)[0];
  flags.output_dir = values.output_dir;
  flags.events_fd = static_cast<int>(values.events_fd);
  flags.threads = static_cast<int>(values.threads);
  flags.resume = values.resume;
  flags.auto_resume = values.auto_resume;
  flags.overwrite_output_dir = values.overwrite_output_dir;
  return flags;
}

std::string TrainerUsage() {
  FlagValues values;
  return MakeCommandLine(&values)->Usage();
}

}  // namespace lmtrain
