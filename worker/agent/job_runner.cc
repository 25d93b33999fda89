#include "worker/agent/job_runner.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <deque>
#include <filesystem>
#include <fstream>
#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/trainer_events.h"

namespace lmtrain {
namespace fs = std::filesystem;

namespace {
constexpr size_t kMaxPending = 10000;
constexpr size_t kStderrTail = 20;
constexpr size_t kMaxLine = 64 * 1024;
}  // namespace

// Turns the child's output into RankEvents and sends them in batches.
class JobRunner::Relay {
 public:
  Relay(JobRunner* runner, const std::string& log_path)
      : runner_(runner), log_(log_path, std::ios::app) {}

  void Add(RankEvent event) {
    if (pending_.size() >= kMaxPending && std::holds_alternative<RankLog>(pending_.front())) {
      pending_.pop_front();
    }
    pending_.push_back(std::move(event));
  }

  void OnOutputLine(const std::string& stream, const std::string& line) {
    log_ << line << '\n';
    if (stream == "stderr") {
      stderr_tail_.push_back(line);
      if (stderr_tail_.size() > kStderrTail) stderr_tail_.pop_front();
    }
    Add(RankLog{stream, line});
  }

  void OnEventLine(const std::string& line) {
    auto decoded = DecodeTrainerEvent(line);
    if (!decoded.ok()) {
      OnOutputLine("stderr", absl::StrCat("[worker] bad trainer event: ", line));
      return;
    }
    switch (decoded->type) {
      case TrainerEvent::Type::kMetrics:
        Add(decoded->metrics);
        return;
      case TrainerEvent::Type::kCheckpoint:
        Add(RankCheckpoint{decoded->step, decoded->path, absl::ToUnixMillis(absl::Now())});
        return;
      case TrainerEvent::Type::kError:
        trainer_error_ = decoded->message;
        return;
    }
  }

  std::string ErrorText() const {
    if (!trainer_error_.empty()) return trainer_error_;
    return absl::StrJoin(stderr_tail_, "\n");
  }

  // Sends what is pending; true when the server took it (or there was nothing).
  bool Flush() {
    log_.flush();
    if (pending_.empty()) return true;
    RankEventBatch batch;
    batch.worker_id = runner_->worker_id_();
    batch.job_id = runner_->job_id();
    batch.rank = runner_->assignment_.rank;
    batch.attempt = runner_->assignment_.attempt;
    batch.events.assign(pending_.begin(), pending_.end());
    absl::StatusOr<ReportReply> resp = runner_->client_->Report(batch);
    if (!resp.ok()) {
      const absl::StatusCode code = resp.status().code();
      if (code != absl::StatusCode::kFailedPrecondition && code != absl::StatusCode::kNotFound &&
          code != absl::StatusCode::kPermissionDenied) {
        return false;  // Transient (server down, deadline): keep the reports, try again.
      }
      pending_.clear();  // The attempt is not current any more: stop, drop the reports.
      runner_->Cancel();
      return true;
    }
    pending_.clear();
    if (resp->cancel) runner_->Cancel();
    return true;
  }

 private:
  JobRunner* const runner_;
  std::ofstream log_;
  std::deque<RankEvent> pending_;
  std::deque<std::string> stderr_tail_;
  std::string trainer_error_;
};

JobRunner::JobRunner(RankAssignment assignment, std::function<std::string()> worker_id,
                     ServerClient* client, ProcessLauncher* launcher, Options options)
    : assignment_(std::move(assignment)),
      worker_id_(std::move(worker_id)),
      client_(client),
      launcher_(launcher),
      options_(std::move(options)) {}

JobRunner::~JobRunner() {
  Shutdown();
  if (thread_.joinable()) thread_.join();
}

void JobRunner::Start() {
  thread_ = std::thread([this] { Run(); });
}

void JobRunner::Shutdown() { shutdown_.store(true); }

absl::StatusOr<std::unique_ptr<ChildProcess>> JobRunner::Launch() {
  const fs::path job_dir =
      fs::path(options_.work_dir) / "jobs" / job_id() /
      absl::StrCat("attempt-", assignment_.attempt, "-rank-", assignment_.rank);
  std::error_code ec;
  fs::create_directories(job_dir, ec);
  if (!ec) fs::create_directories(fs::path(assignment_.output_dir) / "logs", ec);
  if (ec)
    return absl::InternalError(
        absl::StrCat("cannot create ", job_dir.string(), ": ", ec.message()));
  std::string spec_yaml = assignment_.spec_yaml;
  if (options_.artifacts != nullptr) {
    auto local = options_.artifacts->LocalizeSpec(spec_yaml, &artifact_pins_);
    if (!local.ok()) return local.status();
    spec_yaml = *std::move(local);
  } else if (spec_yaml.find(kArtifactRefPrefix) != std::string::npos) {
    return absl::FailedPreconditionError(
        "the job names artifacts (artifact:sha256:...) but this worker has no artifact cache");
  }
  const fs::path spec_path = job_dir / "job.yaml";
  std::ofstream(spec_path) << spec_yaml;
  LaunchSpec spec;
  spec.argv = {options_.trainer_path,  spec_path.string(), "--output-dir",
               assignment_.output_dir, "--events-fd",      "3"};
  if (assignment_.resume) spec.argv.push_back("--auto-resume");
  spec.env = {{"CUDA_VISIBLE_DEVICES", absl::StrJoin(assignment_.gpus, ",")},
              {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}};
  if (assignment_.world_size > 1) {
    spec.env.insert(spec.env.end(), {{"RANK", absl::StrCat(assignment_.rank)},
                                     {"WORLD_SIZE", absl::StrCat(assignment_.world_size)},
                                     {"LOCAL_RANK", absl::StrCat(assignment_.local_rank)},
                                     {"MASTER_ADDR", assignment_.master_addr},
                                     {"MASTER_PORT", absl::StrCat(assignment_.master_port)}});
  }
  spec.cwd = job_dir.string();
  return launcher_->Launch(spec);
}

void JobRunner::Run() {
  std::error_code ec;  // A failure here surfaces as Launch()'s error.
  fs::create_directories(fs::path(assignment_.output_dir) / "logs", ec);
  const std::string log_name = assignment_.rank == 0
                                   ? "lm-train.log"
                                   : absl::StrCat("lm-train-rank", assignment_.rank, ".log");
  Relay relay(this, (fs::path(assignment_.output_dir) / "logs" / log_name).string());
  RankExited exited;
  auto child = Launch();
  if (!child.ok()) {
    exited.exit_code = 127;
    exited.error = std::string(child.status().message());
  } else {
    relay.Add(RankStarted{(*child)->pid()});
    // Report the start now rather than at the first flush_interval tick: the server marks the
    // job RUNNING on it (a transient failure keeps it pending for the next flush).
    relay.Flush();
    Supervise(child->get(), &relay);
    const ExitStatus status = (*child)->Wait();
    exited.exit_code = status.exit_code;
    exited.signal = status.signal;
    exited.cancelled = cancel_requested_.load();
    if (status.exit_code != 0 && !exited.cancelled) exited.error = relay.ErrorText();
  }
  artifact_pins_ = ArtifactCache::Pins();  // The child is gone: its artifacts may be evicted.
  relay.Add(std::move(exited));
  // The exit must reach the server: retry with backoff until it does or we shut down.
  absl::Duration backoff = absl::Milliseconds(100);
  while (!relay.Flush() && !shutdown_.load()) {
    absl::SleepFor(backoff);
    backoff = std::min(backoff * 2, absl::Seconds(5));
  }
  done_.store(true);
}

void JobRunner::Supervise(ChildProcess* child, Relay* relay) {
  struct Stream {
    int fd;
    std::string name;
    std::string buffer;
    bool open = true;
  };
  std::vector<Stream> streams = {{child->stdout_fd(), "stdout"},
                                 {child->stderr_fd(), "stderr"},
                                 {child->events_fd(), "events"}};
  absl::Time next_flush = absl::Now() + options_.flush_interval;
  absl::Time term_sent = absl::InfiniteFuture();
  auto on_line = [&](const Stream& s, const std::string& line) {
    if (s.name == "events") {
      relay->OnEventLine(line);
    } else {
      relay->OnOutputLine(s.name, line);
    }
  };
  while (std::any_of(streams.begin(), streams.end(), [](const Stream& s) { return s.open; })) {
    if ((cancel_requested_.load() || shutdown_.load()) && term_sent == absl::InfiniteFuture()) {
      child->Signal(SIGTERM);
      term_sent = absl::Now();
    }
    if (absl::Now() - term_sent > options_.kill_grace) child->Signal(SIGKILL);
    std::vector<pollfd> fds;
    for (const Stream& s : streams) fds.push_back({s.open ? s.fd : -1, POLLIN, 0});
    poll(fds.data(), fds.size(), 50);
    for (size_t i = 0; i < streams.size(); ++i) {
      Stream& s = streams[i];
      if (!s.open || fds[i].revents == 0) continue;
      char buf[65536];
      const ssize_t n = read(s.fd, buf, sizeof buf);
      if (n <= 0) {
        if (n < 0 && errno == EINTR) continue;
        if (!s.buffer.empty()) on_line(s, s.buffer);
        s.open = false;
        continue;
      }
      s.buffer.append(buf, n);
      size_t start = 0, nl;
      while ((nl = s.buffer.find('\n', start)) != std::string::npos) {
        on_line(s, s.buffer.substr(start, nl - start));
        start = nl + 1;
      }
      s.buffer.erase(0, start);
      if (s.buffer.size() > kMaxLine) {
        on_line(s, s.buffer);
        s.buffer.clear();
      }
    }
    if (absl::Now() >= next_flush) {
      relay->Flush();
      next_flush = absl::Now() + options_.flush_interval;
    }
  }
}

}  // namespace lmtrain
