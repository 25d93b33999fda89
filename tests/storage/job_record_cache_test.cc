// JobRecordCache: lookups, replacement, the capacity bound and the data-version check.
#include "storage/internal/job_record_cache.h"

#include <gtest/gtest.h>

namespace lmtrain::storage_internal {
namespace {

JobRecord Job(const std::string& name) {
  JobRecord job;
  job.name = name;
  return job;
}

TEST(JobRecordCacheTest, FindsWhatWasPutUntilErased) {
  JobRecordCache cache(4);
  EXPECT_EQ(cache.Find(1), nullptr);
  cache.Put(1, Job("a"));
  ASSERT_NE(cache.Find(1), nullptr);
  EXPECT_EQ(cache.Find(1)->name, "a");
  cache.Put(1, Job("b"));
  EXPECT_EQ(cache.Find(1)->name, "b");
  EXPECT_EQ(cache.size(), 1u);
  cache.Erase(1);
  EXPECT_EQ(cache.Find(1), nullptr);
}

TEST(JobRecordCacheTest, HoldsAtMostCapacityJobs) {
  JobRecordCache cache(3);
  for (int64_t id = 1; id <= 10; ++id) cache.Put(id, Job("x"));
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_NE(cache.Find(10), nullptr);  // The newest is never the one evicted.
}

TEST(JobRecordCacheTest, CapacityZeroCachesNothing) {
  JobRecordCache cache(0);
  cache.Put(1, Job("a"));
  EXPECT_EQ(cache.Find(1), nullptr);
}

TEST(JobRecordCacheTest, ANewDataVersionEmptiesIt) {
  JobRecordCache cache(4);
  cache.Validate(5);
  cache.Put(1, Job("a"));
  cache.Validate(5);
  EXPECT_NE(cache.Find(1), nullptr);
  cache.Validate(6);
  EXPECT_EQ(cache.Find(1), nullptr);
}

}  // namespace
}  // namespace lmtrain::storage_internal
