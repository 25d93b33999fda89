// lmctl's cluster views: workers, and explain (why a job waits or failed).
#include <iostream>

#include "absl/time/clock.h"
#include "client/job_explain.h"
#include "client/lmctl_command.h"
#include "client/worker_format.h"

namespace lmtrain {
namespace {

int Workers(CommandContext& c) {
  auto workers = c.client->ListWorkers();
  if (!workers.ok()) return FailWith(workers.status());
  if (c.output != OutputFormat::kText) {
    nlohmann::json all = nlohmann::json::array();
    for (const v1::Worker& w : *workers) all.push_back(WorkerToJson(w));
    std::cout << RenderDocument(all, c.output);
  } else {
    std::cout << WorkersToTable(*workers, absl::ToUnixMillis(absl::Now()));
  }
  return 0;
}

int Explain(CommandContext& c) {
  auto job = c.client->Get(c.args[0]);
  if (!job.ok()) return FailWith(job.status());
  auto workers = c.client->ListWorkers();
  if (!workers.ok()) return FailWith(workers.status());
  const nlohmann::json explanation = ExplainJob(*job, *workers);
  std::cout << (c.output != OutputFormat::kText ? RenderDocument(explanation, c.output)
                                                : ExplanationToText(explanation));
  return 0;
}

}  // namespace

std::vector<Command> ClusterCommands() {
  return {
      {"workers", 0, 0, "", "registered workers: slots used/total, labels, devices, last seen",
       Workers},
      {"explain", 1, 1, "ID", "why a job waits (resources asked vs offered) or why it failed",
       Explain},
  };
}

}  // namespace lmtrain
