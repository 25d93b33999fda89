// JobManager::Retry and ListWorkers on the in-memory store.
#include <gtest/gtest.h>

#include "server/job_manager.h"
#include "tests/server/job_manager_fixture.h"

namespace lmtrain {
namespace {

class JobManagerRetryTest : public testing::JobManagerFixture {
 protected:
  std::string CancelledJob(const testing::JobFolder& folder) {
    auto id = manager_.Submit(folder.Request());
    EXPECT_TRUE(id.ok()) << id.status();
    EXPECT_TRUE(manager_.Cancel(*id, "by test").ok());
    return *id;
  }

  std::vector<std::string> LogLines(const std::string& id) {
    std::vector<std::string> lines;
    const auto events = manager_.EventsAfter(id, 0, 100);
    EXPECT_TRUE(events.ok()) << events.status();
    for (const EventRecord& e : *events) {
      if (auto* log = std::get_if<LogEvent>(&e.payload)) {
        lines.push_back(log->stream + ": " + log->text);
      }
    }
    return lines;
  }
};

TEST_F(JobManagerRetryTest, CancelledJobIsResubmittedWithItsSpecAndLinked) {
  testing::JobFolder folder("again", 7, "workers: 1, max_retries: 2, selector: {pool: a}");
  SubmitRequest request = folder.Request();
  request.user = "alice";
  auto old_id = manager_.Submit(request);
  ASSERT_TRUE(old_id.ok());
  ASSERT_TRUE(manager_.Cancel(*old_id, "by test").ok());
  clock_.Advance(5000);
  auto new_id = manager_.Retry(*old_id);
  ASSERT_TRUE(new_id.ok()) << new_id.status();
  EXPECT_NE(*new_id, *old_id);
  const JobRecord old_job = *manager_.Get(*old_id);
  const JobRecord job = *manager_.Get(*new_id);
  EXPECT_EQ(job.state, JobState::kQueued);
  EXPECT_EQ(job.name, "again");
  EXPECT_EQ(job.spec_yaml, old_job.spec_yaml);
  EXPECT_EQ(job.priority, 7);
  EXPECT_EQ(job.user, "alice");
  EXPECT_EQ(job.resources, old_job.resources);
  EXPECT_EQ(job.created_at_ms, clock_.NowMs());
  EXPECT_EQ(LogLines(*new_id), std::vector<std::string>{"server: retry of job " + *old_id});
  EXPECT_EQ(LogLines(*old_id), std::vector<std::string>{"server: retried as job " + *new_id});
  EXPECT_EQ(old_job.state, JobState::kCancelled);  // The old job stays as it was.
}

TEST_F(JobManagerRetryTest, OnlyFailedOrCancelledJobs) {
  testing::JobFolder folder;
  auto queued = manager_.Submit(folder.Request());
  ASSERT_TRUE(queued.ok());
  auto r = manager_.Retry(*queued);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("QUEUED"), std::string_view::npos) << r.status();
  EXPECT_EQ(manager_.Retry("999").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_.ListJobs({})->size(), 1u);
}

TEST_F(JobManagerRetryTest, SpecWhoseDataIsGoneIsRejectedAndStoresNothing) {
  testing::JobFolder folder;
  const std::string id = CancelledJob(folder);
  std::filesystem::remove(folder.dir() / "train.txt");
  auto r = manager_.Retry(id);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("train.txt"), std::string_view::npos) << r.status();
  EXPECT_EQ(store_.ListJobs({})->size(), 1u);
  EXPECT_TRUE(LogLines(id).empty());
}

TEST_F(JobManagerRetryTest, ListWorkersIsTheDispatchersView) {
  EXPECT_TRUE(manager_.ListWorkers().empty());
  WorkerInfo info;
  info.name = "box";
  info.slots = 3;
  info.labels = {{"pool", "a"}};
  const std::string id = dispatcher_.RegisterWorker(info, {});
  const std::vector<WorkerStatus> workers = manager_.ListWorkers();
  ASSERT_EQ(workers.size(), 1u);
  EXPECT_EQ(workers[0].id, id);
  EXPECT_EQ(workers[0].info.name, "box");
  EXPECT_EQ(workers[0].info.slots, 3);
  EXPECT_EQ(workers[0].used_slots, 0);
}

}  // namespace
}  // namespace lmtrain
