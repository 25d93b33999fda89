#include "tests/integration/cluster.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <regex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"

namespace lmtrain::testing {
namespace fs = std::filesystem;
namespace {

// Reads fd into *buffer until the text there matches `re` or the timeout passes; returns
// capture group 1. The buffer carries what was read over to the next call.
absl::StatusOr<std::string> WaitForMatch(int fd, const std::regex& re, absl::Duration timeout,
                                         std::string* seen) {
  const absl::Time deadline = absl::Now() + timeout;
  std::string& buffer = *seen;
  std::smatch m;
  if (std::regex_search(buffer, m, re)) return m[1].str();
  while (absl::Now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char buf[4096];
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    buffer.append(buf, n);
    if (std::regex_search(buffer, m, re)) return m[1].str();
  }
  return absl::DeadlineExceededError(absl::StrCat("no line matching in output: ", buffer));
}

// SIGTERM, then SIGKILL after 10 s if it is still running. The killer thread is joined
// before the child object goes away (a detached one would signal freed memory later).
void Stop(std::unique_ptr<ChildProcess>& child) {
  if (!child) return;
  child->Signal(SIGTERM);
  absl::Notification exited;
  std::thread killer([c = child.get(), &exited] {
    if (!exited.WaitForNotificationWithTimeout(absl::Seconds(10))) c->Signal(SIGKILL);
  });
  child->Wait();
  exited.Notify();
  killer.join();
  child.reset();
}

}  // namespace

std::string ReadAll(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) out.append(buf, n);
  return out;
}

absl::StatusOr<std::unique_ptr<Cluster>> Cluster::Start(
    int worker_slots, double kill_grace_s, const std::vector<std::string>& server_args) {
  std::unique_ptr<Cluster> c(new Cluster());
  static int counter = 0;
  c->dir_ = fs::temp_directory_path() / absl::StrCat("lmtrain-it-", getpid(), "-", counter++, "-",
                                                     absl::ToUnixMicros(absl::Now()));
  fs::create_directories(c->dir_);
  LaunchSpec spec;
  spec.argv = {BinDir() + "/lm-server",
               "--listen",
               "127.0.0.1:0",
               "--http-listen",
               "127.0.0.1:0",
               "--data-dir",
               (c->dir_ / "data").string(),
               "--lease-timeout-ms",
               "5000"};
  spec.argv.insert(spec.argv.end(), server_args.begin(), server_args.end());
  auto server = c->launcher_.Launch(spec);
  if (!server.ok()) return server.status();
  c->server_ = std::move(*server);
  std::string out;
  auto port = WaitForMatch(c->server_->stdout_fd(), std::regex("listening on [0-9.]+:([0-9]+)"),
                           absl::Seconds(20), &out);
  if (!port.ok()) return port.status();
  c->port_ = std::stoi(*port);
  // Printed right after the gRPC line.
  auto http_port = WaitForMatch(c->server_->stdout_fd(),
                                std::regex("dashboard at http://[0-9.]+:([0-9]+)/"),
                                absl::Seconds(20), &out);
  if (!http_port.ok()) return http_port.status();
  c->http_port_ = std::stoi(*http_port);
  if (worker_slots > 0) {
    absl::Status s = c->AddWorker(worker_slots, kill_grace_s);
    if (!s.ok()) return s;
  }
  return c;
}

absl::Status Cluster::AddWorker(int slots, double kill_grace_s) {
  if (worker_) return absl::FailedPreconditionError("the cluster has a worker already");
  auto worker = launcher_.Launch(
      {{BinDir() + "/lm-worker", "--server", address(), "--work-dir", (dir_ / "worker").string(),
        "--slots", std::to_string(slots), "--kill-grace-seconds", std::to_string(kill_grace_s)}});
  if (!worker.ok()) return worker.status();
  worker_ = std::move(*worker);
  return absl::OkStatus();
}

Cluster::~Cluster() {
  Stop(worker_);
  Stop(server_);
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

int Cluster::Lmctl(const std::vector<std::string>& args, std::string* out, std::string* err) {
  LaunchSpec spec;
  spec.argv = {BinDir() + "/lmctl", "--server", address()};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  auto child = launcher_.Launch(spec);
  if (!child.ok()) {
    *err = std::string(child.status().message());
    return -1;
  }
  // lmctl's output is small: read stderr fully after stdout (no deadlock for small output).
  *out = ReadAll((*child)->stdout_fd());
  *err = ReadAll((*child)->stderr_fd());
  return (*child)->Wait().exit_code;
}

}  // namespace lmtrain::testing
