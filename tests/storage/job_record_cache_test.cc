// JobRecordCache: lookups, replacement, the byte bound and the data-version check.
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
  JobRecordCache cache(1 << 20);
  EXPECT_EQ(cache.Find(1), nullptr);
  cache.Put(1, Job("a"));
  ASSERT_NE(cache.Find(1), nullptr);
  EXPECT_EQ(cache.Find(1)->name, "a");
  cache.Put(1, Job("b"));
  EXPECT_EQ(cache.Find(1)->name, "b");
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.bytes(), JobRecordCache::ApproximateBytes(Job("b")));
  cache.Erase(1);
  EXPECT_EQ(cache.Find(1), nullptr);
  EXPECT_EQ(cache.bytes(), 0u);
}

TEST(JobRecordCacheTest, CountsTheJobFileAndStaysWithinMaxBytes) {
  JobRecord big = Job("big");
  big.spec_yaml.assign(10000, 'x');
  const size_t each = JobRecordCache::ApproximateBytes(big);
  EXPECT_GT(each, 10000u);
  JobRecordCache cache(3 * each + each / 2);
  for (int64_t id = 1; id <= 10; ++id) cache.Put(id, big);
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_LE(cache.bytes(), 3 * each + each / 2);
  EXPECT_NE(cache.Find(10), nullptr);  // The newest is never the one evicted.
}

TEST(JobRecordCacheTest, ARecordLargerThanMaxBytesIsNotCached) {
  JobRecord big = Job("big");
  big.spec_yaml.assign(10000, 'x');
  JobRecordCache cache(5000);
  cache.Put(1, Job("small"));
  cache.Put(2, big);
  EXPECT_EQ(cache.Find(2), nullptr);
  EXPECT_NE(cache.Find(1), nullptr);
}

TEST(JobRecordCacheTest, MaxBytesZeroCachesNothing) {
  JobRecordCache cache(0);
  cache.Put(1, Job("a"));
  EXPECT_EQ(cache.Find(1), nullptr);
}

TEST(JobRecordCacheTest, ANewDataVersionEmptiesIt) {
  JobRecordCache cache(1 << 20);
  cache.Validate(5);
  cache.Put(1, Job("a"));
  cache.Validate(5);
  EXPECT_NE(cache.Find(1), nullptr);
  cache.Validate(6);
  EXPECT_EQ(cache.Find(1), nullptr);
}

}  // namespace
}  // namespace lmtrain::storage_internal
