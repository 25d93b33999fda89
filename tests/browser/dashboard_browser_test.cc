// The dashboard in a real browser: headless Chromium (Debian's chromium, driven by
// dashboard.py with Python Playwright from the project's .venv) against real lm-server +
// lm-worker processes training a tiny GPT-2. Checks the jobs table, the charts' data points, and
// that Cancel on the page cancels the job (confirmed here over gRPC). Screenshots:
// BUILD/test-artifacts/browser/. Skips only when chromium is not installed; fails when .venv or
// its playwright package is missing (scripts/setup.sh --tests installs both; Playwright never
// downloads a browser here).
#include <gtest/gtest.h>
#include <httplib.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/job_client.h"
#include "tests/browser/browser_util.h"
#include "tests/integration/cluster.h"

namespace lmtrain::testing {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

std::string TinyLongJob() {
  const std::string data = SourceDir() + "/examples/data";
  return absl::StrCat(
      "name: browser-job\ntask: clm\n",
      "model:\n  config: {model_type: gpt2, n_layer: 2, n_head: 2, n_embd: 32, n_positions: 64}\n",
      "tokenizer:\n  train: {type: bpe, vocab_size: 400}\n", "data:\n  train_file: ", data,
      "/austen_train.txt\n  validation_file: ", data, "/austen_valid.txt\n  block_size: 32\n",
      "training:\n  learning_rate: 3.0e-3\n  per_device_train_batch_size: 8\n",
      "  max_steps: 100000\n  warmup_steps: 5\n  logging_steps: 2\n",
      "  evaluation_strategy: steps\n  eval_steps: 10\n  save_steps: 20\n  max_eval_samples: 32\n",
      "  eval_on_start: true\n  seed: 7\n  include_num_input_tokens_seen: true\n");
}

// Waits until the job has `loss_points` metric points with a loss and one with eval_loss.
bool WaitForMetrics(int http_port, const std::string& id, int loss_points) {
  httplib::Client http("127.0.0.1", http_port);
  const absl::Time deadline = absl::Now() + absl::Seconds(180);
  while (absl::Now() < deadline) {
    auto res = http.Get("/api/v1/jobs/" + id + "/metrics");
    if (res && res->status == 200) {
      json body = json::parse(res->body);
      int losses = 0, evals = 0;
      for (const json& p : body["points"]) {
        losses += p.contains("loss");
        evals += p.contains("eval_loss");
      }
      if (losses >= loss_points && evals >= 1) return true;
    }
    absl::SleepFor(absl::Milliseconds(250));
  }
  return false;
}

TEST(DashboardBrowser, JobsTableChartsAndCancelFromThePage) {
  const std::string chromium = ChromiumPath();
  if (chromium.empty()) {
    GTEST_SKIP() << "needs chromium on PATH (scripts/setup.sh --tests installs it)";
  }
  // The interpreter of the project's .venv (LMTRAIN_PYTHON, set in tests/browser/CMakeLists.txt).
  const std::string python = LMTRAIN_PYTHON;
  ASSERT_NO_FATAL_FAILURE(ExpectPlaywright(python));
  const fs::path script_dir = fs::path(SourceDir()) / "tests" / "browser";
  const fs::path out = fs::path(BinDir()).parent_path() / "test-artifacts" / "browser";
  fs::remove_all(out);  // Only this run's screenshots.
  fs::create_directories(out);

  auto cluster = Cluster::Start(1);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const fs::path job_file = (*cluster)->dir() / "job" / "job.yaml";
  fs::create_directories(job_file.parent_path());
  std::ofstream(job_file) << TinyLongJob();
  JobClient client((*cluster)->address());
  auto id = client.Submit(job_file.string(), "");
  ASSERT_TRUE(id.ok()) << id.status();
  ASSERT_TRUE(WaitForMetrics((*cluster)->http_port(), *id, 4)) << "no training metrics in 180 s";

  LaunchSpec spec;
  spec.argv = {python, (script_dir / "dashboard.py").string(),
               absl::StrCat("http://127.0.0.1:", (*cluster)->http_port(), "/"), *id, out.string()};
  spec.env = {{"CHROMIUM", chromium}};
  std::string stdout_text, err;
  const int code = RunProgram(spec, &stdout_text, &err);
  std::cout << "dashboard.py: " << stdout_text << err << std::endl;
  for (const char* name :
       {"jobs.png", "job.png", "job-cancelled.png", "workers.png", "failure.png"}) {
    if (fs::exists(out / name)) std::cout << "screenshot: " << (out / name).string() << "\n";
  }
  ASSERT_EQ(code, 0) << stdout_text << err;
  json summary = json::parse(stdout_text);
  EXPECT_TRUE(summary["ok"]);
  EXPECT_GE(summary["rows"].get<int>(), 1);
  EXPECT_GE(summary["charts"]["trainLossPolyline"].get<int>(), 3);

  // The cancel from the page reached the job: gRPC agrees.
  auto job = client.Get(*id);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->state(), v1::CANCELLED);
}

}  // namespace
}  // namespace lmtrain::testing
