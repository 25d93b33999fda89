// A job file on disk (job.yaml): read, parse and normalise it in one place. lmctl (submit,
// validate), lmctl's artifact uploader and lm-train all load job files through LoadJobFile, so
// they report the same errors and resolve paths the same way; lm-server, which receives the
// text over gRPC, calls ParseJobSpec (common/job_spec.h) with the base folder the client sent.
//
// Loading a file:
//   1. reads it: NotFound "PATH: cannot open file: no such file", InvalidArgument "PATH: is a
//      folder, not a job file", PermissionDenied "PATH: cannot open file: REASON", InvalidArgument
//      "PATH: the job file is N bytes; at most M are read" (options.max_bytes), InvalidArgument
//      "PATH:LINE: the job file is not UTF-8 text (byte 0xNN at column C)";
//   2. parses it with ParseJobSpec, source name PATH as given, base folder the file's absolute,
//      lexically normal folder: every local path in the spec (model, tokenizer, data) comes back
//      absolute, resolved against that folder (artifact references stay as written);
//   3. runs every check that needs only the spec (ranges, choices, cross-key rules, the
//      CUDA-only options on a CPU device: training.fp16 with device cpu or use_cpu, and with
//      options.scheduled also without resources.gpus_per_worker), and, with
//      options.check_files, that the named files and folders exist. Parse errors are
//      InvalidArgument, one "PATH:LINE: key.path message" per line.
// Thread-safe: no state; reads the file system only.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/job_spec.h"

namespace lmtrain {

struct LoadJobFileOptions {
  // Require that the files and folders the spec names exist (ParseOptions::check_files).
  bool check_files = true;
  // The job will run under lm-server (ParseOptions::scheduled): CUDA-only options need
  // resources.gpus_per_worker > 0. false: lm-train alone decides from the GPUs it finds.
  bool scheduled = false;
  // Larger files are refused before they are read (a data file passed by mistake). Default
  // 16 MiB, above lm-server's --max-spec-bytes default, so that the server's own limit and
  // message apply to what it receives.
  int64_t max_bytes = int64_t{16} << 20;
};

// A loaded job file: what was read and what it means.
struct JobFile {
  std::string source_name;  // The path as given: the prefix of every error message.
  std::string base_dir;     // The file's folder, absolute and lexically normal.
  std::string text;         // The file's bytes as read (valid UTF-8).
  JobSpec spec;             // Parsed; local paths absolute (see step 2 above).
  // One "PATH:LINE: message" per deprecated or ignored HF key read (ParseJobSpec's warnings).
  std::vector<std::string> warnings;
};

// Reads, parses and checks the job file at `path` (steps 1-3 above).
absl::StatusOr<JobFile> LoadJobFile(const std::filesystem::path& path,
                                    const LoadJobFileOptions& options);

}  // namespace lmtrain
