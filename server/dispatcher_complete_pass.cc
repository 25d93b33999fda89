// Dispatcher, part 4: complete passes, planned on a replica of the scheduler's mirror without
// the dispatcher's lock (see CompletePass in dispatcher.h).
#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/time/clock.h"
#include "server/dispatcher.h"

namespace lmtrain {
namespace {

// Ops the journal may hold before it is dropped and the replica restarts from a snapshot
// (O(queue) under mu_, once). The lease tick replays the journal every lease_timeout_ms / 4,
// so only a very busy server, or one without the tick (benchmarks, tests), gets here.
constexpr size_t kMaxJournalOps = size_t{1} << 17;
// Placements of a plan adopted per hold of mu_ (each writes the store): a plan that places
// hundreds of jobs lets events in between.
constexpr size_t kPlacementsPerSlice = 32;
constexpr absl::Duration kBetweenSlices = absl::Microseconds(200);

}  // namespace

void Dispatcher::CompletePass(PassFor why) {
  absl::MutexLock plan_lock(&plan_mu_);
  CompletePassPlanHeld(why);
}

void Dispatcher::CompletePassPlanHeld(PassFor why) {
  PlanTicket ticket;
  std::vector<scheduler::JournalOp> ops;
  {
    absl::MutexLock lock(&mu_);
    const HoldTimer hold(this);
    ticket = BeginPlanLocked(why, &ops);
  }
  planner_->Replay(std::move(ops));
  if (!ticket.plan) return;
  scheduler::Decision plan = planner_->Plan(ticket.now_ms);
  if (options_.after_plan_for_tests) options_.after_plan_for_tests();
  size_t next = 0;
  while (next < plan.placements.size()) {
    {
      absl::MutexLock lock(&mu_);
      const HoldTimer hold(this);
      if (!AdoptSliceLocked(plan, &next, &ticket)) return;
    }
    // absl::Mutex lets a releasing thread take it straight back: give the calls that queued
    // behind the slice time to take it first.
    absl::SleepFor(kBetweenSlices);
  }
  std::map<std::string, std::string> replaced;  // Freed after mu_ is released.
  absl::MutexLock lock(&mu_);
  const HoldTimer hold(this);
  replaced = FinishPlanLocked(std::move(plan), ticket);
}

// Runs under mu_ (see HoldTimer).
Dispatcher::HoldTimer::~HoldTimer() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  d_->longest_pass_hold_ms_ = std::max(d_->longest_pass_hold_ms_, ms);
}

double Dispatcher::TakeLongestCompletePassHoldMs() {
  absl::MutexLock lock(&mu_);
  return std::exchange(longest_pass_hold_ms_, 0.0);
}

Dispatcher::PlanTicket Dispatcher::BeginPlanLocked(PassFor why,
                                                   std::vector<scheduler::JournalOp>* ops) {
  PlanTicket ticket;
  if (!dispatching_) return ticket;
  ticket.plan = why == PassFor::kTick ? !complete_ : QuestionMayPassLocked();
  ticket.plan = ticket.plan && EnsureMirrorLocked();
  if (ticket.plan) FlushTouchedLocked();
  if (ticket.plan && why == PassFor::kTick && !scheduler_->MightStartOrPreempt()) {
    ticket.plan = false;
  }
  if (replica_stale_ && mirrored_) {
    journal_.clear();
    journal_.push_back(scheduler::ResetOp{SnapshotLocked()});
    replica_stale_ = false;
  }
  ops->swap(journal_);
  if (!ticket.plan) return ticket;
  complete_ = true;
  ticket.now_ms = clock_->NowMs();
  last_complete_ms_ = ticket.now_ms;
  ++complete_passes_;
  planning_ = true;
  ticket.version = scheduler_->version();
  ticket.epoch = mirror_epoch_;
  return ticket;
}

bool Dispatcher::PlanStillAppliesLocked(const PlanTicket& ticket) {
  if (ticket.epoch == mirror_epoch_ && mirrored_ && dispatching_) return true;
  planning_ = false;  // A plan of a mirror that is gone: the next pass plans again.
  reasons_since_plan_.clear();
  complete_ = false;
  return false;
}

bool Dispatcher::AdoptSliceLocked(const scheduler::Decision& plan, size_t* next,
                                  PlanTicket* ticket) {
  if (!PlanStillAppliesLocked(*ticket)) return false;
  scheduler::Decision slice;
  const size_t end = std::min(plan.placements.size(), *next + kPlacementsPerSlice);
  slice.placements.assign(plan.placements.begin() + *next, plan.placements.begin() + end);
  *next = end;
  const bool unchanged = ticket->version == scheduler_->version();
  const scheduler::Decision adopted = scheduler_->Adopt(slice, ticket->now_ms, ticket->version);
  if (unchanged) ticket->version = scheduler_->version();  // The plan's state plus the slice.
  // A job the plan placed where it no longer fits waits for the next bounded pass.
  if (adopted.placements.size() < slice.placements.size()) dirty_ = true;
  if (!ApplyDecisionLocked(adopted)) dirty_ = true;
  return true;
}

std::map<std::string, std::string> Dispatcher::FinishPlanLocked(scheduler::Decision plan,
                                                                const PlanTicket& ticket) {
  if (!PlanStillAppliesLocked(ticket)) return std::move(plan.waiting);
  scheduler::Decision preempt;
  preempt.preemptions = std::move(plan.preemptions);
  const scheduler::Decision adopted = scheduler_->Adopt(preempt, ticket.now_ms, ticket.version);
  planning_ = false;
  // The plan's reasons replace all but those that events changed since its state.
  for (const std::string& id : reasons_since_plan_) {
    auto it = waiting_.find(id);
    if (it == waiting_.end()) {
      plan.waiting.erase(id);
    } else {
      plan.waiting[id] = it->second;
    }
  }
  reasons_since_plan_.clear();
  waiting_.swap(plan.waiting);
  if (!ApplyDecisionLocked(adopted)) dirty_ = true;
  ScheduleIfDirtyLocked();
  return std::move(plan.waiting);
}

void Dispatcher::BoundJournalLocked() {
  if (journal_.size() <= kMaxJournalOps) return;
  journal_.clear();
  replica_stale_ = true;
}

}  // namespace lmtrain
