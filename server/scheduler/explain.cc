#include "server/scheduler/explain.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace lmtrain::scheduler::internal {
namespace {

std::string Count(int n, const char* singular, const char* plural) {
  return absl::StrCat(n, " ", n == 1 ? singular : plural);
}

std::string With(const std::string& selector_text) {
  return selector_text.empty() ? "" : absl::StrCat(" with ", selector_text);
}

// "needs N <units> on one worker; the largest ... has M", or for a gang "needs W workers with N
// <units> each; only K workers ... have that many": slots and GPUs alike.
std::string NeverFitsUnits(const QueuedRec& job, const std::string& selector_text, int per_worker,
                           const char* unit, const char* units, int largest, int big_enough) {
  if (job.workers == 1) {
    return absl::StrCat("needs ", Count(per_worker, unit, units), " on one worker; the largest",
                        " worker", With(selector_text), " has ", std::max(largest, 0));
  }
  const std::string have =
      big_enough == 0 ? absl::StrCat("no worker", With(selector_text), " has")
                      : absl::StrCat("only ", Count(big_enough, "worker", "workers"),
                                     With(selector_text), big_enough == 1 ? " has" : " have");
  return absl::StrCat("needs ", job.workers, " workers with ", Count(per_worker, unit, units),
                      " each; ", have, " that many");
}

}  // namespace

std::string WhyNeverFits(const WorkerPool& pool, const QueuedRec& job) {
  std::string invalid = InvalidRequest(job);
  if (!invalid.empty()) return invalid;
  const int big_enough = pool.CountTotalAtLeast(job.selector, job.slots, job.gpus);
  if (big_enough >= job.workers) return "";
  const int largest = pool.LargestTotal(job.selector);
  const std::string& selector = pool.SelectorText(job.selector);
  if (largest < 0) return NoMatchingWorker(selector);
  // Enough workers with the slots: what is missing is GPUs.
  if (job.gpus > 0 && pool.CountTotalAtLeast(job.selector, job.slots, 0) >= job.workers) {
    return NeverFitsGpus(job, selector, pool.LargestTotalGpus(job.selector, job.slots), big_enough);
  }
  return NeverFits(job, selector, largest, big_enough);
}

std::string NeverFitsGpus(const QueuedRec& job, const std::string& selector_text, int largest_gpus,
                          int big_enough) {
  return NeverFitsUnits(job, selector_text, job.gpus, "GPU", "GPUs", largest_gpus, big_enough);
}

std::string InvalidRequest(const QueuedRec& job) {
  if (job.workers < 1) {
    return absl::StrCat("invalid resource request: workers must be >= 1 (got ", job.workers, ")");
  }
  if (job.slots < 1) {
    return absl::StrCat("invalid resource request: slots_per_worker must be >= 1 (got ", job.slots,
                        ")");
  }
  if (job.gpus < 0) {
    return absl::StrCat("invalid resource request: gpus_per_worker must be >= 0 (got ", job.gpus,
                        ")");
  }
  return "";
}

std::string NoMatchingWorker(const std::string& selector_text) {
  if (selector_text.empty()) return "no workers are connected";
  return absl::StrCat("no worker matches selector ", selector_text);
}

std::string NeverFits(const QueuedRec& job, const std::string& selector_text, int largest_total,
                      int big_enough) {
  return NeverFitsUnits(job, selector_text, job.slots, "slot", "slots", largest_total, big_enough);
}

std::string AtRunningLimit(const std::string& user, int max_running_jobs) {
  return absl::StrCat("user ", user, " is at max_running_jobs (", max_running_jobs, ")");
}

std::string OverGpuLimit(const std::string& user, int max_gpus, int64_t in_use, int64_t needs) {
  return absl::StrCat("user ", user, " holds ", in_use, in_use == 1 ? " GPU" : " GPUs",
                      " of max_gpus ", max_gpus, "; the job needs ", needs);
}

std::string NoGpuRoom(const QueuedRec& job, const std::string& selector_text, int most_free,
                      const std::string& most_free_worker, int fitting) {
  if (job.workers == 1) {
    std::string most = absl::StrCat("; the most free on any worker", With(selector_text), " is ",
                                    std::max(most_free, 0));
    if (!most_free_worker.empty()) absl::StrAppend(&most, " (", most_free_worker, ")");
    return absl::StrCat("needs ", Count(job.gpus, "GPU", "GPUs"), " on one worker", most);
  }
  const std::string with = selector_text.empty() ? " with " : " and ";
  return absl::StrCat("needs ", job.workers, " workers", With(selector_text), with,
                      Count(job.gpus, "free GPU", "free GPUs"), " each; ",
                      fitting == 0 ? "none has" : Count(fitting, "worker has", "workers have"),
                      " that now");
}

std::string NoRoom(const QueuedRec& job, const std::string& selector_text, int largest_free,
                   int fitting) {
  if (job.workers == 1) {
    return absl::StrCat("needs ", Count(job.slots, "slot", "slots"), " on one worker",
                        With(selector_text), "; largest free block is ", std::max(largest_free, 0));
  }
  // "needs 3 workers with gpu=h100 and 2 free slots each", not "with gpu=h100 with 2 ...".
  const std::string with = selector_text.empty() ? " with " : " and ";
  return absl::StrCat("needs ", job.workers, " workers", With(selector_text), with,
                      Count(job.slots, "free slot", "free slots"), " each; ",
                      fitting == 0 ? "none has" : Count(fitting, "worker has", "workers have"),
                      " that now");
}

std::string Behind(int jobs, int min_priority, int max_priority) {
  std::string priority = min_priority == max_priority
                             ? absl::StrCat("priority ", min_priority)
                             : absl::StrCat("priority ", min_priority, " to ", max_priority);
  return absl::StrCat("behind ", Count(jobs, "job", "jobs"), " of ", priority);
}

std::string WaitingForPreempted(int jobs) {
  return absl::StrCat("waiting for ", Count(jobs, "preempted job", "preempted jobs"),
                      " to checkpoint");
}

std::string ReservedSuffix(int workers) {
  return absl::StrCat("; next in line: ", Count(workers, "worker", "workers"), " reserved for it");
}

}  // namespace lmtrain::scheduler::internal
