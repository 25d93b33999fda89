#include "server/scheduler/scheduling_pass.h"

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "server/scheduler/explain.h"
#include "server/scheduler/fair_share_order.h"
#include "server/scheduler/pass_room.h"
#include "server/scheduler/victim_search.h"

namespace lmtrain::scheduler::internal {
namespace {

constexpr int kVictimScansPerExaminedJob = 8;

class Pass {
 public:
  Pass(ClusterState* state, const SchedulerOptions& options, int64_t now_ms, int limit, bool commit)
      : commit_(commit),
        state_(*state),
        pool_(state->pool()),
        options_(options),
        now_ms_(now_ms),
        limit_(limit),
        room_(state->pool()) {}

  Decision Run() {
    for (const auto& [priority, level] : state_.queue().levels()) {
      RunLevel(priority, level);
      if (stopped_) break;
    }
    if (commit_) {
      state_.EndPass();
    } else {
      std::vector<std::string> preempted;
      for (const Preemption& p : decision_.preemptions) preempted.push_back(p.job_id);
      state_.RollBackPass(preempted);
    }
    if (victim_scan_budget_ < 0) decision_.cut_short = true;  // A search gave up early.
    return std::move(decision_);
  }

 private:
  void RunLevel(int priority, const JobQueue::Level& level) {
    FairShareOrder order(level, state_.users());
    while (const QueuedRec* job = order.Next()) {
      if (ShouldStop(priority)) {
        stopped_ = true;
        return;
      }
      if (state_.users().AtRunningLimit(*job->user)) {
        ExplainLimited(*job, order);
      } else {
        Examine(*job);
      }
    }
  }

  // Bounded passes only; the job of `priority` is not examined. Hitting the limit cuts the
  // pass short (Decision::cut_short); nothing left that can change does not.
  bool ShouldStop(int priority) {
    if (limit_ <= 0) return false;
    if (NothingCanChange(priority)) return true;
    decision_.cut_short = examined_ >= limit_;
    return decision_.cut_short;
  }

  // Bounded passes only: no job at or below `priority` can start, preempt or claim pending room.
  bool NothingCanChange(int priority) const {
    if (room_.unreserved_free() > 0) return false;
    const VictimSet& candidates = state_.running().candidates();
    if (options_.preemption && !candidates.empty() && (*candidates.begin())->priority < priority) {
      return false;
    }
    return !room_.AnyUnreservedPending();
  }

  // The user is at max_running_jobs: this job and (in unbounded passes) the user's later ones at
  // this level wait; bounded passes do not spend their budget on them.
  void ExplainLimited(const QueuedRec& job, FairShareOrder& order) {
    const std::string text =
        AtRunningLimit(job.user->name, state_.users().PolicyOf(*job.user).max_running_jobs);
    ++examined_;
    ExplainAtLimit(job, text);
    if (limit_ <= 0) {
      for (auto it = order.rest_begin(); it != order.rest_end(); ++it) ExplainAtLimit(**it, text);
    }
    order.SkipUser();
  }

  // A job that could never run says so rather than blame the limit (IncrementalScheduler parks
  // such jobs and explains them the same way).
  void ExplainAtLimit(const QueuedRec& job, const std::string& limit_text) {
    std::string never = WhyNeverFits(pool_, job);
    Explain(job, never.empty() ? limit_text : std::move(never));
  }

  void Examine(const QueuedRec& job) {
    ++examined_;
    if (!CheckFeasible(job)) return;
    if (state_.users().OverGpuLimit(*job.user, job.total_gpus())) {
      Explain(job, OverGpuLimit(job.user->name, state_.users().PolicyOf(*job.user).max_gpus,
                                job.user->gpus_in_use, job.total_gpus()));
      return;
    }
    if (!options_.backfill && waiting_ahead_ > 0) {
      Explain(job, BehindText());
      NoteWaiting(job);
      return;
    }
    if (TryPlace(job)) return;
    // Enough to complete the job with the free workers; fewer means it must preempt.
    const std::vector<int> pending_fits =
        room_.PendingFits(job.selector, job.slots, job.gpus,
                          job.workers - room_.CountFree(job.selector, job.slots, job.gpus));
    if (TryWaitForPending(job, pending_fits)) return;
    if (TryPreempt(job, pending_fits)) return;
    Block(job);
  }

  // Explains and returns false when no state of the connected workers could ever run the job.
  bool CheckFeasible(const QueuedRec& job) {
    std::string never = WhyNeverFits(pool_, job);
    if (never.empty()) return true;
    Explain(job, std::move(never));
    return false;
  }

  bool TryPlace(const QueuedRec& job) {
    std::vector<int> workers;
    if (!room_.PickFree(job.selector, job.slots, job.gpus, job.workers, &workers)) return false;
    state_.Start(job, workers, now_ms_);
    Placement& placement = decision_.placements.emplace_back();
    placement.job_id = job.id;
    for (int worker : workers) placement.worker_ids.push_back(pool_.worker(worker).id);
    return true;
  }

  // Fits once jobs already preempting exit: waits for them and triggers no new preemption.
  bool TryWaitForPending(const QueuedRec& job, const std::vector<int>& pending_fits) {
    if (pending_fits.empty()) return false;
    const int fits = room_.CountFree(job.selector, job.slots, job.gpus) + int(pending_fits.size());
    if (fits < job.workers) return false;
    std::vector<int> workers(
        pending_fits.begin(),
        pending_fits.begin() + std::min<size_t>(job.workers, pending_fits.size()));
    const int missing = job.workers - static_cast<int>(workers.size());
    if (missing > 0) room_.PickFree(job.selector, job.slots, job.gpus, missing, &workers);
    for (int worker : workers) room_.Reserve(worker);
    Explain(job, WaitingForPreempted(AwaitedOn(workers, job)));
    NoteWaiting(job);
    return true;
  }

  // The preempting jobs on those of `workers` that lack the job's slots or GPUs until they
  // exit: what a job placed there waits for.
  int AwaitedOn(const std::vector<int>& workers, const QueuedRec& job) const {
    std::vector<const RunningRec*> awaited;
    for (int worker : workers) {
      const WorkerRec& rec = pool_.worker(worker);
      if (rec.free >= job.slots && rec.free_gpus >= job.gpus) continue;
      for (const RunningRec* running : state_.running().PreemptingOn(worker)) {
        awaited.push_back(running);
      }
    }
    std::sort(awaited.begin(), awaited.end());
    return static_cast<int>(std::unique(awaited.begin(), awaited.end()) - awaited.begin());
  }

  bool TryPreempt(const QueuedRec& job, const std::vector<int>& pending_fits) {
    if (!options_.preemption) return false;
    const VictimSet& candidates = state_.running().candidates();
    if (candidates.empty() || (*candidates.begin())->priority >= job.priority) return false;
    // Room only shrinks during a pass and candidates only go: a shape that found no victims
    // finds none for a job as large or larger (of no higher priority, as order guarantees).
    auto failed = preempt_failed_.find({job.selector, job.slots, job.gpus});
    if (failed != preempt_failed_.end() && job.workers >= failed->second) return false;
    std::optional<VictimChoice> choice = ChooseVictims(
        pool_, room_, state_.running(), job, now_ms_, options_.min_runtime_before_preemption_ms,
        pending_fits, limit_ > 0 ? &victim_scan_budget_ : nullptr);
    if (!choice) {
      int& min_failed =
          preempt_failed_.try_emplace({job.selector, job.slots, job.gpus}, job.workers)
              .first->second;
      min_failed = std::min(min_failed, job.workers);
      return false;
    }
    for (const RunningRec* victim : choice->victims) {
      decision_.preemptions.push_back({victim->id, job.id,
                                       absl::StrCat("preempted by job ", job.id, " (priority ",
                                                    job.priority, " > ", victim->priority, ")")});
      for (int worker : victim->worker_index) {
        if (worker >= 0) room_.WillAddPending(worker);
      }
      state_.MarkPreempting(victim->id).IgnoreError();
    }
    for (int worker : choice->workers) room_.Reserve(worker);
    // The new victims and any job already preempting on the workers it will use.
    Explain(job, WaitingForPreempted(AwaitedOn(choice->workers, job)));
    NoteWaiting(job);
    return true;
  }

  void Block(const QueuedRec& job) {
    std::string suffix;
    if (reservations_ < options_.max_reservations) {
      std::vector<int> workers;
      if (room_.PickClosest(job.selector, job.slots, job.gpus, job.workers, &workers)) {
        for (int worker : workers) room_.Reserve(worker);
        ++reservations_;
        suffix = ReservedSuffix(job.workers);
      }
    }
    const int fitting = pool_.CountFreeAtLeast(job.selector, job.slots, job.gpus);
    std::string text = fitting >= job.workers && waiting_ahead_ > 0 ? BehindText() : NoRoomText(job);
    Explain(job, text + suffix);
    NoteWaiting(job);
  }

  // What is short: GPUs when too few workers have the job's GPUs free, else slots.
  std::string NoRoomText(const QueuedRec& job) const {
    const std::string& selector = pool_.SelectorText(job.selector);
    if (job.gpus > 0) {
      const int gpus_fitting = pool_.CountFreeAtLeast(job.selector, 0, job.gpus);
      if (gpus_fitting < job.workers) {
        const int most = pool_.MostFreeGpus(job.selector);
        return NoGpuRoom(job, selector, most < 0 ? 0 : pool_.worker(most).free_gpus,
                         most < 0 ? "" : pool_.worker(most).id, gpus_fitting);
      }
    }
    return NoRoom(job, selector, pool_.LargestFree(job.selector),
                  pool_.CountFreeAtLeast(job.selector, job.slots, job.gpus));
  }

  std::string BehindText() const {
    return Behind(waiting_ahead_, ahead_min_priority_, ahead_max_priority_);
  }

  // The job waits in line: later jobs are behind it, and its slots count toward its user's
  // share for the rest of the pass.
  void NoteWaiting(const QueuedRec& job) {
    if (waiting_ahead_++ == 0) ahead_max_priority_ = job.priority;
    ahead_min_priority_ = job.priority;  // Order is by priority, highest first.
    state_.users().Claim(*job.user, job.share);
  }

  void Explain(const QueuedRec& job, std::string text) {
    decision_.waiting[job.id] = std::move(text);
  }

  const bool commit_;
  ClusterState& state_;
  const WorkerPool& pool_;
  const SchedulerOptions& options_;
  const int64_t now_ms_;
  const int limit_;
  PassRoom room_;
  Decision decision_;
  int examined_ = 0;
  int reservations_ = 0;
  int waiting_ahead_ = 0;
  int ahead_min_priority_ = 0;
  int ahead_max_priority_ = 0;
  bool stopped_ = false;
  // Bounded passes: preemption candidates looked at, in all victim searches together.
  int victim_scan_budget_ = kVictimScansPerExaminedJob * limit_;
  // (selector, slots, gpus) -> the fewest workers no victims were found for.
  absl::flat_hash_map<std::tuple<int, int, int>, int> preempt_failed_;
};

}  // namespace

Decision RunSchedulingPass(ClusterState* state, const SchedulerOptions& options, int64_t now_ms,
                           int max_jobs_examined, bool commit) {
  return Pass(state, options, now_ms, max_jobs_examined, commit).Run();
}

}  // namespace lmtrain::scheduler::internal
