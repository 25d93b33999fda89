// Dispatcher, part 3: placement (a scheduler decision -> an attempt in the store and the
// table, woken into its workers' Syncs) and the ends of attempts (attempt_outcome.h -> store
// transitions, requeue).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "server/dispatcher.h"
#include "server/gpu_assignment.h"

namespace lmtrain {

absl::StatusOr<std::vector<std::vector<int>>> Dispatcher::PickGpusLocked(
    const JobResources& resources, const std::vector<std::string>& gang) {
  const int per_worker = resources.slots_per_worker;
  std::vector<std::vector<int>> ranks(gang.size() * per_worker);
  if (resources.gpus_per_worker <= 0) return ranks;
  const int per_rank = std::max(1, resources.gpus_per_worker / std::max(1, per_worker));
  for (size_t i = 0; i < gang.size(); ++i) {
    const WorkerRegistry::Worker& w = *workers_.Find(gang[i]);
    std::set<int> held = attempts_.UsageOn(gang[i]).gpus;
    held.insert(w.stale_gpus.begin(), w.stale_gpus.end());
    auto picked = PickGpus(CudaIndices(w.info), held, per_worker, per_rank);
    if (!picked.ok()) {
      return absl::ResourceExhaustedError(
          absl::StrCat("worker ", gang[i], ": ", picked.status().message()));
    }
    for (int r = 0; r < per_worker; ++r) ranks[i * per_worker + r] = (*picked)[r];
  }
  return ranks;
}

absl::Status Dispatcher::PlaceLocked(const std::string& job_id, const QueueEntry& q,
                                     const std::vector<std::string>& gang) {
  const JobResources& resources = q.resources;
  const int per_worker = resources.slots_per_worker;
  if (static_cast<int>(gang.size()) != resources.workers) {
    return absl::InternalError(
        absl::StrCat("scheduler gave ", gang.size(), " workers for ", resources.workers));
  }
  if (!q.attempts.has_value()) return absl::InternalError("placing a job of unknown attempts");
  for (const std::string& w : gang) {
    if (!workers_.Contains(w)) return absl::InternalError(absl::StrCat("unknown worker ", w));
  }
  const int world = resources.workers * per_worker;
  ASSIGN_OR_RETURN(std::vector<std::vector<int>> rank_gpus, PickGpusLocked(resources, gang));
  int port = 0;
  if (world > 1) {
    std::optional<int> taken = workers_.TakePort(gang[0]);
    if (!taken.has_value()) {
      return absl::ResourceExhaustedError(
          absl::StrCat("no free rendezvous port on worker ", gang[0]));
    }
    port = *taken;
  }
  const int attempt = static_cast<int>(q.attempts->size()) + 1;
  JobTransition t;
  t.to = JobState::kScheduled;
  t.time_ms = clock_->NowMs();
  t.reason = absl::StrCat(gang.size() == 1 ? "placed on worker " : "placed on workers ",
                          absl::StrJoin(gang, ", "), " (attempt ", attempt, ")");
  std::vector<std::string> pinned;
  for (int r = 0; r < world; ++r) {
    if (!rank_gpus[r].empty()) pinned.push_back(DescribeRankGpus(r, gang[r / per_worker], rank_gpus[r]));
  }
  if (!pinned.empty()) absl::StrAppend(&t.reason, ": ", absl::StrJoin(pinned, "; "));
  t.worker_id = gang[0];
  t.output_dir = absl::StrCat(options_.artifacts_dir, "/jobs/", job_id);
  std::vector<AttemptRecord> attempts = *q.attempts;
  attempts.push_back({attempt, gang, t.time_ms, 0, ""});
  if (resources.gpus_per_worker > 0) attempts.back().rank_gpus = rank_gpus;
  t.attempts = attempts;
  auto moved = store_->TransitionJob(job_id, t);
  if (!moved.ok()) {
    if (port > 0) workers_.ReleasePort(gang[0], port);
    if (absl::IsFailedPrecondition(moved.status())) return absl::OkStatus();  // Cancelled.
    return moved.status();
  }
  Attempt& a = attempts_.Create(job_id);
  a.job = *std::move(moved);
  a.attempt = attempt;
  a.gang = gang;
  a.ranks.resize(world);
  for (int r = 0; r < world; ++r) {
    attempts_.AssignRank(a, r, gang[r / per_worker]);
    a.ranks[r].local_rank = r % per_worker;
    a.ranks[r].gpus = rank_gpus[r];
  }
  a.master_addr = workers_.Find(gang[0])->info.advertise_address;
  a.master_port = port;
  waiting_.erase(job_id);
  for (const std::string& w : gang) workers_.Wake(w);  // Its parked Sync takes the assignment.
  hub_->Bump(job_id);
  return absl::OkStatus();
}

void Dispatcher::StopAttemptLocked(const std::string& job_id, Attempt& a) {
  if (!a.stopping()) return;
  scheduler_->MarkPreempting(job_id).IgnoreError();  // NotFound: not mirrored yet.
  for (size_t i = 0; i < a.ranks.size(); ++i) {
    const AttemptRank& r = a.ranks[i];
    if (r.exit.has_value() || r.worker_id.empty()) continue;
    if (r.delivered) {
      workers_.Wake(r.worker_id);  // Its parked Sync carries the stop.
      continue;
    }
    RankExit never;  // Its assignment was never acknowledged: withdraw it.
    never.exit_code = -1;
    never.stopped_by_us = true;
    never.error = "assignment withdrawn before start";
    attempts_.EndRank(a, static_cast<int>(i), std::move(never));
    TouchWorkerLocked(r.worker_id);
  }
}

void Dispatcher::FinishAttemptsLocked(const std::vector<std::string>& job_ids) {
  struct Ended {
    std::string job_id;
    int attempt;
    absl::Status recorded;  // Whether the attempt's end reached the store.
  };
  std::vector<Ended> ended;
  std::vector<JobSteps> batch;  // batch[i] records the end of ended[i].
  for (const std::string& job_id : job_ids) {
    Attempt* a = attempts_.Find(job_id);
    if (a == nullptr || !a->all_ended()) continue;
    if (std::any_of(ended.begin(), ended.end(),
                    [&](const Ended& e) { return e.job_id == job_id; })) {
      continue;  // Listed twice (two of its ranks ended together).
    }
    // Out of the mirror before a requeue puts it back in; its workers get exact counts again.
    scheduler_->RemoveJob(job_id).IgnoreError();
    for (const AttemptRank& r : a->ranks) {
      if (!r.worker_id.empty()) TouchWorkerLocked(r.worker_id);
    }
    ended.push_back({job_id, a->attempt, absl::OkStatus()});
    batch.push_back(AttemptEndSteps(*a));
  }
  if (ended.empty()) return;
  // One store transaction for them all (JobStore::TransitionJobsThrough).
  auto moved = store_->TransitionJobsThrough(batch);
  for (size_t i = 0; i < batch.size(); ++i) {
    absl::StatusOr<JobRecord> job = moved.ok() ? std::move((*moved)[i]) : moved.status();
    if (!job.ok()) {
      ended[i].recorded = job.status();
    } else if (job->state == JobState::kQueued) {
      MirrorQueuedLocked(*job);  // Requeued: its next attempt waits for the pass.
    }
  }
  for (const Ended& e : ended) {
    if (!e.recorded.ok()) {
      (void)store_->AppendEvents(
          e.job_id, clock_->NowMs(),
          {LogEvent{"server", absl::StrCat("cannot record the end of attempt ", e.attempt, ": ",
                                           e.recorded.message())}});
    }
    const Attempt& a = *attempts_.Find(e.job_id);
    if (a.master_port > 0 && !a.gang.empty()) workers_.ReleasePort(a.gang[0], a.master_port);
    attempts_.Erase(e.job_id);
    hub_->Bump(e.job_id);
  }
  dirty_ = true;
  hub_->Bump(EventHub::kWorkKey);
}

JobSteps Dispatcher::AttemptEndSteps(const Attempt& a) const {
  // The attempt's copy of the job is exact in every field read here: only this dispatcher
  // writes a job's retries and attempts, at placement (which made the copy) and at an
  // attempt's end (after which the copy is gone); a takeover or restart copies them afresh.
  const JobRecord& job = a.job;
  AttemptFacts facts;
  for (const AttemptRank& r : a.ranks) facts.ranks.push_back(*r.exit);
  facts.first_failed = a.first_failed;
  facts.cancel_requested = a.cancel;
  facts.cancel_reason = a.cancel_reason;
  facts.preempt_requested = a.preempt;
  facts.preempt_reason = a.preempt_reason;
  facts.ever_started =
      std::any_of(a.ranks.begin(), a.ranks.end(), [](const AttemptRank& r) { return r.started; });
  facts.retries_used = job.retries;
  facts.max_retries = job.resources.max_retries;
  const AttemptOutcome outcome = DecideAttemptOutcome(facts);

  JobTransition t;
  t.to = outcome.state;
  t.time_ms = clock_->NowMs();
  t.reason = outcome.reason;
  if (!outcome.error.empty()) t.error = outcome.error;
  t.exit_code = outcome.exit_code;
  if (outcome.counts_as_retry) t.retries = job.retries + 1;
  std::vector<AttemptRecord> attempts = job.attempts;
  if (!attempts.empty() && attempts.back().number == a.attempt) {
    attempts.back().ended_at_ms = t.time_ms;
    attempts.back().outcome = outcome.attempt_outcome;
  }
  t.attempts = attempts;
  JobSteps steps{job.id, {t}};
  if (outcome.state == JobState::kPreempted || outcome.state == JobState::kRetrying) {
    // The attempt's end and the requeue in one transaction.
    JobTransition queued;
    queued.to = JobState::kQueued;
    queued.time_ms = t.time_ms;
    queued.reason =
        absl::StrCat("requeued; attempt ", a.attempt + 1, " resumes from the latest checkpoint");
    steps.steps.push_back(std::move(queued));
  }
  return steps;
}

absl::Status Dispatcher::RequeueLocked(const std::string& job_id, const std::string& reason) {
  JobTransition t;
  t.to = JobState::kQueued;
  t.time_ms = clock_->NowMs();
  t.reason = reason;
  auto moved = store_->TransitionJob(job_id, t);
  if (!moved.ok() && !absl::IsFailedPrecondition(moved.status())) return moved.status();
  if (moved.ok()) MirrorQueuedLocked(*moved);
  dirty_ = true;
  hub_->Bump(job_id);
  hub_->Bump(EventHub::kWorkKey);
  return absl::OkStatus();
}

}  // namespace lmtrain
