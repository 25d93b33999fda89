// lm-train's command line:
//   lm-train JOB.yaml --output-dir DIR [--events-fd N] [--threads N] [--resume | --auto-resume]
//            [--overwrite-output-dir]
// Torch-free. Parsed by common/command_line.h ("--flag value", "--flag=value", --no-resume).
// Thread-safe: pure functions over values.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace lmtrain {

struct TrainerFlags {
  std::string job_file;      // Required positional argument.
  std::string output_dir;    // --output-dir, required.
  int events_fd = -1;        // --events-fd: where trainer events go; -1: nowhere.
  int threads = 0;           // --threads: torch intra-op threads; 0: the hardware's cores.
  bool resume = false;       // --resume: continue from the newest checkpoint in output_dir.
  bool auto_resume = false;  // --auto-resume: --resume if there is a checkpoint, else fresh.
  // --overwrite-output-dir: as training.overwrite_output_dir: true.
  bool overwrite_output_dir = false;
  bool help = false;         // --help / -h: print Usage() and exit 0.
};

// Parses argv[1..]. InvalidArgument naming the flag for unknown flags, missing values,
// non-numbers, a missing job file or output folder (unless --help).
absl::StatusOr<TrainerFlags> ParseTrainerFlags(const std::vector<std::string>& args);

// The usage text, one line per flag, from the same table.
std::string TrainerUsage();

}  // namespace lmtrain
