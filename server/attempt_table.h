// AttemptTable: the attempts lm-server is running, one per job that holds workers. An attempt is
// one placement of a job on a gang of workers: ranks = workers x slots_per_worker lm-train
// processes, each on one worker (or on none: an orphan after a server restart that no worker
// has claimed yet). A rank holds its slot, and its GPUs, until it has ended (`exit`).
//
// It answers the per-worker questions the Dispatcher asks (slots and GPUs held, jobs running,
// whether a rank a worker names is current) from an index of the ranks on each worker, so that
// they cost O(ranks on that worker), not O(ranks of every attempt). It holds no policy: the
// Dispatcher decides when attempts start, stop and end. Ranks change worker and end only
// through AssignRank and EndRank, which keep the index; the other fields of an Attempt are the
// caller's to change.
//
// Thread-compatible: the Dispatcher's mutex guards it.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "server/attempt_outcome.h"
#include "storage/job_store.h"

namespace lmtrain {

// One lm-train process of an attempt, as a worker names it. `gpus` (not part of its identity):
// the GPU indices the worker started it with, so that a server that restarted learns which
// GPUs its re-attached (or stale) ranks hold.
struct RankRef {
  std::string job_id;
  int rank = 0;
  int attempt = 0;
  std::vector<int> gpus;
  bool operator<(const RankRef& o) const {
    return std::tie(job_id, rank, attempt) < std::tie(o.job_id, o.rank, o.attempt);
  }
};

struct AttemptRank {
  std::string worker_id;  // "" while an orphan nobody has claimed.
  int local_rank = 0;
  bool delivered = false;  // Acknowledged by the worker (listed running or reported).
  bool started = false;
  std::optional<RankExit> exit;
  std::vector<int> gpus;  // Indices on its worker; held until `exit`.
  bool holds(const std::string& worker) const { return worker_id == worker && !exit.has_value(); }
};

struct Attempt {
  // As of placement (or recovery). Its job file (spec_yaml) is what an assignment carries, and
  // is dropped once no rank will be sent again (MarkDelivered); a recovered attempt never sends
  // one (its ranks are re-attached, or lost), and keeps neither job file, metrics nor
  // checkpoints.
  JobRecord job;
  int attempt = 0;
  std::vector<std::string> gang;  // Worker per gang member (rank / slots_per_worker).
  std::vector<AttemptRank> ranks;
  std::string master_addr;
  int master_port = 0;
  bool cancel = false;
  std::string cancel_reason;
  bool preempt = false;
  std::string preempt_reason;
  std::optional<int> first_failed;
  int64_t orphan_deadline_ms = 0;  // > 0: recovered after a restart, not all claimed.
  bool stopping() const { return cancel || preempt || first_failed.has_value(); }
  bool all_ended() const;
  // The worker acknowledged the rank. Once every rank is acknowledged or has ended, none is
  // sent again: the job file is released.
  void MarkDelivered(int rank);
};

class AttemptTable {
 public:
  using Map = std::map<std::string, Attempt>;  // By job id; references stay valid.

  AttemptTable() = default;
  AttemptTable(const AttemptTable&) = delete;
  AttemptTable& operator=(const AttemptTable&) = delete;

  // A fresh attempt for the job (replaces any other of the same job); set its job before
  // assigning ranks.
  Attempt& Create(const std::string& job_id);
  // nullptr when the job has no attempt.
  Attempt* Find(const std::string& job_id);
  void Erase(const std::string& job_id);

  // Puts a rank of `a` (a.job.id's attempt) on `worker`; it holds a slot there until EndRank.
  void AssignRank(Attempt& a, int rank, const std::string& worker);
  // The rank has ended: its slot and GPUs are free again.
  void EndRank(Attempt& a, int rank, RankExit exit);
  // (job id, rank) of each rank on `worker` that has not ended, sorted.
  using RankKeys = std::set<std::pair<std::string, int>>;
  const RankKeys& RanksOn(const std::string& worker) const;
  Map& all() { return attempts_; }
  const Map& all() const { return attempts_; }

  // The attempt `ref` names when it is the job's current one and `ref.rank` is in range;
  // nullptr otherwise.
  Attempt* Current(const RankRef& ref);

  // What the ranks that have not ended hold on a worker: one slot each, and their GPUs.
  struct Usage {
    int slots = 0;
    std::set<int> gpus;
  };
  // On one worker: O(its ranks).
  Usage UsageOn(const std::string& worker) const;
  // On every worker that holds any, in one walk over the ranks.
  absl::flat_hash_map<std::string, Usage> UsageByWorker() const;
  // Jobs with a rank on `worker` that has not ended, sorted.
  std::vector<std::string> JobsOn(const std::string& worker) const;

 private:
  // Drops one rank, or every rank, of `a` from the index (no-op for ranks not in it).
  void Unindex(const Attempt& a, int rank);
  void Unindex(const Attempt& a);

  Map attempts_;
  absl::flat_hash_map<std::string, RankKeys> on_worker_;  // Ranks that have not ended.
};

}  // namespace lmtrain
