#include "tests/integration/process_group.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <deque>
#include <fstream>
#include <regex>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "tests/integration/cluster.h"

namespace lmtrain::testing {
namespace fs = std::filesystem;
namespace {

// Copies the child's stdout and stderr to `log` until both close, each line prefixed with the
// wall-clock time it arrived ("[t=UNIX_MS] "), which ProcessGroup::LogTime reads back.
void Drain(ChildProcess* child, const std::string& log) {
  std::ofstream out(log, std::ios::app);
  pollfd fds[2] = {{child->stdout_fd(), POLLIN, 0}, {child->stderr_fd(), POLLIN, 0}};
  std::string partial[2];  // Per stream: the line read so far.
  int open = 2;
  while (open > 0) {
    if (poll(fds, 2, 200) <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      pollfd& p = fds[i];
      if (p.fd < 0 || p.revents == 0) continue;
      char buf[4096];
      const ssize_t n = read(p.fd, buf, sizeof buf);
      if (n > 0) {
        partial[i].append(buf, n);
        const std::string stamp = absl::StrCat("[t=", absl::ToUnixMillis(absl::Now()), "] ");
        for (size_t eol; (eol = partial[i].find('\n')) != std::string::npos;) {
          out << stamp << partial[i].substr(0, eol + 1);
          partial[i].erase(0, eol + 1);
        }
        out.flush();
      } else if (n == 0 || errno != EINTR) {
        if (!partial[i].empty()) out << partial[i] << '\n';
        p.fd = -1;
        --open;
      }
    }
  }
}

}  // namespace

ProcessGroup::ProcessGroup(Options options) : options_(options) {
  static int counter = 0;
  dir_ = fs::temp_directory_path() / absl::StrCat("lmtrain-chaos-", getpid(), "-", counter++, "-",
                                                  absl::ToUnixMicros(absl::Now()));
  fs::create_directories(dir_ / "logs");
  workers_.resize(options_.workers);
  servers_.resize(options_.servers);
  ports_.resize(options_.servers, 0);
  http_ports_.resize(options_.servers, 0);
}

std::string ProcessGroup::address() const {
  std::string all;
  for (size_t i = 0; i < ports_.size(); ++i) {
    absl::StrAppend(&all, i == 0 ? "" : ",", server_address(static_cast<int>(i)));
  }
  return all;
}

ProcessGroup::~ProcessGroup() {
  for (Proc& w : workers_) Kill(w);
  for (Proc& server : servers_) Kill(server);
  std::error_code ec;
  if (std::getenv("LMTRAIN_KEEP_CHAOS_DIR") == nullptr) fs::remove_all(dir_, ec);
}

absl::Status ProcessGroup::Launch(Proc& proc, const std::vector<std::string>& argv,
                                  const std::string& log, std::string* port_out,
                                  std::string* http_port_out) {
  auto child = launcher_.Launch({argv});
  if (!child.ok()) return child.status();
  proc.child = std::move(*child);
  if (port_out != nullptr) {  // Read stdout until the server says where it listens.
    // The dashboard line follows (StartServer always turns HTTP on).
    const std::regex re(
        "listening on [0-9.]+:([0-9]+)[\\s\\S]*dashboard at http://[0-9.]+:([0-9]+)/");
    std::string seen;
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    std::smatch m;
    while (!std::regex_search(seen, m, re)) {
      if (absl::Now() > deadline) {
        return absl::DeadlineExceededError(absl::StrCat("lm-server did not start: ", seen));
      }
      pollfd p{proc.child->stdout_fd(), POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      char buf[4096];
      const ssize_t n = read(p.fd, buf, sizeof buf);
      if (n <= 0) return absl::InternalError(absl::StrCat("lm-server exited: ", seen));
      seen.append(buf, n);
    }
    *port_out = m[1].str();
    *http_port_out = m[2].str();
    std::ofstream copy(log, std::ios::app);
    const std::string stamp = absl::StrCat("[t=", absl::ToUnixMillis(absl::Now()), "] ");
    for (absl::string_view line : absl::StrSplit(seen, '\n', absl::SkipEmpty())) {
      copy << stamp << line << '\n';
    }
  }
  proc.drain = std::thread(Drain, proc.child.get(), log);
  return absl::OkStatus();
}

void ProcessGroup::Kill(Proc& proc) {
  if (!proc.child) return;
  proc.child->Signal(SIGKILL);
  proc.child->Wait();
  if (proc.drain.joinable()) proc.drain.join();
  proc.child.reset();
}

absl::Status ProcessGroup::StartServer(int index) {
  const std::string listen = absl::StrCat("127.0.0.1:", ports_.at(index));  // 0 the first time.
  const std::string suffix = index == 0 ? "" : absl::StrCat("-", index);
  std::string port, http_port;
  std::vector<std::string> argv = {BinDir() + "/lm-server", "--listen", listen,
                                   "--http-listen", "127.0.0.1:0", "--data-dir",
                                   (dir_ / ("data" + suffix)).string(), "--lease-timeout-ms",
                                   std::to_string(options_.lease_timeout_ms)};
  if (options_.servers > 1) argv.insert(argv.end(), {"--artifacts", artifacts_dir()});
  argv.insert(argv.end(), options_.server_args.begin(), options_.server_args.end());
  absl::Status s = Launch(servers_.at(index), argv,
                          (dir_ / "logs" / ("server" + suffix + ".log")).string(), &port,
                          &http_port);
  if (!s.ok()) return s;
  ports_.at(index) = std::stoi(port);
  http_ports_.at(index) = std::stoi(http_port);
  return absl::OkStatus();
}

std::string ProcessGroup::LogTail(const std::string& log, int lines) const {
  std::ifstream in(dir_ / "logs" / log);
  std::deque<std::string> last;
  for (std::string line; std::getline(in, line);) {
    last.push_back(std::move(line));
    if (static_cast<int>(last.size()) > lines) last.pop_front();
  }
  std::string out;
  for (const std::string& line : last) absl::StrAppend(&out, line, "\n");
  return out;
}

std::optional<absl::Time> ProcessGroup::LogTime(const std::string& log, absl::string_view text,
                                                absl::Time after) const {
  std::ifstream in(dir_ / "logs" / log);
  const int64_t after_ms = absl::ToUnixMillis(after);
  for (std::string line; std::getline(in, line);) {
    int64_t ms = 0;
    const size_t end = line.find("] ");
    if (line.rfind("[t=", 0) != 0 || end == std::string::npos ||
        !absl::SimpleAtoi(line.substr(3, end - 3), &ms) || ms < after_ms) {
      continue;
    }
    if (line.find(std::string(text), end) != std::string::npos) return absl::FromUnixMillis(ms);
  }
  return std::nullopt;
}

void ProcessGroup::KillServer(int index) { Kill(servers_.at(index)); }

ExitStatus ProcessGroup::WaitServer(int index, absl::Duration timeout) {
  Proc& proc = servers_.at(index);
  ExitStatus status;
  absl::Notification exited;
  std::thread waiter([&] {
    status = proc.child->Wait();
    exited.Notify();
  });
  if (!exited.WaitForNotificationWithTimeout(timeout)) proc.child->Signal(SIGKILL);
  waiter.join();
  if (proc.drain.joinable()) proc.drain.join();
  proc.child.reset();
  return status;
}

absl::Status ProcessGroup::StartWorker(int index) {
  const int ports = 31000 + 20 * index + 2000 * (getpid() % 10);
  std::vector<std::string> argv = {
      BinDir() + "/lm-worker", "--server", address(), "--work-dir",
      (dir_ / absl::StrCat("worker-", index)).string(), "--slots",
      std::to_string(options_.slots_per_worker), "--name", absl::StrCat("w", index),
      "--kill-grace-seconds", "5", "--advertise-address", "127.0.0.1",
      "--rendezvous-ports", absl::StrCat(ports, "-", ports + 19)};
  if (index < static_cast<int>(options_.worker_args.size())) {
    argv.insert(argv.end(), options_.worker_args[index].begin(), options_.worker_args[index].end());
  }
  return Launch(workers_.at(index), argv,
                (dir_ / "logs" / absl::StrCat("worker-", index, ".log")).string(), nullptr,
                nullptr);
}

void ProcessGroup::KillWorker(int index) { Kill(workers_.at(index)); }

absl::Status ProcessGroup::StartAll() {
  for (int i = 0; i < options_.servers; ++i) {
    if (absl::Status s = StartServer(i); !s.ok()) return s;
  }
  for (int i = 0; i < options_.workers; ++i) {
    if (absl::Status s = StartWorker(i); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace lmtrain::testing
