// `lmctl watch` on a terminal: lmctl runs on a pseudo-terminal (forkpty) against a real
// lm-server while a ScriptedWorker reports progress; the bar is redrawn in place.
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "absl/time/clock.h"
#include "client/job_client.h"
#include "tests/client/scripted_worker.h"
#include "tests/integration/cluster.h"

namespace lmtrain::testing {
namespace {

using W = ScriptedWorker;

// lmctl on a pty; Until() reads its output until a string shows up.
class PtyLmctl {
 public:
  explicit PtyLmctl(const std::vector<std::string>& args) {
    pid_ = forkpty(&fd_, nullptr, nullptr, nullptr);
    if (pid_ == 0) {
      std::vector<char*> argv;
      for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
  }
  ~PtyLmctl() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      Wait();
    }
    if (fd_ >= 0) close(fd_);
  }
  bool started() const { return pid_ > 0; }
  bool Until(const std::string& text, absl::Duration timeout = absl::Seconds(20)) {
    const absl::Time deadline = absl::Now() + timeout;
    while (output_.find(text) == std::string::npos && absl::Now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      char buf[4096];
      const ssize_t n = read(fd_, buf, sizeof buf);
      if (n <= 0) break;  // EIO once the child has exited.
      output_.append(buf, n);
    }
    return output_.find(text) != std::string::npos;
  }
  int Wait() {
    int status = 0;
    waitpid(pid_, &status, 0);
    exited_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  const std::string& output() const { return output_; }

 private:
  int fd_ = -1;
  pid_t pid_ = -1;
  bool exited_ = false;
  std::string output_;
};

TEST(LmctlWatchTtyTest, ProgressBarRedrawnInPlace) {
  auto cluster = Cluster::Start(/*worker_slots=*/0);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  std::ofstream((*cluster)->dir() / "train.txt") << "hello world\n";
  const std::string job_file = ((*cluster)->dir() / "job.yaml").string();
  std::ofstream(job_file) << "name: bar\ntask: clm\nmodel:\n  config: {model_type: gpt2, "
                             "n_layer: 1, n_head: 2, n_embd: 8, n_positions: 32}\ntokenizer:\n"
                             "  train: {type: bpe, vocab_size: 50}\ndata:\n  train_file: "
                             "train.txt\n  block_size: 8\n";
  JobClient client((*cluster)->address());
  auto id = client.Submit(job_file, "");
  ASSERT_TRUE(id.ok()) << id.status();
  ScriptedWorker worker((*cluster)->address(), "tty", 1, {});
  ASSERT_TRUE(worker.Register().ok());
  ASSERT_TRUE(worker.WaitForAssignment().ok());
  ASSERT_TRUE(worker.Report({W::Started(), W::Metrics(10, 100, 3.0, 500)}).ok());

  PtyLmctl lmctl({BinDir() + "/lmctl", "--server", (*cluster)->address(), "watch", *id});
  ASSERT_TRUE(lmctl.started());
  ASSERT_TRUE(lmctl.Until("10/100")) << lmctl.output();
  EXPECT_TRUE(lmctl.Until("ETA ?")) << lmctl.output();
  ASSERT_TRUE(worker.Report({W::Metrics(60, 100, 2.0, 800)}).ok());
  ASSERT_TRUE(lmctl.Until("60/100")) << lmctl.output();
  ASSERT_TRUE(worker.Report({W::Exited(0, "")}).ok());
  ASSERT_TRUE(lmctl.Until("SUCCEEDED\r\n")) << lmctl.output();
  EXPECT_EQ(lmctl.Wait(), 0);
  const std::string& out = lmctl.output();
  EXPECT_NE(out.find("\r\033[K[##..................]  10/100"), std::string::npos) << out;  // 10%
  EXPECT_NE(out.find("\r\033[K[############........]  60/100"), std::string::npos) << out;  // 60%
  EXPECT_NE(out.find("loss 2.0000  800 tok/s  ETA "), std::string::npos) << out;
  EXPECT_EQ(out.find("ETA ?", out.find("60/100")), std::string::npos) << out;  // Known by then.
  // The RUNNING line is printed as a line of its own, not mixed into the bar.
  EXPECT_NE(out.find("RUNNING"), std::string::npos) << out;
}

}  // namespace
}  // namespace lmtrain::testing
