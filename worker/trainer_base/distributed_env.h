// Where this lm-train process sits in a data-parallel job: lm-worker starts each of a job's
// `resources.workers` ranks with RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT
// (PyTorch's env:// convention), plus optionally LMTRAIN_DIST_TIMEOUT_S and
// LMTRAIN_DIST_PHASE_TIMEOUT_S. Torch-free.
// Thread-safe: pure functions over values.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "absl/status/statusor.h"

namespace lmtrain {

struct DistributedEnv {
  int rank = 0;             // RANK, in [0, world_size).
  int world_size = 1;       // WORLD_SIZE; 1: a single process, nothing else is read.
  int local_rank = 0;       // LOCAL_RANK (default 0): the rank's index on its machine.
  std::string master_addr;  // MASTER_ADDR: where rank 0 hosts the rendezvous store.
  int master_port = 0;      // MASTER_PORT, in [1, 65535].
  // LMTRAIN_DIST_TIMEOUT_S (default 60): how long rendezvous and each collective of the
  // training loop may wait for a peer before the job fails as retryable.
  std::chrono::milliseconds timeout{60000};
  // LMTRAIN_DIST_PHASE_TIMEOUT_S (default 1800): how long ranks wait for each other around
  // work that only some do or that takes uneven time: loading data, rank 0's evaluation,
  // checkpoint and tokenizer writing. A peer that dies is noticed at once either way.
  std::chrono::milliseconds phase_timeout{1800000};

  bool distributed() const { return world_size > 1; }
  bool is_root() const { return rank == 0; }
};

// Reads the variables through `getenv` (returns null for an unset name). WORLD_SIZE unset
// or "1": a single process (RANK etc. are ignored). Otherwise RANK, MASTER_ADDR and
// MASTER_PORT are required. InvalidArgument naming the variable and its value for a
// missing, non-numeric or out-of-range one.
absl::StatusOr<DistributedEnv> ReadDistributedEnv(
    const std::function<const char*(const char*)>& getenv);

// ReadDistributedEnv over the process environment.
absl::StatusOr<DistributedEnv> ReadDistributedEnvFromProcess();

}  // namespace lmtrain
