// A real in-process lm-server (Server) whose data folder is a private 4 MiB tmpfs
// (tests/small_tmpfs.h; skipped where mounting is not permitted) that fills up: submits fail
// with RESOURCE_EXHAUSTED saying the disk is full, stored jobs stay readable, the server stays
// up, and submits succeed again once space is freed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/job_client.h"
#include "server/server.h"
#include "tests/small_tmpfs.h"
#include "tests/test_paths.h"

namespace lmtrain {
namespace {

using ::testing::HasSubstr;

// A valid tiny job; `padding` bytes of YAML comment make its stored spec that much larger.
std::string JobText(const std::string& name, size_t padding) {
  return absl::StrCat("name: ", name,
                      "\ntask: clm\nmodel:\n  config: {model_type: gpt2, n_layer: 1, n_head: 2, "
                      "n_embd: 8, n_positions: 32}\ntokenizer:\n  train: {type: bpe, vocab_size: "
                      "50}\ndata:\n  train_file: ",
                      LMTRAIN_SOURCE_DIR, "/examples/data/austen_train.txt\n  block_size: 8\n",
                      "training: {max_steps: 1}\n# ", std::string(padding, 'x'), "\n");
}

TEST(ServerDiskFullTest, SubmitsFailWithResourceExhaustedAndResumeWhenSpaceReturns) {
  LMTRAIN_MOUNT_SMALL_TMPFS_OR_SKIP(disk, ::testing::TempDir(), 4 << 20);
  Server::Options o;
  o.listen = "127.0.0.1:0";
  o.data_dir = disk->path();
  o.sync = SqliteJobStore::Sync::kFull;
  auto server = Server::Start(o);
  ASSERT_TRUE(server.ok()) << server.status();
  JobClient client(absl::StrCat("127.0.0.1:", (*server)->port()));
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    auto id = client.SubmitText(JobText(absl::StrCat("j", i), 100), "job.yaml", "/", "");
    ASSERT_TRUE(id.ok()) << id.status();
    ids.push_back(*id);
  }
  ASSERT_GT(disk->FillUp(), 0);

  auto refused = client.SubmitText(JobText("big", 512 << 10), "job.yaml", "/", "");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted) << refused.status();
  EXPECT_THAT(refused.status().message(), HasSubstr("no space left"));
  for (const std::string& id : ids) {
    auto job = client.Get(id);
    ASSERT_TRUE(job.ok()) << job.status();
    EXPECT_EQ(job->id(), id);
  }

  disk->FreeUp();
  auto after = client.SubmitText(JobText("after", 512 << 10), "job.yaml", "/", "");
  ASSERT_TRUE(after.ok()) << after.status();
  auto listed = client.List(100);
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_EQ(listed->size(), ids.size() + 1);
  (*server)->Shutdown();
}

}  // namespace
}  // namespace lmtrain
