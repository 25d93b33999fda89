#include "server/attempt_outcome.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace lmtrain {
namespace {

constexpr int kTrainerJobError = 1;        // lm-train: the job itself is bad.
constexpr int kTrainerOutOfDiskSpace = 4;  // lm-train: a checkpoint save filled the disk.

bool AllSucceeded(const AttemptFacts& facts) {
  return !facts.ranks.empty() &&
         std::all_of(facts.ranks.begin(), facts.ranks.end(),
                     [](const RankExit& r) { return !r.lost && r.exit_code == 0; });
}

AttemptOutcome Failed(const AttemptFacts& facts, const RankExit& exit, int rank) {
  AttemptOutcome out;
  out.state = JobState::kFailed;
  const std::string what = DescribeRankExit(exit);
  out.exit_code = exit.exit_code;
  const bool gang = facts.ranks.size() > 1;
  const std::string where = gang ? absl::StrCat("rank ", rank, ": ") : "";
  if (!IsRetryableExit(exit)) {
    out.reason = absl::StrCat(where, what);
    out.attempt_outcome = absl::StrCat("failed: ", where, what);
  } else {
    out.reason = absl::StrCat(where, what, "; giving up after ", facts.retries_used,
                              " retries (max_retries ", facts.max_retries, ")");
    out.attempt_outcome = absl::StrCat("failed: ", where, what);
  }
  out.error = exit.error.empty() ? out.reason : absl::StrCat(where, exit.error);
  return out;
}

AttemptOutcome Retry(const AttemptFacts& facts, const RankExit& exit, int rank) {
  AttemptOutcome out;
  out.state = JobState::kRetrying;
  const std::string where = facts.ranks.size() > 1 ? absl::StrCat("rank ", rank, ": ") : "";
  const std::string what = absl::StrCat(where, DescribeRankExit(exit));
  out.exit_code = exit.exit_code;
  if (!facts.ever_started) {
    out.reason = absl::StrCat(what, " before lm-train started; placing it again");
    out.attempt_outcome = absl::StrCat("lost before start: ", what);
    return out;
  }
  out.counts_as_retry = true;
  out.reason = absl::StrCat(what, "; retry ", facts.retries_used + 1, " of ", facts.max_retries,
                            " from the latest checkpoint");
  out.attempt_outcome = absl::StrCat("retrying: ", what);
  return out;
}

}  // namespace

std::string DescribeRankExit(const RankExit& exit) {
  if (exit.lost) return exit.error.empty() ? "worker lost" : exit.error;
  if (exit.signal != 0) return absl::StrCat("lm-train killed by signal ", exit.signal);
  return absl::StrCat("lm-train exited with code ", exit.exit_code,
                      exit.exit_code == kTrainerOutOfDiskSpace ? " (out of disk space)" : "");
}

bool IsRetryableExit(const RankExit& exit) {
  if (exit.lost || exit.signal != 0) return true;
  return exit.exit_code != 0 && exit.exit_code != kTrainerJobError;
}

AttemptOutcome DecideAttemptOutcome(const AttemptFacts& facts) {
  if (AllSucceeded(facts)) {
    AttemptOutcome out;
    out.state = JobState::kSucceeded;
    out.exit_code = 0;
    out.reason = "lm-train exited with code 0";
    out.attempt_outcome = "succeeded";
    return out;
  }
  if (facts.cancel_requested) {
    AttemptOutcome out;
    out.state = JobState::kCancelled;
    out.reason = facts.cancel_reason.empty() ? "cancelled by user" : facts.cancel_reason;
    out.attempt_outcome = "cancelled";
    return out;
  }
  if (facts.first_failed.has_value()) {
    const int rank = *facts.first_failed;
    const RankExit& exit = facts.ranks.at(rank);
    if (!IsRetryableExit(exit)) return Failed(facts, exit, rank);
    if (!facts.ever_started || facts.retries_used < facts.max_retries) {
      return Retry(facts, exit, rank);
    }
    return Failed(facts, exit, rank);
  }
  if (facts.preempt_requested) {
    AttemptOutcome out;
    out.state = JobState::kPreempted;
    out.reason = facts.preempt_reason.empty() ? "preempted" : facts.preempt_reason;
    out.attempt_outcome = out.reason;
    return out;
  }
  // Every rank was stopped by us without a reason on record (e.g. a stale gang member): the
  // server's own doing, so the job is placed again without using one of its retries.
  AttemptOutcome out;
  out.state = JobState::kRetrying;
  out.reason = "attempt stopped by the server without a failure; placing it again";
  out.attempt_outcome = "stopped by the server";
  return out;
}

}  // namespace lmtrain
