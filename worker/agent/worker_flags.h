// lm-worker's command line: its flags, their checks, and the WorkerAgent::Options, connection
// and GPU declaration they make. main() parses, creates the work folder, connects and runs the
// agent; this keeps the flags testable without doing any of that.
//
//   WorkerFlags flags;
//   CommandLine cl("lm-worker", "...");
//   AddWorkerFlags(&cl, &flags);
//   cl.Parse(...);  then  RETURN_IF_ERROR(FinishWorkerFlags(&flags));
//
// Not thread-safe: one parse on main's thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/command_line.h"
#include "proto/client_channel.h"
#include "worker/agent/worker_agent.h"

namespace lmtrain {

struct WorkerFlags {
  WorkerFlags();  // Defaults: 1 slot, ./lm-worker, lm-train beside us, $LMTRAIN_WORKER_TOKEN.

  // Set by FinishWorkerFlags from the raw values below (options.artifacts stays null: main
  // owns the cache). work_dir is absolute.
  WorkerAgent::Options options;
  ClientChannelOptions connection;  // --server, --token and the TLS files.
  // --gpus: unset for auto (NVML discovery), else the declared indices (empty for none).
  std::optional<std::vector<int>> declared_gpus;
  int64_t cache_max_bytes = 0;  // --artifact-cache-max-bytes (0: no limit).

  // Raw values that FinishWorkerFlags checks and converts.
  std::string work_dir = "./lm-worker";
  std::string trainer;
  std::string name;
  std::string labels;  // k=v,...
  std::string advertise;
  std::string ports = "29500-29599";
  std::string gpus = "auto";
  int64_t slots = 1;
  double kill_grace_s = 10;
};

// Adds every lm-worker flag to `cl`, each writing into `flags` (which must outlive `cl`'s Parse).
void AddWorkerFlags(CommandLine* cl, WorkerFlags* flags);

// After a successful Parse: checks the values and fills flags->options and declared_gpus.
// InvalidArgument naming the flag otherwise.
absl::Status FinishWorkerFlags(WorkerFlags* flags);

}  // namespace lmtrain
