// Explanations: the sentences Decision.waiting holds for queued jobs that were not placed. Each
// says what the job needs and what stands in its way, in words a user understands:
//
//   invalid request:  "invalid resource request: workers must be >= 1 (got 0)"
//   never fits:       "no worker matches selector gpu=h100", "no workers are connected",
//                     "needs 2 GPUs on one worker; the largest worker has 1",
//                     "needs 2 workers with 4 GPUs each; only 1 worker has that many",
//                     "needs 16 slots on one worker; the largest worker has 8",
//                     "needs 4 workers with 8 slots each; only 3 workers have that many",
//                     "needs 2 workers with 8 slots each; no worker with gpu=h100 has that many"
//   user limit:       "user alice is at max_running_jobs (2)",
//                     "user alice holds 3 GPUs of max_gpus 4; the job needs 2"
//   no room now:      "needs 2 slots on one worker; largest free block is 1",
//                     "needs 3 workers with 2 free slots each; 1 worker has that now",
//                     "needs 2 workers with gpu=h100 and 4 free slots each; none has that now",
//                     "needs 2 GPUs on one worker; the most free on any worker is 1 (w3)",
//                     "needs 2 workers with 2 free GPUs each; 1 worker has that now"
//   room is reserved: "behind 3 jobs of priority 80", "behind 5 jobs of priority 10 to 80"
//   preemption:       "waiting for 2 preempted jobs to checkpoint"
//   reservation:      "...; next in line: 2 workers reserved for it"
//
// A selector is named where it narrows the workers ("needs 2 slots on one worker with gpu=h100").
#pragma once

#include <cstdint>
#include <string>

#include "server/scheduler/job_queue.h"
#include "server/scheduler/worker_pool.h"

namespace lmtrain::scheduler::internal {

// Why no state of the present workers could ever run the job (invalid request, no matching
// worker, too few big enough); empty when some could.
std::string WhyNeverFits(const WorkerPool& pool, const QueuedRec& job);

// Empty when the request is valid.
std::string InvalidRequest(const QueuedRec& job);
// selector_text: WorkerPool::SelectorText (empty: no selector).
std::string NoMatchingWorker(const std::string& selector_text);
// largest_total: the largest matching worker's slots; big_enough: matching workers with that
// many slots.
std::string NeverFits(const QueuedRec& job, const std::string& selector_text, int largest_total,
                      int big_enough);
// largest_gpus: the most GPUs on a matching worker with enough slots; big_enough: matching
// workers with that many slots and GPUs.
std::string NeverFitsGpus(const QueuedRec& job, const std::string& selector_text,
                          int largest_gpus, int big_enough);
std::string AtRunningLimit(const std::string& user, int max_running_jobs);
std::string OverGpuLimit(const std::string& user, int max_gpus, int64_t in_use, int64_t needs);
// largest_free: the most free slots on one matching worker; fitting: matching workers that
// have slots_per_worker free.
std::string NoRoom(const QueuedRec& job, const std::string& selector_text, int largest_free,
                   int fitting);
// most_free: the most free GPUs on one matching worker, on worker `most_free_worker` ("" when no
// matching worker has GPUs); fitting: matching workers with gpus_per_worker free.
std::string NoGpuRoom(const QueuedRec& job, const std::string& selector_text, int most_free,
                      const std::string& most_free_worker, int fitting);
std::string Behind(int jobs, int min_priority, int max_priority);
std::string WaitingForPreempted(int jobs);
std::string ReservedSuffix(int workers);

}  // namespace lmtrain::scheduler::internal
