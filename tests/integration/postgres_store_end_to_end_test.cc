// lm-server on a PostgreSQL job store (--store postgres://...): a real server process and lmctl
// against a real PostgreSQL server (tests/storage/postgres_test_server.h). Jobs land in the
// database and outlive the lm-server process that took them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "absl/strings/str_cat.h"
#include "tests/integration/cluster.h"
#include "tests/storage/postgres_test_server.h"

namespace lmtrain::testing {
namespace {
namespace fs = std::filesystem;

std::string TinyJob(const std::string& name) {
  const std::string data = SourceDir() + "/examples/data";
  return absl::StrCat(
      "name: ", name, "\ntask: clm\n",
      "model:\n  config: {model_type: gpt2, n_layer: 2, n_head: 2, n_embd: 32, n_positions: 64}\n",
      "tokenizer:\n  train: {type: bpe, vocab_size: 400}\n", "data:\n  train_file: ", data,
      "/austen_train.txt\n  block_size: 32\n", "training:\n  max_steps: 5\n  seed: 7\n");
}

TEST(PostgresStoreEndToEnd, SubmitAndListThroughLmctlKeepJobsInTheDatabase) {
  absl::StatusOr<PostgresTestServer*> postgres = SharedPostgresServer();
  if (!postgres.ok()) GTEST_SKIP() << postgres.status().message();
  absl::StatusOr<std::string> uri = (*postgres)->CreateDatabase();
  ASSERT_TRUE(uri.ok()) << uri.status();
  const std::string database = uri->substr(uri->rfind('/') + 1);
  std::string out, err, id;
  {
    auto cluster = Cluster::Start(0, 2.0, {"--store", *uri});
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    const fs::path job_file = (*cluster)->dir() / "job.yaml";
    std::ofstream(job_file) << TinyJob("pg-e2e");
    ASSERT_EQ((*cluster)->Lmctl({"submit", job_file.string()}, &out, &err), 0) << err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(out, m, std::regex("([0-9]+)\\s*$"))) << out;
    id = m[1].str();
    ASSERT_EQ((*cluster)->Lmctl({"list", "-o", "json"}, &out, &err), 0) << err;
    const nlohmann::json jobs = nlohmann::json::parse(out);
    ASSERT_EQ(jobs.size(), 1u) << out;
    EXPECT_EQ(jobs[0]["name"], "pg-e2e");
    EXPECT_EQ(jobs[0]["state"], "QUEUED");
  }
  absl::StatusOr<std::string> stored =
      (*postgres)->Query(database, absl::StrCat("SELECT name FROM jobs WHERE id = ", id));
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(*stored, "pg-e2e");
  // A new server (new data folder) on the same database serves the same job.
  auto again = Cluster::Start(0, 2.0, {"--store", *uri});
  ASSERT_TRUE(again.ok()) << again.status();
  ASSERT_EQ((*again)->Lmctl({"get", id, "-o", "json"}, &out, &err), 0) << err;
  EXPECT_EQ(nlohmann::json::parse(out)["name"], "pg-e2e");
}

TEST(PostgresStoreEndToEnd, BadOrUnreachableDatabaseFailsAtStartWithTheReason) {
  const fs::path data = fs::temp_directory_path() / absl::StrCat("lmtrain-pg-e2e-", getpid());
  const std::pair<std::string, std::string> cases[] = {
      {"postgres://nobody@127.0.0.1:1/jobs", "cannot connect to PostgreSQL at 127.0.0.1:1/jobs"},
      {"postgres://nobody@127.0.0.1/jobs?no_such_option=1", "URI is not valid"},
      {"mysql://nobody@127.0.0.1/jobs", "--store must be a postgres:// or postgresql:// URI"},
  };
  for (const auto& [store, reason] : cases) {
    PosixProcessLauncher launcher;
    LaunchSpec spec;
    spec.argv = {BinDir() + "/lm-server", "--listen", "127.0.0.1:0",
                 "--http-listen",         "",         "--data-dir",
                 data.string(),           "--store",  store};
    auto child = launcher.Launch(spec);
    ASSERT_TRUE(child.ok()) << child.status();
    ReadAll((*child)->stdout_fd());
    const std::string err = ReadAll((*child)->stderr_fd());
    EXPECT_EQ((*child)->Wait().exit_code, 1) << store;
    EXPECT_NE(err.find(reason), std::string::npos) << store << ": " << err;
  }
  std::error_code ec;
  fs::remove_all(data, ec);
}

}  // namespace
}  // namespace lmtrain::testing
