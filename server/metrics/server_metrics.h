// ServerMetrics: lm-server's Prometheus metric families, registered in one registry.
//
// Recorded as things happen: gRPC requests (grpc_metrics_interceptor.h), job durations and
// scheduling latency (observed_job_store.h). Set at scrape time from the job store and the
// dispatcher (server/http/cluster_gauges.h): queue depth, running jobs, per-worker tokens/s.
//
// Thread-safe (see MetricsRegistry). Not copyable; the family pointers live as long as it does.
#pragma once

#include "server/metrics/metrics_registry.h"

namespace lmtrain {

struct ServerMetrics {
  ServerMetrics();
  ServerMetrics(const ServerMetrics&) = delete;
  ServerMetrics& operator=(const ServerMetrics&) = delete;

  MetricsRegistry registry;
  // {method="/lmtrain.v1.JobService/GetJob", code="OK"}.
  Counter* const grpc_requests;
  Histogram* const grpc_request_seconds;
  // Submit to terminal state, by final state {state="SUCCEEDED"}.
  Histogram* const job_duration_seconds;
  // Submit to the first SCHEDULED (first attempt only).
  Histogram* const scheduling_latency_seconds;
  Gauge* const queued_jobs;               // {priority="0"}: QUEUED jobs per priority.
  Gauge* const running_jobs;              // {state="SCHEDULED"|"RUNNING"}.
  Gauge* const worker_slots;              // {worker="id", name="local"}: slots offered.
  Gauge* const worker_used_slots;         // {worker, name}: slots in use.
  Gauge* const worker_tokens_per_second;  // {worker, name}: see cluster_gauges.h.
};

}  // namespace lmtrain
