// ArtifactCacheIndex: which blobs the size limit evicts (least recently used first) and what
// it never evicts (pinned blobs, blobs of pinned trees).
#include "worker/agent/artifact_cache_index.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace lmtrain {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(ArtifactCacheIndexTest, EvictsLeastRecentlyUsedFirst) {
  ArtifactCacheIndex index(/*max_bytes=*/300);
  index.AddBlob("a", 100);
  index.AddBlob("b", 100);
  index.AddBlob("c", 100);
  ASSERT_TRUE(index.UseBlob("a"));  // Now b is the least recently used, then c.
  auto evicted = index.MakeRoom(150);
  ASSERT_TRUE(evicted.ok()) << evicted.status();
  EXPECT_THAT(evicted->blobs, ElementsAre("b", "c"));
  EXPECT_EQ(index.bytes(), 100);
  EXPECT_TRUE(index.UseBlob("a"));
  EXPECT_FALSE(index.UseBlob("b"));
}

TEST(ArtifactCacheIndexTest, NothingEvictedWhileItFits) {
  ArtifactCacheIndex index(300);
  index.AddBlob("a", 100);
  auto evicted = index.MakeRoom(200);
  ASSERT_TRUE(evicted.ok());
  EXPECT_THAT(evicted->blobs, IsEmpty());
  ArtifactCacheIndex unlimited(0);
  unlimited.AddBlob("a", int64_t{1} << 40);
  EXPECT_THAT(unlimited.MakeRoom(int64_t{1} << 40)->blobs, IsEmpty());
}

TEST(ArtifactCacheIndexTest, NeverEvictsPinnedBlobs) {
  ArtifactCacheIndex index(300);
  index.AddBlob("old", 100);
  index.AddBlob("mid", 100);
  index.AddBlob("new", 100);
  index.PinBlob("old");
  index.PinBlob("old");  // Two jobs.
  EXPECT_THAT(index.MakeRoom(100)->blobs, ElementsAre("mid"));
  index.UnpinBlob("old");  // One job still holds it.
  EXPECT_THAT(index.MakeRoom(200)->blobs, ElementsAre("new"));
  index.UnpinBlob("old");
  EXPECT_THAT(index.MakeRoom(300)->blobs, ElementsAre("old"));
}

TEST(ArtifactCacheIndexTest, PinnedTreeProtectsItsBlobsAndGoesWithAnEvictedBlob) {
  ArtifactCacheIndex index(400);
  index.AddBlob("manifest", 10);
  index.AddBlob("file", 90);
  index.AddTree("tree", {"manifest", "file"});
  index.AddBlob("other", 100);
  index.PinTree("tree");
  EXPECT_THAT(index.MakeRoom(300)->blobs, ElementsAre("other"));
  EXPECT_TRUE(index.HasTree("tree"));
  index.UnpinTree("tree");
  auto evicted = index.MakeRoom(305);
  ASSERT_TRUE(evicted.ok());
  EXPECT_THAT(evicted->blobs, ElementsAre("manifest"));
  EXPECT_THAT(evicted->trees, ElementsAre("tree"));  // Its manifest is gone with it.
  EXPECT_FALSE(index.HasTree("tree"));
}

TEST(ArtifactCacheIndexTest, UsingATreeRefreshesItsBlobs) {
  ArtifactCacheIndex index(300);
  index.AddBlob("file", 100);
  index.AddTree("tree", {"file"});
  index.AddBlob("later", 100);
  ASSERT_TRUE(index.UseTree("tree"));
  EXPECT_THAT(index.MakeRoom(200)->blobs, ElementsAre("later"));
}

TEST(ArtifactCacheIndexTest, RefusesWhenPinnedBytesLeaveNoRoomAndEvictsNothing) {
  ArtifactCacheIndex index(300);
  index.AddBlob("pinned", 250);
  index.AddBlob("free", 50);
  index.PinBlob("pinned");
  auto refused = index.MakeRoom(100);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::IsResourceExhausted(refused.status()));
  EXPECT_THAT(refused.status().message(), HasSubstr("250 bytes are in use by running jobs"));
  EXPECT_THAT(refused.status().message(), HasSubstr("--artifact-cache-max-bytes"));
  EXPECT_TRUE(index.UseBlob("free"));  // Not evicted for nothing.
  EXPECT_EQ(index.bytes(), 300);
}

}  // namespace
}  // namespace lmtrain
