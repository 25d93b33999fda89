#include "worker/trainer_base/distributed_env.h"

#include <cstdlib>
#include <limits>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace lmtrain {
namespace {

using GetEnv = std::function<const char*(const char*)>;

// The integer in `name`, within [min, max]; `fallback` when unset (nullopt: required).
absl::StatusOr<int64_t> IntVar(const GetEnv& getenv, const char* name, int64_t min, int64_t max,
                               std::optional<int64_t> fallback) {
  const char* text = getenv(name);
  if (text == nullptr || *text == '\0') {
    if (fallback.has_value()) return *fallback;
    return absl::InvalidArgumentError(
        absl::StrCat("distributed training: environment variable ", name,
                     " is not set (lm-worker sets RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT)"));
  }
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value) || value < min || value > max) {
    return absl::InvalidArgumentError(absl::StrCat("distributed training: environment variable ",
                                                   name, "=\"", text, "\" must be an integer in [",
                                                   min, ", ", max, "]"));
  }
  return value;
}

}  // namespace

absl::StatusOr<DistributedEnv> ReadDistributedEnv(const GetEnv& getenv) {
  constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
  DistributedEnv env;
  ASSIGN_OR_RETURN(const int64_t world, IntVar(getenv, "WORLD_SIZE", 1, kMaxInt, 1));
  env.world_size = static_cast<int>(world);
  if (!env.distributed()) return env;
  ASSIGN_OR_RETURN(const int64_t rank, IntVar(getenv, "RANK", 0, world - 1, std::nullopt));
  ASSIGN_OR_RETURN(const int64_t local_rank, IntVar(getenv, "LOCAL_RANK", 0, kMaxInt, 0));
  ASSIGN_OR_RETURN(const int64_t port, IntVar(getenv, "MASTER_PORT", 1, 65535, std::nullopt));
  ASSIGN_OR_RETURN(const int64_t timeout_s, IntVar(getenv, "LMTRAIN_DIST_TIMEOUT_S", 1, 86400, 60));
  ASSIGN_OR_RETURN(const int64_t phase_s,
                   IntVar(getenv, "LMTRAIN_DIST_PHASE_TIMEOUT_S", 1, 7 * 86400, 1800));
  const char* addr = getenv("MASTER_ADDR");
  if (addr == nullptr || *addr == '\0') {
    return absl::InvalidArgumentError(
        "distributed training: environment variable MASTER_ADDR is not set (rank 0's host)");
  }
  env.rank = static_cast<int>(rank);
  env.local_rank = static_cast<int>(local_rank);
  env.master_addr = addr;
  env.master_port = static_cast<int>(port);
  env.timeout = std::chrono::seconds(timeout_s);
  env.phase_timeout = std::chrono::seconds(phase_s);
  return env;
}

absl::StatusOr<DistributedEnv> ReadDistributedEnvFromProcess() {
  return ReadDistributedEnv([](const char* name) { return std::getenv(name); });
}

}  // namespace lmtrain
