// lmctl's one-shot job commands: submit, list, get, cancel, retry, checkpoints.
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/job_format.h"
#include "client/lmctl_command.h"
#include "client/spec_uploader.h"
#include "client/worker_format.h"

namespace lmtrain {
namespace {

bool Structured(const CommandContext& c) { return c.output != OutputFormat::kText; }

int Submit(CommandContext& c) {
  auto mode = ParseUploadMode(c.no_upload ? "never" : c.upload);
  if (!mode.ok()) return FailWith(mode.status());
  auto id = SubmitJobFile(*c.client, c.channels->target(), c.channels->NewChannel(), c.args[0],
                          c.request_id, *mode, std::cerr);
  if (!id.ok()) return FailWith(id.status());
  std::cerr << "submitted " << c.args[0] << " as job " << *id << "\n";
  if (Structured(c)) {
    std::cout << RenderDocument({{"job_id", *id}}, c.output);
  } else {
    std::cout << *id << std::endl;
  }
  return 0;
}

// --view, else basic for the table (which shows no heavy field) and full for JSON/YAML.
absl::StatusOr<v1::JobView> ListView(const CommandContext& c) {
  if (c.view.empty()) return Structured(c) ? v1::JOB_VIEW_FULL : v1::JOB_VIEW_BASIC;
  if (c.view == "basic") return v1::JOB_VIEW_BASIC;
  if (c.view == "full") return v1::JOB_VIEW_FULL;
  return absl::InvalidArgumentError(
      absl::StrCat("--view must be basic or full (got '", c.view, "')"));
}

// One page (or with --all every page); then, when more follow, the command for the next page:
// on stdout after a table, on stderr after JSON/YAML (which stay one array).
int List(CommandContext& c) {
  auto view = ListView(c);
  if (!view.ok()) return FailWith(view.status());
  std::vector<v1::Job> jobs;
  std::string token = c.page_token;
  do {
    auto page = c.client->ListPage(static_cast<int>(c.limit), token, *view);
    if (!page.ok()) return FailWith(page.status());
    jobs.insert(jobs.end(), page->jobs().begin(), page->jobs().end());
    token = page->next_page_token();
  } while (c.all && !token.empty());
  const std::string next = token.empty() ? ""
                                         : absl::StrCat("more: lmctl list --limit ", c.limit,
                                                        c.view.empty() ? "" : " --view ", c.view,
                                                        " --page-token ", token, "\n");
  if (Structured(c)) {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& job : jobs) {
      all.push_back(*view == v1::JOB_VIEW_BASIC ? BasicJobToJson(job) : JobToJson(job));
    }
    std::cout << RenderDocument(all, c.output);
    std::cerr << next;
  } else {
    std::cout << JobsToTable(jobs) << next;
  }
  return 0;
}

int Get(CommandContext& c) {
  auto job = c.client->Get(c.args[0]);
  if (!job.ok()) return FailWith(job.status());
  std::cout << (Structured(c) ? RenderDocument(JobToJson(*job, /*with_spec=*/true), c.output)
                              : JobToText(*job));
  return 0;
}

int Cancel(CommandContext& c) {
  auto state = c.client->Cancel(c.args[0]);
  if (!state.ok()) return FailWith(state.status());
  const std::string shown = *state == v1::RUNNING ? "cancelling" : v1::JobState_Name(*state);
  if (Structured(c)) {
    std::cout << RenderDocument({{"job_id", c.args[0]}, {"state", v1::JobState_Name(*state)}},
                                c.output);
  } else {
    std::cout << "job " << c.args[0] << " " << shown << std::endl;
  }
  return 0;
}

int Retry(CommandContext& c) {
  auto id = c.client->Retry(c.args[0]);
  if (!id.ok()) return FailWith(id.status());
  std::cerr << "job " << c.args[0] << " retried as job " << *id << "\n";
  if (Structured(c)) {
    std::cout << RenderDocument({{"job_id", *id}, {"retry_of", c.args[0]}}, c.output);
  } else {
    std::cout << *id << std::endl;
  }
  return 0;
}

int Checkpoints(CommandContext& c) {
  auto job = c.client->Get(c.args[0]);
  if (!job.ok()) return FailWith(job.status());
  std::cout << (Structured(c) ? RenderDocument(CheckpointsToJson(*job), c.output)
                              : CheckpointsToTable(*job));
  return 0;
}

}  // namespace

std::vector<Command> JobCommands() {
  return {
      {"submit", 1, 1, "FILE [--request-id K]", "validate and submit a job file; prints the job id",
       Submit},
      {"list", 0, 0, "[--limit N] [--page-token T | --all] [--view basic|full]",
       "jobs, newest first", List},
      {"get", 1, 1, "ID", "one job", Get},
      {"cancel", 1, 1, "ID", "cancel a queued or running job", Cancel},
      {"retry", 1, 1, "ID", "resubmit a FAILED or CANCELLED job as a new job; prints its id",
       Retry},
      {"checkpoints", 1, 1, "ID", "the job's checkpoints (step, time, path)", Checkpoints},
  };
}

int FailWith(const absl::Status& status) {
  std::cerr << "lmctl: " << status.message() << "\n";
  return 1;
}

}  // namespace lmtrain
