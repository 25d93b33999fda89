#include "server/metrics/server_metrics.h"

namespace lmtrain {
namespace {

const std::vector<double> kRpcBounds = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                        0.25,   0.5,   1,      2.5,   5,    10,    30};
const std::vector<double> kJobBounds = {1,   5,    10,   30,   60,    120,   300,
                                        600, 1800, 3600, 7200, 21600, 86400, 604800};
const std::vector<double> kSchedulingBounds = {0.01, 0.05, 0.1, 0.25, 0.5, 1,    2.5,
                                               5,    10,   30,  60,   300, 1800, 3600};

}  // namespace

ServerMetrics::ServerMetrics()
    : grpc_requests(registry.AddCounter("lmtrain_grpc_requests_total",
                                        "gRPC requests handled, by full method name and status "
                                        "code.",
                                        {"method", "code"})),
      grpc_request_seconds(registry.AddHistogram(
          "lmtrain_grpc_request_duration_seconds",
          "gRPC request latency from received metadata to sent status (streams: whole stream).",
          {"method", "code"}, kRpcBounds)),
      job_duration_seconds(registry.AddHistogram(
          "lmtrain_job_duration_seconds",
          "Time from submit to the terminal state, by final state (jobs ended since start).",
          {"state"}, kJobBounds)),
      scheduling_latency_seconds(registry.AddHistogram(
          "lmtrain_job_scheduling_latency_seconds",
          "Time from submit to the first SCHEDULED state (jobs placed since start).", {},
          kSchedulingBounds)),
      queued_jobs(
          registry.AddGauge("lmtrain_queued_jobs", "QUEUED jobs by priority.", {"priority"})),
      running_jobs(registry.AddGauge(
          "lmtrain_running_jobs", "Jobs holding worker slots (SCHEDULED or RUNNING).", {"state"})),
      worker_slots(registry.AddGauge("lmtrain_worker_slots", "Slots each registered worker offers.",
                                     {"worker", "name"})),
      worker_used_slots(registry.AddGauge("lmtrain_worker_used_slots",
                                          "Slots in use on each registered worker.",
                                          {"worker", "name"})),
      worker_tokens_per_second(registry.AddGauge(
          "lmtrain_worker_tokens_per_second",
          "Training throughput on each worker: the latest tokens/s of the jobs running there, a "
          "gang job's share split evenly across its workers.",
          {"worker", "name"})) {}

}  // namespace lmtrain
