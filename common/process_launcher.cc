#include "common/process_launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <string_view>

#include "absl/strings/str_cat.h"

extern char** environ;

namespace lmtrain {
namespace {

class PosixChild final : public ChildProcess {
 public:
  PosixChild(pid_t pid, int out, int err, int events)
      : pid_(pid), out_(out), err_(err), events_(events) {}
  ~PosixChild() override {
    if (!reaped_.load()) {
      Signal(SIGKILL);
      Wait();
    }
    for (int fd : {out_, err_, events_}) close(fd);
  }
  int pid() const override { return pid_; }
  int stdout_fd() const override { return out_; }
  int stderr_fd() const override { return err_; }
  int events_fd() const override { return events_; }
  void Signal(int sig) override {
    if (!reaped_.load()) kill(-pid_, sig);  // The child leads its own process group.
  }
  ExitStatus Wait() override {
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    reaped_.store(true);
    ExitStatus s;
    if (WIFEXITED(status)) {
      s.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
      s.exit_code = -1;
      s.signal = WTERMSIG(status);
    }
    kill(-pid_, SIGKILL);  // Grandchildren left in the group go too.
    return s;
  }

 private:
  const pid_t pid_;
  const int out_, err_, events_;
  std::atomic<bool> reaped_{false};
};

// Runs in the forked child: only async-signal-safe calls until exec.
[[noreturn]] void ExecChild(char* const* argv, char* const* envp, const char* cwd, int out,
                            int err, int events, int status_fd) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  dup2(out, 1);
  dup2(err, 2);
  dup2(events, 3);
  int null_fd = open("/dev/null", O_RDONLY);
  dup2(null_fd, 0);
  // Close everything above 3 except the exec-status pipe (close-on-exec).
  for (int fd = 4; fd < 1024; ++fd) {
    if (fd != status_fd) close(fd);
  }
  if (cwd != nullptr && chdir(cwd) != 0) {
    int e = errno;
    (void)!write(status_fd, &e, sizeof e);
    _exit(127);
  }
  execve(argv[0], argv, envp);
  int e = errno;
  (void)!write(status_fd, &e, sizeof e);
  _exit(127);
}

}  // namespace

absl::StatusOr<std::unique_ptr<ChildProcess>> PosixProcessLauncher::Launch(
    const LaunchSpec& spec) {
  if (spec.argv.empty()) return absl::InvalidArgumentError("launch: empty argv");
  std::vector<char*> argv;
  for (const std::string& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const std::string_view name = entry.substr(0, entry.find('='));
    const bool replaced = std::any_of(spec.env.begin(), spec.env.end(),
                                      [&](const auto& kv) { return kv.first == name; });
    if (!replaced) env_strings.emplace_back(entry);
  }
  for (const auto& [k, v] : spec.env) env_strings.push_back(absl::StrCat(k, "=", v));
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);

  int out[2], err[2], events[2], status[2];
  if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC) || pipe2(events, O_CLOEXEC) ||
      pipe2(status, O_CLOEXEC)) {
    return absl::InternalError(absl::StrCat("launch: pipe: ", strerror(errno)));
  }
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError(absl::StrCat("launch: fork: ", strerror(errno)));
  if (pid == 0) {
    ExecChild(argv.data(), envp.data(), spec.cwd.empty() ? nullptr : spec.cwd.c_str(), out[1],
              err[1], events[1], status[1]);
  }
  setpgid(pid, pid);  // Also here, so Signal() works even before the child runs.
  for (int fd : {out[1], err[1], events[1], status[1]}) close(fd);
  int child_errno = 0;
  ssize_t n;
  while ((n = read(status[0], &child_errno, sizeof child_errno)) < 0 && errno == EINTR) {
  }
  close(status[0]);
  auto child = std::make_unique<PosixChild>(pid, out[0], err[0], events[0]);
  if (n > 0) {
    child->Wait();
    return absl::NotFoundError(
        absl::StrCat("cannot start ", spec.argv[0], ": ", strerror(child_errno)));
  }
  return child;
}

}  // namespace lmtrain
