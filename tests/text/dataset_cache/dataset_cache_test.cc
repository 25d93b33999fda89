#include "text/dataset_cache/dataset_cache.h"

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/text/dataset_cache/dataset_test_util.h"
#include "tests/text/dataset_cache/temp_dir.h"

namespace lmtrain {
namespace {

using testing_internal::ExpectEqualColumns;
using testing_internal::kKeyA;
using testing_internal::kKeyB;
using testing_internal::ReadAll;
using testing_internal::SampleColumns;
using testing_internal::TempDir;
using testing_internal::ToVector;
using testing_internal::WriteAll;

class DatasetCacheTest : public ::testing::Test {
 protected:
  std::unique_ptr<DatasetCache> OpenCache() {
    DatasetCacheOptions options;
    options.on_discard = [this](const absl::Status& why) { discarded_.push_back(why); };
    absl::StatusOr<std::unique_ptr<DatasetCache>> cache =
        DatasetCache::Open(dir_.File("cache/sub"), std::move(options));
    EXPECT_TRUE(cache.ok()) << cache.status();
    return std::move(cache).value();
  }

  TempDir dir_;
  std::vector<absl::Status> discarded_;
};

TEST_F(DatasetCacheTest, MissThenStoreThenHit) {
  auto cache = OpenCache();
  absl::StatusOr<std::optional<MappedDataset>> miss = cache->Lookup(kKeyA);
  ASSERT_TRUE(miss.ok()) << miss.status();
  EXPECT_FALSE(miss->has_value());

  const DatasetColumns columns = SampleColumns();
  absl::StatusOr<MappedDataset> stored = cache->Store(kKeyA, columns);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(stored->path(), cache->PathFor(kKeyA));
  ExpectEqualColumns(*stored, columns);

  absl::StatusOr<std::optional<MappedDataset>> hit = cache->Lookup(kKeyA);
  ASSERT_TRUE(hit.ok()) << hit.status();
  ASSERT_TRUE(hit->has_value());
  ExpectEqualColumns(**hit, columns);
  EXPECT_FALSE(cache->Lookup(kKeyB)->has_value());
  EXPECT_TRUE(discarded_.empty());
  // Only the published file is left: no temporary file.
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(cache->dir())) {
    EXPECT_EQ(entry.path().string(), cache->PathFor(kKeyA));
    ++files;
  }
  EXPECT_EQ(files, 1);
}

TEST_F(DatasetCacheTest, MalformedKeysAreRejected) {
  auto cache = OpenCache();
  EXPECT_TRUE(absl::IsInvalidArgument(cache->Lookup("../etc/passwd").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(cache->Store("ABC", SampleColumns()).status()));
}

TEST_F(DatasetCacheTest, OpenFailsWhenDirIsAFile) {
  const std::string file = dir_.Write("plain", "x");
  EXPECT_FALSE(DatasetCache::Open(file).ok());
}

// Damages the cached file with `damage`, then expects: a miss, the file deleted, on_discard
// told a DataLoss naming it, and GetOrBuild rebuilding it once.
void ExpectMissAndRebuild(DatasetCacheTest* test, DatasetCache& cache,
                          std::vector<absl::Status>& discarded,
                          const std::function<std::string(std::string)>& damage) {
  const DatasetColumns columns = SampleColumns();
  ASSERT_TRUE(cache.Store(kKeyA, columns).ok());
  const std::string path = cache.PathFor(kKeyA);
  WriteAll(path, damage(ReadAll(path)));
  discarded.clear();
  absl::StatusOr<std::optional<MappedDataset>> lookup = cache.Lookup(kKeyA);
  ASSERT_TRUE(lookup.ok()) << lookup.status();
  EXPECT_FALSE(lookup->has_value());
  EXPECT_FALSE(std::filesystem::exists(path));
  ASSERT_EQ(discarded.size(), 1u);
  EXPECT_TRUE(absl::IsDataLoss(discarded[0])) << discarded[0];
  EXPECT_NE(discarded[0].message().find(path), std::string_view::npos) << discarded[0];

  int builds = 0;
  auto build = [&]() -> absl::StatusOr<DatasetColumns> {
    ++builds;
    return columns;
  };
  absl::StatusOr<MappedDataset> rebuilt = cache.GetOrBuild(kKeyA, build);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status();
  ExpectEqualColumns(*rebuilt, columns);
  absl::StatusOr<MappedDataset> again = cache.GetOrBuild(kKeyA, build);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(builds, 1);
}

TEST_F(DatasetCacheTest, TruncatedFileIsAMissAndIsRebuilt) {
  auto cache = OpenCache();
  ExpectMissAndRebuild(this, *cache, discarded_,
                       [](std::string bytes) { return bytes.substr(0, bytes.size() / 2); });
  ExpectMissAndRebuild(this, *cache, discarded_, [](std::string) { return std::string(); });
}

TEST_F(DatasetCacheTest, FlippedPayloadByteIsAMissAndIsRebuilt) {
  auto cache = OpenCache();
  ExpectMissAndRebuild(this, *cache, discarded_, [](std::string bytes) {
    bytes[bytes.size() - 70] ^= 1;
    return bytes;
  });
}

TEST_F(DatasetCacheTest, WrongMagicIsAMissAndIsRebuilt) {
  auto cache = OpenCache();
  ExpectMissAndRebuild(this, *cache, discarded_, [](std::string bytes) {
    bytes.replace(0, 8, "GARBAGE!");
    return bytes;
  });
}

TEST_F(DatasetCacheTest, FileOfAnotherKeyIsAMiss) {
  auto cache = OpenCache();
  ASSERT_TRUE(cache->Store(kKeyB, SampleColumns()).ok());
  std::filesystem::rename(cache->PathFor(kKeyB), cache->PathFor(kKeyA));
  absl::StatusOr<std::optional<MappedDataset>> lookup = cache->Lookup(kKeyA);
  ASSERT_TRUE(lookup.ok());
  EXPECT_FALSE(lookup->has_value());
  ASSERT_EQ(discarded_.size(), 1u);
  EXPECT_NE(discarded_[0].message().find("built for key"), std::string_view::npos);
}

TEST_F(DatasetCacheTest, BuildErrorsPropagate) {
  auto cache = OpenCache();
  absl::StatusOr<MappedDataset> result = cache->GetOrBuild(
      kKeyA, []() -> absl::StatusOr<DatasetColumns> { return absl::NotFoundError("no text"); });
  EXPECT_TRUE(absl::IsNotFound(result.status()));
  EXPECT_FALSE(std::filesystem::exists(cache->PathFor(kKeyA)));
}

TEST_F(DatasetCacheTest, StoreReplacesWhileOldMappingStaysValid) {
  auto cache = OpenCache();
  absl::StatusOr<MappedDataset> first = cache->Store(kKeyA, SampleColumns());
  ASSERT_TRUE(first.ok());
  DatasetColumns other;
  other.ragged_int32["input_ids"].AppendRow(std::vector<int32_t>{1, 2, 3});
  absl::StatusOr<MappedDataset> second = cache->Store(kKeyA, other);
  ASSERT_TRUE(second.ok());
  ExpectEqualColumns(*first, SampleColumns());  // The replaced inode is still mapped.
  absl::StatusOr<std::optional<MappedDataset>> hit = cache->Lookup(kKeyA);
  ASSERT_TRUE(hit.ok() && hit->has_value());
  ExpectEqualColumns(**hit, other);
}

TEST_F(DatasetCacheTest, ThreadsStoringTheSameKeyAllSucceed) {
  auto cache = OpenCache();
  const DatasetColumns columns = SampleColumns();
  std::vector<std::thread> threads;
  std::vector<absl::Status> results(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10 && results[t].ok(); ++i) {
        results[t] = cache->Store(kKeyA, columns).status();
        absl::StatusOr<std::optional<MappedDataset>> hit = cache->Lookup(kKeyA);
        if (results[t].ok() && !(hit.ok() && hit->has_value())) {
          results[t] = absl::InternalError("lookup after store missed");
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const absl::Status& status : results) EXPECT_TRUE(status.ok()) << status;
  EXPECT_TRUE(discarded_.empty());
  absl::StatusOr<std::optional<MappedDataset>> hit = cache->Lookup(kKeyA);
  ASSERT_TRUE(hit.ok() && hit->has_value());
  ExpectEqualColumns(**hit, columns);
}

TEST_F(DatasetCacheTest, ProcessesBuildingTheSameKeyBothEndWithAValidFile) {
  auto cache = OpenCache();
  const DatasetColumns columns = SampleColumns();
  std::vector<pid_t> children;
  for (int c = 0; c < 2; ++c) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int failures = 0;
      for (int i = 0; i < 20; ++i) {
        absl::StatusOr<MappedDataset> stored =
            cache->GetOrBuild(kKeyA, [&]() -> absl::StatusOr<DatasetColumns> { return columns; });
        if (!stored.ok() || stored->num_rows("input_ids") != 4) ++failures;
        if (!cache->Store(kKeyA, columns).ok()) ++failures;
      }
      ::_exit(failures == 0 ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child " << pid;
  }
  absl::StatusOr<std::optional<MappedDataset>> hit = cache->Lookup(kKeyA);
  ASSERT_TRUE(hit.ok() && hit->has_value());
  ExpectEqualColumns(**hit, columns);
  EXPECT_TRUE(discarded_.empty());
}

TEST_F(DatasetCacheTest, RemoveTemporaryFilesOfDeadWriters) {
  auto cache = OpenCache();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);  // A pid that is no longer alive.
  const std::string dead = cache->PathFor(kKeyA) + ".tmp-" + std::to_string(child) + "-0";
  const std::string live = cache->PathFor(kKeyB) + ".tmp-" + std::to_string(::getpid()) + "-7";
  WriteAll(dead, "partial");
  WriteAll(live, "partial");
  ASSERT_TRUE(cache->Store(kKeyA, SampleColumns()).ok());
  absl::StatusOr<int> young = cache->RemoveTemporaryFiles(std::chrono::hours(1));
  ASSERT_TRUE(young.ok());
  EXPECT_EQ(*young, 0);  // Too recent.
  absl::StatusOr<int> removed = cache->RemoveTemporaryFiles(std::chrono::seconds(0));
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, 1);
  EXPECT_FALSE(std::filesystem::exists(dead));
  EXPECT_TRUE(std::filesystem::exists(live));
  EXPECT_TRUE(std::filesystem::exists(cache->PathFor(kKeyA)));
}

}  // namespace
}  // namespace lmtrain
