#include "server/http/cluster_gauges.h"

#include <map>
#include <set>
#include <string>

namespace lmtrain {
namespace {

constexpr int kScanLimit = 100000;

}  // namespace

absl::Status UpdateClusterGauges(JobManager* jobs, Dispatcher* dispatcher, ServerMetrics* metrics) {
  auto queued = jobs->List(JobFilter{{JobState::kQueued}, kScanLimit});
  if (!queued.ok()) return queued.status();
  std::map<LabelValues, double> by_priority;
  for (const JobRecord& j : *queued) by_priority[{std::to_string(j.priority)}] += 1;

  auto active = jobs->List(JobFilter{{JobState::kScheduled, JobState::kRunning}, kScanLimit});
  if (!active.ok()) return active.status();
  std::map<LabelValues, double> by_state = {{{"SCHEDULED"}, 0}, {{"RUNNING"}, 0}};
  std::map<std::string, double> tokens;  // By worker id.
  for (const JobRecord& j : *active) {
    by_state[{std::string(JobStateName(j.state))}] += 1;
    if (!j.metrics.tokens_per_second.has_value() || j.attempts.empty()) continue;
    const std::set<std::string> gang(j.attempts.back().worker_ids.begin(),
                                     j.attempts.back().worker_ids.end());
    for (const std::string& w : gang) tokens[w] += *j.metrics.tokens_per_second / gang.size();
  }

  std::map<LabelValues, double> slots, used, tps;
  for (const WorkerStatus& w : dispatcher->ListWorkers()) {
    const LabelValues labels = {w.id, w.info.name};
    slots[labels] = w.info.slots;
    used[labels] = w.used_slots;
    auto it = tokens.find(w.id);
    tps[labels] = it == tokens.end() ? 0 : it->second;
  }
  metrics->queued_jobs->ReplaceAll(std::move(by_priority));
  metrics->running_jobs->ReplaceAll(std::move(by_state));
  metrics->worker_slots->ReplaceAll(std::move(slots));
  metrics->worker_used_slots->ReplaceAll(std::move(used));
  metrics->worker_tokens_per_second->ReplaceAll(std::move(tps));
  return absl::OkStatus();
}

}  // namespace lmtrain
