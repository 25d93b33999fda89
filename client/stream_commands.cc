// lmctl's streaming commands: watch (live progress), events (the event log), logs (the
// trainer's output lines).
#include <chrono>
#include <iostream>

#include "client/job_format.h"
#include "client/lmctl_command.h"
#include "client/progress_bar.h"

namespace lmtrain {
namespace {

constexpr char kClearLine[] = "\r\033[K";

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// On a terminal: state changes (and logs with --logs) as lines above a progress bar that is
// redrawn in place on each metrics event.
class TerminalWatch {
 public:
  explicit TerminalWatch(bool logs) : logs_(logs) {}
  void OnEvent(const v1::JobEvent& e) {
    if (e.has_metrics()) {
      bar_.Update(e.metrics(), NowSeconds());
      if (bar_.has_step()) {
        std::cout << kClearLine << bar_.Render() << std::flush;
        shown_ = true;
      }
      return;
    }
    const std::string line = EventToLine(e, logs_);
    if (line.empty()) return;
    if (shown_) std::cout << kClearLine;
    std::cout << line << "\n";
    if (shown_) std::cout << bar_.Render();
    std::cout << std::flush;
  }
  void Finish() {
    if (shown_) std::cout << "\n";
  }

 private:
  const bool logs_;
  ProgressBar bar_;
  bool shown_ = false;
};

int Watch(CommandContext& c) {
  const bool structured = c.output != OutputFormat::kText;
  TerminalWatch terminal(c.logs);
  const bool live = !structured && c.stdout_is_tty;
  auto status = c.client->Watch(c.args[0], 0, [&](const v1::JobEvent& e) {
    if (structured) {
      if (!e.has_log() || c.logs) std::cout << RenderStreamItem(EventToJson(e), c.output);
      std::cout << std::flush;
    } else if (live) {
      terminal.OnEvent(e);
    } else {
      const std::string line = EventToLine(e, c.logs);
      if (!line.empty()) std::cout << line << std::endl;
    }
  });
  terminal.Finish();
  if (!status.ok()) return FailWith(status);
  auto job = c.client->Get(c.args[0]);
  if (!job.ok()) return FailWith(job.status());
  std::string summary = "job " + job->id() + " " + v1::JobState_Name(job->state());
  if (!job->error().empty()) summary += ": " + job->error();
  (structured ? std::cerr : std::cout) << summary << std::endl;
  return job->state() == v1::SUCCEEDED ? 0 : 1;
}

// The job's event log from its first event, as a table, JSON lines or YAML documents; with
// -f, then live until the job ends. Exit 0 once the log (or, with -f, the job) has ended.
int Events(CommandContext& c) {
  const bool structured = c.output != OutputFormat::kText;
  bool header_shown =
      structured;  // The table's header comes with the first row, not before an error.
  auto status = c.client->Events(c.args[0], c.follow, [&](const v1::JobEvent& e) {
    if (!header_shown) std::cout << EventsTableHeader();
    header_shown = true;
    std::cout << (structured ? RenderStreamItem(EventToJson(e), c.output) : EventToRow(e))
              << std::flush;
  });
  if (!status.ok()) return FailWith(status);
  if (!header_shown) std::cout << EventsTableHeader();
  return 0;
}

// The trainer's output (and the server's notes) from the job's log events: the text as it
// was written, or {seq,time,stream,text} items with -o json|yaml.
int Logs(CommandContext& c) {
  auto status = c.client->Events(c.args[0], c.follow, [&](const v1::JobEvent& e) {
    if (!e.has_log()) return;
    if (c.output == OutputFormat::kText) {
      std::cout << e.log().text() << "\n" << std::flush;
      return;
    }
    nlohmann::json item = {{"seq", e.seq()},
                           {"time", TimestampJson(e.time())},
                           {"stream", e.log().stream()},
                           {"text", e.log().text()}};
    std::cout << RenderStreamItem(item, c.output) << std::flush;
  });
  return status.ok() ? 0 : FailWith(status);
}

}  // namespace

std::vector<Command> StreamCommands() {
  return {
      {"watch", 1, 1, "ID [--logs]",
       "follow the job until it ends: a progress bar on a terminal (exit 0 if SUCCEEDED)", Watch},
      {"events", 1, 1, "ID [-f]", "the job's event log (-f: follow until it ends)", Events},
      {"logs", 1, 1, "ID [-f]", "the job's log lines (-f: follow until it ends)", Logs},
  };
}

}  // namespace lmtrain
