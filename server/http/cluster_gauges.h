// Scrape-time gauges of ServerMetrics, read from the job store and the dispatcher:
// queued jobs by priority, jobs holding slots by state, and per worker its slots, used slots
// and tokens/s (the latest tokens_per_second of each SCHEDULED/RUNNING job, split evenly
// over the distinct workers of its current attempt, summed per worker).
#pragma once

#include "absl/status/status.h"
#include "server/dispatcher.h"
#include "server/job_manager.h"
#include "server/metrics/server_metrics.h"

namespace lmtrain {

// Replaces the gauges' series with the current values. Errors are the store's.
absl::Status UpdateClusterGauges(JobManager* jobs, Dispatcher* dispatcher, ServerMetrics* metrics);

}  // namespace lmtrain
