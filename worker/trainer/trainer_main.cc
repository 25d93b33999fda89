// lm-train: fine-tunes a model from a job file, as HF's run_clm / run_mlm / run_qa /
// run_glue scripts.
//
//   lm-train JOB.yaml --output-dir DIR [--events-fd N] [--threads N] [--resume]
//   lm-train predict --model DIR (--fill-mask TEXT | --generate PROMPT) [...]  (predict.h)
//
// Data parallelism: started with WORLD_SIZE > 1 (and RANK, MASTER_ADDR, MASTER_PORT; see
// distributed_env.h), the process is one rank of a c10d process group (run_job.h).
//
// Exit codes: 0 done; 1 error (message on stderr and as an `error` event): the job itself is
// bad (config, data, non-finite loss); 3 the data-parallel group failed (a peer lost or hung,
// rendezvous timeout): retryable; 4 the disk filled up while saving a checkpoint or the
// model (IsOutOfDiskSpace; earlier checkpoints stay published): retryable; 128 + signal when SIGTERM / SIGINT stopped it at an update
// boundary (143 for SIGTERM; a stop on any rank stops all ranks, which exit 143 too), after
// rank 0 saved a checkpoint at that step unless save_strategy is "no", or at once on a
// second signal.
// Concurrency: the main thread runs the training loop; the signal handler only stores two
// lock-free atomics that the loop polls.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <exception>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/job_file.h"
#include "common/malloc_tuning.h"
#include "common/status_macros.h"
#include "worker/trainer/predict.h"
#include "worker/trainer/run_job.h"
#include "worker/trainer_base/checkpoint_writer.h"
#include "worker/trainer_base/event_sink.h"
#include "worker/trainer_base/trainer_flags.h"

namespace lmtrain {
namespace {

static_assert(std::atomic<bool>::is_always_lock_free, "signal handler needs lock-free atomics");
static_assert(std::atomic<int>::is_always_lock_free, "signal handler needs lock-free atomics");

std::atomic<bool> g_stop_requested{false};
std::atomic<int> g_stop_signal{0};

// The first SIGTERM / SIGINT asks the loop to stop; a second one exits at once (so a
// second Ctrl-C works even while a long step or tokenizer training runs).
extern "C" void OnStopSignal(int signal_number) {
  if (g_stop_requested.load(std::memory_order_acquire)) _exit(128 + signal_number);
  g_stop_signal.store(signal_number, std::memory_order_relaxed);
  g_stop_requested.store(true, std::memory_order_release);
}

void InstallSignalHandlers() {
  struct sigaction action = {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  std::signal(SIGPIPE, SIG_IGN);  // A closed events pipe is an EPIPE, not death.
}

// The job file through the one loader (common/job_file.h), as run alone: lm-train decides
// about GPUs from what it finds. Deprecated keys are warnings on stderr.
absl::StatusOr<JobSpec> LoadSpec(const std::string& path) {
  absl::StatusOr<JobFile> file = LoadJobFile(path, LoadJobFileOptions());
  if (absl::IsNotFound(file.status()) || absl::IsPermissionDenied(file.status())) {
    return absl::Status(file.status().code(),
                        absl::StrCat("cannot open job file: ", file.status().message()));
  }
  if (!file.ok()) return file.status();
  for (const std::string& warning : file->warnings)
    std::cerr << "warning: " << warning << std::endl;
  return std::move(file->spec);
}

const char* SignalName(int signal_number) { return signal_number == SIGINT ? "SIGINT" : "SIGTERM"; }

constexpr int kExitJobError = 1;
constexpr int kExitRetryable = 3;
constexpr int kExitOutOfDiskSpace = 4;

int Fail(EventSink& events, const absl::Status& status) {
  std::cerr << "lm-train: error: " << status.message() << std::endl;
  TrainerEvent event;
  event.type = TrainerEvent::Type::kError;
  event.message = std::string(status.message());
  events.Emit(event).IgnoreError();
  // Only the data-parallel group reports Unavailable (run_job.h).
  if (absl::IsUnavailable(status)) return kExitRetryable;
  return IsOutOfDiskSpace(status) ? kExitOutOfDiskSpace : kExitJobError;
}

int Run(const TrainerFlags& flags, EventSink& events) {
  absl::StatusOr<JobSpec> spec = LoadSpec(flags.job_file);
  if (!spec.ok()) return Fail(events, spec.status());
  if (flags.overwrite_output_dir) spec->training.overwrite_output_dir = true;
  absl::StatusOr<DistributedEnv> distributed = ReadDistributedEnvFromProcess();
  if (!distributed.ok()) return Fail(events, distributed.status());
  JobOptions options;
  options.distributed = *distributed;
  options.output_dir = flags.output_dir;
  options.threads = flags.threads;
  options.resume = flags.resume;
  options.auto_resume = flags.auto_resume;
  options.events = &events;
  options.out = &std::cout;
  options.err = &std::cerr;
  options.stop_requested = &g_stop_requested;
  absl::StatusOr<JobResult> result;
  try {  // RunJob converts LibTorch errors itself; this catches the unforeseen (bad_alloc).
    result = RunJob(*spec, options);
  } catch (const std::exception& e) {
    result = absl::InternalError(std::string("unexpected exception: ") + e.what());
  }
  if (!result.ok()) return Fail(events, result.status());
  if (!result->stopped) return 0;
  const int signal_number = g_stop_signal.load();
  if (signal_number > 0) {
    std::cerr << "received " << SignalName(signal_number) << " at step " << result->step
              << ", stopping" << std::endl;
  } else {  // Another rank of the group was signalled.
    std::cerr << "another rank was asked to stop: at step " << result->step << ", stopping"
              << std::endl;
  }
  return 128 + (signal_number > 0 ? signal_number : SIGTERM);
}

}  // namespace
}  // namespace lmtrain

int main(int argc, char** argv) {
  lmtrain::TuneMallocForTraining();  // Reuse step memory instead of page-faulting it anew.
  lmtrain::InstallSignalHandlers();
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "predict") {
    return lmtrain::PredictMain(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  absl::StatusOr<lmtrain::TrainerFlags> flags = lmtrain::ParseTrainerFlags(args);
  if (!flags.ok()) {
    std::cerr << "lm-train: error: " << flags.status().message() << "\n" << lmtrain::TrainerUsage();
    return 1;
  }
  if (flags->help) {
    std::cout << lmtrain::TrainerUsage();
    return 0;
  }
  std::unique_ptr<lmtrain::EventSink> events;
  if (flags->events_fd >= 0 && fcntl(flags->events_fd, F_GETFD) == -1) {
    std::cerr << "lm-train: error: --events-fd " << flags->events_fd << " is not open\n";
    return 1;
  }
  if (flags->events_fd >= 0) {
    events = std::make_unique<lmtrain::FdEventSink>(flags->events_fd);
  } else {
    events = std::make_unique<lmtrain::NullEventSink>();
  }
  return lmtrain::Run(*flags, *events);
}
