// `lmctl events` against a real lm-server process on loopback (no worker: jobs stay QUEUED
// until cancelled, which ends them at once).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "absl/strings/str_split.h"
#include "client/job_client.h"
#include "tests/integration/cluster.h"

namespace lmtrain::testing {
namespace {

class LmctlEventsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = Cluster::Start(/*worker_slots=*/0);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    client_ = std::make_unique<JobClient>(cluster_->address());
    job_file_ = (cluster_->dir() / "job.yaml").string();
    std::ofstream(cluster_->dir() / "train.txt") << "hello world\nthe quick brown fox\n";
    std::ofstream(job_file_)
        << "name: ev\ntask: clm\nmodel:\n  config: {model_type: gpt2, n_layer: 1, n_head: 2, "
           "n_embd: 8, n_positions: 32}\ntokenizer:\n  train: {type: bpe, vocab_size: 50}\n"
           "data:\n  train_file: train.txt\n  block_size: 8\n";
  }

  std::string SubmitJob() {
    auto id = client_->Submit(job_file_, "");
    EXPECT_TRUE(id.ok()) << id.status();
    return id.value_or("");
  }

  std::vector<std::string> Lines(const std::string& text) {
    return absl::StrSplit(text, '\n', absl::SkipEmpty());
  }

  std::unique_ptr<Cluster> cluster_;
  std::unique_ptr<JobClient> client_;
  std::string job_file_;
};

TEST_F(LmctlEventsTest, TableOfAFinishedJob) {
  const std::string id = SubmitJob();
  ASSERT_TRUE(client_->Cancel(id).ok());
  std::string out, err;
  ASSERT_EQ(cluster_->Lmctl({"events", id}, &out, &err), 0) << err;
  const std::vector<std::string> lines = Lines(out);
  ASSERT_EQ(lines.size(), 3u) << out;
  EXPECT_EQ(lines[0].rfind("  SEQ  TIME", 0), 0u) << out;
  EXPECT_NE(lines[1].find("    1  "), std::string::npos) << out;
  EXPECT_NE(lines[1].find("state       QUEUED      submitted"), std::string::npos) << out;
  EXPECT_NE(lines[2].find("    2  "), std::string::npos) << out;
  EXPECT_NE(lines[2].find("CANCELLED"), std::string::npos) << out;
}

TEST_F(LmctlEventsTest, JsonLines) {
  const std::string id = SubmitJob();
  ASSERT_TRUE(client_->Cancel(id).ok());
  std::string out, err;
  ASSERT_EQ(cluster_->Lmctl({"events", id, "-o", "json"}, &out, &err), 0) << err;
  const std::vector<std::string> lines = Lines(out);
  ASSERT_EQ(lines.size(), 2u) << out;
  const nlohmann::json first = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(first["seq"], 1);
  EXPECT_EQ(first["job_id"], id);
  EXPECT_EQ(first["type"], "state");
  EXPECT_EQ(first["state"], "QUEUED");
  EXPECT_EQ(first["reason"], "submitted");
  EXPECT_TRUE(first["time"].is_string());
  EXPECT_EQ(nlohmann::json::parse(lines[1])["state"], "CANCELLED");
}

TEST_F(LmctlEventsTest, WithoutFollowStopsAtTheEndOfTheReplay) {
  const std::string id = SubmitJob();  // Stays QUEUED: there is no worker.
  std::string out, err;
  ASSERT_EQ(cluster_->Lmctl({"events", id, "-o", "json"}, &out, &err), 0) << err;
  const std::vector<std::string> lines = Lines(out);
  ASSERT_EQ(lines.size(), 1u) << out;
  EXPECT_EQ(nlohmann::json::parse(lines[0])["state"], "QUEUED");
}

TEST_F(LmctlEventsTest, FollowRunsUntilTheJobEnds) {
  const std::string id = SubmitJob();
  std::string out, err;
  int rc = -1;
  std::thread follower([&] {
    rc = cluster_->Lmctl({"events", id, "-f", "-o", "json"}, &out, &err);
  });
  // Whether lmctl attaches before or after the cancel, it must print both events and exit.
  ASSERT_TRUE(client_->Cancel(id).ok());
  follower.join();
  ASSERT_EQ(rc, 0) << err;
  const std::vector<std::string> lines = Lines(out);
  ASSERT_EQ(lines.size(), 2u) << out;
  EXPECT_EQ(nlohmann::json::parse(lines[1])["state"], "CANCELLED");
}

TEST_F(LmctlEventsTest, UnknownJobFails) {
  std::string out, err;
  EXPECT_EQ(cluster_->Lmctl({"events", "999"}, &out, &err), 1);
  EXPECT_NE(err.find("999"), std::string::npos) << err;
  EXPECT_EQ(out, "");
}

TEST_F(LmctlEventsTest, GetShowsNewJobFields) {
  const std::string id = SubmitJob();
  std::string out, err;
  ASSERT_EQ(cluster_->Lmctl({"get", id, "-o", "json"}, &out, &err), 0) << err;
  const nlohmann::json job = nlohmann::json::parse(out);
  EXPECT_EQ(job["resources"]["workers"], 1);
  EXPECT_EQ(job["retries"], 0);
  EXPECT_EQ(job["attempts"], nlohmann::json::array());
  EXPECT_TRUE(job.contains("user"));
  EXPECT_TRUE(job.contains("waiting_reason"));
}

}  // namespace
}  // namespace lmtrain::testing
