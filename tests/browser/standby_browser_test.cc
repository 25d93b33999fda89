// A standby replica's dashboard in a real browser: two lm-server replicas on one PostgreSQL
// database (the ctest fixture's), a queued job, and standby_dashboard.py in headless Chromium
// against the standby. The page shows where the active replica is, and Cancel there tells the
// user to cancel on the active replica instead of following the redirect; the job stays
// queued (checked over gRPC). Screenshots: BUILD/test-artifacts/browser-standby/.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "client/job_client.h"
#include "tests/browser/browser_util.h"
#include "tests/integration/process_group.h"
#include "tests/storage/postgres_test_server.h"

namespace lmtrain::testing {
namespace {
namespace fs = std::filesystem;

TEST(StandbyDashboardBrowser, ShowsTheActiveReplicaAndDoesNotCancelHere) {
  const std::string chromium = ChromiumPath();
  if (chromium.empty()) {
    GTEST_SKIP() << "needs chromium on PATH (scripts/setup.sh --tests installs it)";
  }
  absl::StatusOr<PostgresTestServer*> postgres = SharedPostgresServer();
  if (!postgres.ok()) GTEST_SKIP() << postgres.status().message();
  const std::string python = LMTRAIN_PYTHON;
  ASSERT_NO_FATAL_FAILURE(ExpectPlaywright(python));
  absl::StatusOr<std::string> uri = (*postgres)->CreateDatabase();
  ASSERT_TRUE(uri.ok()) << uri.status();
  ProcessGroup::Options options;
  options.servers = 2;  // Server 0 starts first: it is the active one.
  options.workers = 0;  // The job stays queued.
  options.server_args = {"--store", *uri, "--lease-ttl-ms", "2000", "--lease-renew-ms", "400"};
  ProcessGroup group(options);
  ASSERT_TRUE(group.StartAll().ok());
  const fs::path job_file = group.dir() / "job.yaml";
  std::ofstream(group.dir() / "train.txt") << "hello world\n";
  std::ofstream(job_file) << "name: queued\ntask: clm\nmodel: {config: {model_type: gpt2, "
                             "n_layer: 1, n_head: 2, n_embd: 8, n_positions: 32}}\n"
                             "tokenizer: {train: {vocab_size: 50}}\n"
                             "data: {train_file: train.txt, block_size: 8}\n";
  JobClient client(group.address());
  auto id = client.Submit(job_file.string(), "standby-browser");
  ASSERT_TRUE(id.ok()) << id.status();

  const fs::path out = fs::path(BinDir()).parent_path() / "test-artifacts" / "browser-standby";
  fs::remove_all(out);
  fs::create_directories(out);
  LaunchSpec spec;
  spec.argv = {python,
               (fs::path(SourceDir()) / "tests" / "browser" / "standby_dashboard.py").string(),
               absl::StrCat("http://127.0.0.1:", group.http_port(1), "/"),
               absl::StrCat("http://127.0.0.1:", group.http_port(0)), *id, out.string()};
  spec.env = {{"CHROMIUM", chromium}};
  std::string stdout_text, err;
  const int code = RunProgram(spec, &stdout_text, &err);
  std::cout << "standby_dashboard.py: " << stdout_text << err << std::endl;
  ASSERT_EQ(code, 0) << stdout_text << err;
  EXPECT_TRUE(nlohmann::json::parse(stdout_text)["ok"]);

  auto job = client.Get(*id);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->state(), v1::QUEUED);
}

}  // namespace
}  // namespace lmtrain::testing
