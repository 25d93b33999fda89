// A real in-process lm-server (SQLite store): a GetJob right after another client's cancel,
// or after the job's own submit, shows the job as committed, even when an earlier GetJob of the
// same job was answered a moment before (the store keeps recently read jobs in memory).
#include <gtest/gtest.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "client/job_client.h"
#include "server/server.h"
#include "tests/test_paths.h"
#include "tests/text/dataset_cache/temp_dir.h"

namespace lmtrain {
namespace {

std::string JobText(const std::string& name) {
  return absl::StrCat("name: ", name,
                      "\ntask: clm\nmodel:\n  config: {model_type: gpt2, n_layer: 1, n_head: 2, "
                      "n_embd: 8, n_positions: 32}\ntokenizer:\n  train: {type: bpe, vocab_size: "
                      "50}\ndata:\n  train_file: ",
                      LMTRAIN_SOURCE_DIR, "/examples/data/austen_train.txt\n  block_size: 8\n",
                      "training: {max_steps: 1}\n");
}

TEST(JobReadAfterWriteTest, GetJobShowsAnotherClientsCancelAtOnce) {
  testing_internal::TempDir dir;
  Server::Options o;
  o.listen = "127.0.0.1:0";
  o.data_dir = dir.path();
  auto server = Server::Start(o);
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string address = absl::StrCat("127.0.0.1:", (*server)->port());
  JobClient alice(address);
  JobClient bob(address);  // A second channel: another connection.
  for (int round = 0; round < 5; ++round) {
    SCOPED_TRACE(absl::StrCat("round ", round));
    auto id = alice.SubmitText(JobText(absl::StrCat("j", round)), "job.yaml", "/", "");
    ASSERT_TRUE(id.ok()) << id.status();
    auto queued = bob.Get(*id);
    ASSERT_TRUE(queued.ok()) << queued.status();
    EXPECT_EQ(queued->state(), v1::QUEUED);
    auto cancelled = bob.Cancel(*id);
    ASSERT_TRUE(cancelled.ok()) << cancelled.status();
    for (JobClient* reader : {&alice, &bob}) {
      auto job = reader->Get(*id);
      ASSERT_TRUE(job.ok()) << job.status();
      EXPECT_EQ(job->state(), v1::CANCELLED);
      EXPECT_TRUE(job->has_finished_at());
    }
  }
  (*server)->Shutdown();
}

// Pages of ListJobs run on the store's reader connections (none: on the writer): each shows
// every submit and cancel acknowledged before it, to the client that made it and to another.
class ListReadAfterWriteTest : public ::testing::TestWithParam<int> {};

TEST_P(ListReadAfterWriteTest, ListJobsShowsEverySubmitAndCancelAtOnce) {
  testing_internal::TempDir dir;
  Server::Options o;
  o.listen = "127.0.0.1:0";
  o.data_dir = dir.path();
  o.sqlite_read_connections = GetParam();
  auto server = Server::Start(o);
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string address = absl::StrCat("127.0.0.1:", (*server)->port());
  JobClient alice(address);
  JobClient bob(address);
  for (int round = 0; round < 5; ++round) {
    SCOPED_TRACE(absl::StrCat("round ", round));
    auto id = alice.SubmitText(JobText(absl::StrCat("j", round)), "job.yaml", "/", "");
    ASSERT_TRUE(id.ok()) << id.status();
    for (JobClient* reader : {&alice, &bob}) {
      auto newest = reader->List(1);
      ASSERT_TRUE(newest.ok()) << newest.status();
      ASSERT_EQ(newest->size(), 1u);
      EXPECT_EQ((*newest)[0].id(), *id);
      EXPECT_EQ((*newest)[0].state(), v1::QUEUED);
    }
    ASSERT_TRUE(bob.Cancel(*id).ok());
    for (JobClient* reader : {&alice, &bob}) {
      auto newest = reader->List(1);
      ASSERT_TRUE(newest.ok()) << newest.status();
      ASSERT_EQ(newest->size(), 1u);
      EXPECT_EQ((*newest)[0].state(), v1::CANCELLED);
    }
  }
  (*server)->Shutdown();
}

INSTANTIATE_TEST_SUITE_P(ReadConnections, ListReadAfterWriteTest, ::testing::Values(0, 2),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return absl::StrCat("Readers", info.param);
                         });

TEST(ServerStartTest, ReadConnectionsOutOfRangeStopTheStart) {
  testing_internal::TempDir dir;
  Server::Options o;
  o.listen = "127.0.0.1:0";
  o.data_dir = dir.path();
  o.sqlite_read_connections = -1;
  auto server = Server::Start(o);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(server.status().message().find("read_connections"), std::string::npos)
      << server.status();
}

}  // namespace
}  // namespace lmtrain
