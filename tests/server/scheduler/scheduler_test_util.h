// Builders and comparisons shared by the scheduler suites: terse constructors for workers and
// jobs, a canonical text form of a Decision (so that a mismatch prints as a readable diff), and
// small accessors over decisions.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "server/scheduler/scheduler.h"

namespace lmtrain::scheduler::testing {

using Labels = std::map<std::string, std::string>;

// The labels of an H100 worker (and a selector that asks for one).
inline const Labels kH100 = {{"gpu", "h100"}};

inline WorkerSnapshot Worker(const std::string& id, int total, int free, Labels labels = {}) {
  WorkerSnapshot worker;
  worker.id = id;
  worker.total_slots = total;
  worker.free_slots = free;
  worker.labels = std::move(labels);
  return worker;
}

inline ResourceRequest Request(int workers, int slots, Labels selector = {}) {
  ResourceRequest request;
  request.workers = workers;
  request.slots_per_worker = slots;
  request.selector = std::move(selector);
  return request;
}

inline QueuedJob Queued(const std::string& id, const std::string& user, int priority, int64_t seq,
                        ResourceRequest resources = Request(1, 1)) {
  QueuedJob job;
  job.id = id;
  job.user = user;
  job.priority = priority;
  job.queued_seq = seq;
  job.queued_at_ms = seq;
  job.resources = std::move(resources);
  return job;
}

inline RunningJob Running(const std::string& id, const std::string& user, int priority,
                          int64_t started_at_ms, std::vector<std::string> worker_ids,
                          int slots_per_worker = 1, bool preempting = false) {
  RunningJob job;
  job.id = id;
  job.user = user;
  job.priority = priority;
  job.started_at_ms = started_at_ms;
  job.resources = Request(static_cast<int>(worker_ids.size()), slots_per_worker);
  job.worker_ids = std::move(worker_ids);
  job.preempting = preempting;
  return job;
}

inline UserPolicy Policy(double weight, int max_running_jobs = 0) {
  UserPolicy policy;
  policy.weight = weight;
  policy.max_running_jobs = max_running_jobs;
  return policy;
}

inline SchedulerOptions Options(int max_reservations = 1, bool backfill = true,
                                bool preemption = true) {
  SchedulerOptions options;
  options.max_reservations = max_reservations;
  options.backfill = backfill;
  options.preemption = preemption;
  return options;
}

// One line per placement, preemption and waiting entry, in a canonical order.
inline std::string Describe(const Decision& decision) {
  std::string text;
  for (const Placement& p : decision.placements) {
    text += "place " + p.job_id + " on";
    for (const std::string& w : p.worker_ids) text += " " + w;
    text += "\n";
  }
  for (const Preemption& p : decision.preemptions) {
    text += "preempt " + p.job_id + " for " + p.for_job_id + ": " + p.reason + "\n";
  }
  for (const auto& [id, why] : decision.waiting) text += "wait " + id + ": " + why + "\n";
  return text;
}

inline const Placement* FindPlacement(const Decision& decision, const std::string& job_id) {
  for (const Placement& p : decision.placements) {
    if (p.job_id == job_id) return &p;
  }
  return nullptr;
}

inline std::vector<std::string> PlacedIds(const Decision& decision) {
  std::vector<std::string> ids;
  for (const Placement& p : decision.placements) ids.push_back(p.job_id);
  return ids;
}

inline std::vector<std::string> VictimIds(const Decision& decision) {
  std::vector<std::string> ids;
  for (const Preemption& p : decision.preemptions) ids.push_back(p.job_id);
  return ids;
}

inline Decision ScheduleOnce(const ClusterSnapshot& snapshot, SchedulerOptions options = {}) {
  return MakePolicyScheduler(options)->Schedule(snapshot);
}

// The snapshot after applying a decision: placed jobs run (started at now_ms) and hold their
// slots, victims are marked preempting. The caller then advances now_ms and finishes jobs.
inline ClusterSnapshot Apply(ClusterSnapshot snapshot, const Decision& decision) {
  for (const Placement& p : decision.placements) {
    auto it = std::find_if(snapshot.queued.begin(), snapshot.queued.end(),
                           [&](const QueuedJob& q) { return q.id == p.job_id; });
    if (it == snapshot.queued.end()) continue;
    RunningJob job = Running(it->id, it->user, it->priority, snapshot.now_ms, p.worker_ids,
                             it->resources.slots_per_worker);
    for (WorkerSnapshot& w : snapshot.workers) {
      if (std::count(p.worker_ids.begin(), p.worker_ids.end(), w.id) > 0) {
        w.free_slots -= it->resources.slots_per_worker;
      }
    }
    snapshot.queued.erase(it);
    snapshot.running.push_back(std::move(job));
  }
  for (const Preemption& p : decision.preemptions) {
    for (RunningJob& r : snapshot.running) {
      if (r.id == p.job_id) r.preempting = true;
    }
  }
  return snapshot;
}

// The snapshot after a running job exits: its slots go back to its workers.
inline ClusterSnapshot Finish(ClusterSnapshot snapshot, const std::string& job_id) {
  auto it = std::find_if(snapshot.running.begin(), snapshot.running.end(),
                         [&](const RunningJob& r) { return r.id == job_id; });
  if (it == snapshot.running.end()) return snapshot;
  for (WorkerSnapshot& w : snapshot.workers) {
    if (std::count(it->worker_ids.begin(), it->worker_ids.end(), w.id) > 0) {
      w.free_slots += it->resources.slots_per_worker;
    }
  }
  snapshot.running.erase(it);
  return snapshot;
}

}  // namespace lmtrain::scheduler::testing
