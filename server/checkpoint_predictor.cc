#include "server/checkpoint_predictor.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/job_state.h"
#include "common/status_macros.h"
#include "server/artifacts/checkpoint_files.h"
#include "server/artifacts/data_roots.h"

namespace lmtrain {
namespace {

// lm-train predict's command line for `input` on the model folder `model`.
absl::StatusOr<std::vector<std::string>> PredictArgv(const std::string& trainer,
                                                     const std::string& model,
                                                     const PredictInput& input) {
  if (input.fill_mask.empty() == input.generate.empty()) {
    return absl::InvalidArgumentError(
        "give one of fill_mask (a text with the mask token) or "
        "generate (a prompt)");
  }
  std::vector<std::string> argv = {trainer, "predict", "--model", model};
  if (!input.fill_mask.empty()) argv.insert(argv.end(), {"--fill-mask", input.fill_mask});
  if (!input.generate.empty()) argv.insert(argv.end(), {"--generate", input.generate});
  if (input.top_k) argv.insert(argv.end(), {"--top-k", std::to_string(*input.top_k)});
  if (input.max_new_tokens) {
    argv.insert(argv.end(), {"--max-new-tokens", std::to_string(*input.max_new_tokens)});
  }
  if (input.temperature) {
    argv.insert(argv.end(), {"--temperature", absl::StrCat(*input.temperature)});
  }
  if (input.seed) argv.insert(argv.end(), {"--seed", std::to_string(*input.seed)});
  return argv;
}

// Reads the child's stdout and stderr to their ends (keeping kMaxPredictOutput bytes of each)
// unless `deadline` comes first; false then.
bool ReadUntilExit(ChildProcess& child, absl::Time deadline, std::string* out, std::string* err) {
  struct Stream {
    int fd;
    std::string* text;
    bool open = true;
  };
  std::array<Stream, 2> streams = {Stream{child.stdout_fd(), out}, Stream{child.stderr_fd(), err}};
  while (streams[0].open || streams[1].open) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return false;
    std::array<pollfd, 2> fds;
    for (size_t i = 0; i < 2; ++i) fds[i] = {streams[i].open ? streams[i].fd : -1, POLLIN, 0};
    const int ready =
        poll(fds.data(), fds.size(), static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
    if (ready < 0 && errno != EINTR) return false;
    for (size_t i = 0; i < 2; ++i) {
      if (!streams[i].open || fds[i].revents == 0) continue;
      char buffer[65536];
      const ssize_t n = read(streams[i].fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        streams[i].open = false;
        continue;
      }
      const size_t room = kMaxPredictOutput - std::min(kMaxPredictOutput, streams[i].text->size());
      streams[i].text->append(buffer, std::min(room, static_cast<size_t>(n)));
    }
  }
  return true;
}

// The checkpoint folder of `job` to predict with.
absl::StatusOr<CheckpointFiles> FindCheckpoint(const JobRecord& job, const PredictInput& input,
                                               const std::string& artifacts_dir) {
  if (!IsTerminal(job.state)) {
    return absl::FailedPreconditionError(
        absl::StrCat("job ", job.id, " is ", std::string(JobStateName(job.state)),
                     ": predict needs a finished job (wait for it with lmctl watch ", job.id, ")"));
  }
  if (job.output_dir.empty() || !IsUnderRoot(job.output_dir, artifacts_dir)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "job ", job.id, " has no checkpoint: no output folder under the artifacts dir"));
  }
  absl::StatusOr<CheckpointFiles> files = FindCheckpointFiles(job.output_dir, input.step);
  if (absl::IsNotFound(files.status())) {
    return absl::NotFoundError(absl::StrCat("job ", job.id, " has no checkpoint",
                                            input.step ? " of that step" : "", ": ",
                                            files.status().message()));
  }
  return files;
}

}  // namespace

absl::StatusOr<PredictOutput> CheckpointPredictor::Predict(const JobRecord& job,
                                                           const PredictInput& input) const {
  if (running_.fetch_add(1) >= options_.max_running) {
    running_.fetch_sub(1);
    return absl::ResourceExhaustedError(absl::StrCat(
        options_.max_running, " predictions are running on the server; try again shortly"));
  }
  absl::StatusOr<PredictOutput> output = Run(job, input);
  running_.fetch_sub(1);
  return output;
}

absl::StatusOr<PredictOutput> CheckpointPredictor::Run(const JobRecord& job,
                                                       const PredictInput& input) const {
  ASSIGN_OR_RETURN(const CheckpointFiles checkpoint,
                   FindCheckpoint(job, input, options_.artifacts_dir));
  LaunchSpec spec;
  ASSIGN_OR_RETURN(spec.argv, PredictArgv(options_.trainer_path, checkpoint.dir, input));
  absl::StatusOr<std::unique_ptr<ChildProcess>> child = launcher_->Launch(spec);
  if (!child.ok()) {
    return absl::UnavailableError(absl::StrCat("cannot start ", options_.trainer_path,
                                               " predict: ", child.status().message()));
  }
  std::string out, err;
  if (!ReadUntilExit(**child, absl::Now() + options_.timeout, &out, &err)) {
    (*child)->Signal(SIGKILL);
    (*child)->Wait();
    return absl::DeadlineExceededError(
        absl::StrCat("lm-train predict on job ", job.id, " checkpoint-", checkpoint.step,
                     " did not finish within ", absl::FormatDuration(options_.timeout)));
  }
  const ExitStatus exit = (*child)->Wait();
  if (exit.exit_code != 0) {
    std::string message(absl::StripAsciiWhitespace(err));
    if (message.empty())
      message = absl::StrCat("exit code ", exit.exit_code, " signal ", exit.signal);
    return absl::InvalidArgumentError(
        absl::StrCat("job ", job.id, " checkpoint-", checkpoint.step, ": ", message));
  }
  return PredictOutput{checkpoint.step, std::move(out)};
}

}  // namespace lmtrain
