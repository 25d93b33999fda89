// lm-worker: the agent that runs lm-train jobs for lm-server on this machine.
//   lm-worker --server HOST:PORT --work-dir DIR --slots N [--trainer PATH]
#include <filesystem>
#include <iostream>

#include "common/command_line.h"
#include "common/termination_signals.h"
#include "worker/agent/worker_agent.h"

int main(int argc, char** argv) {
  using namespace lmtrain;
  std::string server = "127.0.0.1:50051", work_dir = "./lm-worker", trainer = DefaultTrainerPath();
  std::string name;
  int64_t slots = 1;
  double kill_grace_s = 10;
  CommandLine cl("lm-worker", "runs lm-train jobs handed out by lm-server");
  cl.AddString("server", &server, "lm-server address HOST:PORT");
  cl.AddString("work-dir", &work_dir, "scratch folder for job files");
  cl.AddInt("slots", &slots, "jobs to run at once");
  cl.AddString("name", &name, "worker name shown by the server (default: hostname)");
  cl.AddString("trainer", &trainer, "path of the lm-train executable");
  cl.AddDouble("kill-grace-seconds", &kill_grace_s, "SIGTERM -> SIGKILL delay on cancel");
  auto args = cl.Parse(argc - 1, argv + 1);
  if (!args.ok()) {
    std::cerr << args.status().message() << "\n";
    return IsHelpRequest(args.status()) ? 0 : 2;
  }
  if (slots <= 0) {
    std::cerr << "--slots must be > 0\n";
    return 2;
  }
  std::error_code ec;
  std::filesystem::create_directories(work_dir, ec);
  if (ec) {
    std::cerr << "cannot create --work-dir " << work_dir << ": " << ec.message() << "\n";
    return 1;
  }
  GrpcServerClient client(server);
  PosixProcessLauncher launcher;
  WorkerAgent::Options options;
  options.name = name;
  options.slots = static_cast<int>(slots);
  options.work_dir = std::filesystem::absolute(work_dir).string();
  options.trainer_path = trainer;
  options.kill_grace = absl::Seconds(kill_grace_s);
  WorkerAgent agent(&client, &launcher, options);
  WatchTerminationSignals([&agent](int) { agent.Stop(); });
  std::cerr << "lm-worker: serving " << server << " with " << slots << " slot(s)\n";
  agent.Run();
  std::cerr << "lm-worker: stopped\n";
  return 0;
}
