// ArtifactCache on a temp folder with an in-memory fetcher: downloads are verified before
// they appear under their final names, the size limit evicts least recently used blobs (and
// the folders built from them), pinned artifacts stay, and the index survives a restart.
#include "worker/agent/artifact_cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "artifacts/folder_manifest.h"
#include "common/job_spec.h"
#include "common/sha256.h"

namespace lmtrain {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string Hex(const std::string& bytes) { return DigestHex(*Sha256Of(bytes)); }

// Serves blobs from memory. `corrupt`: writes other bytes and reports success; `truncate`:
// writes half and reports success (a fetcher that lost the end of the stream).
class MemoryFetcher : public ArtifactFetcher {
 public:
  std::string Add(const std::string& bytes) {
    blobs_[Hex(bytes)] = bytes;
    return Hex(bytes);
  }
  absl::Status Fetch(const std::string& hex, const std::string& dest) override {
    ++fetches;
    auto it = blobs_.find(hex);
    if (it == blobs_.end()) return absl::NotFoundError(hex);
    std::string bytes = it->second;
    if (corrupt) bytes[0] ^= 1;
    if (truncate) bytes.resize(bytes.size() / 2);
    std::ofstream(dest, std::ios::binary) << bytes;
    return absl::OkStatus();
  }
  bool corrupt = false;
  bool truncate = false;
  int fetches = 0;

 private:
  std::map<std::string, std::string> blobs_;
};

class ArtifactCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "artifact_cache_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<ArtifactCache> Cache(int64_t max_bytes) {
    ArtifactCache::Options options;
    options.max_bytes = max_bytes;
    return std::make_unique<ArtifactCache>(&fetcher_, dir_.string(), options);
  }
  fs::path BlobPath(const std::string& hex) const {
    return dir_ / "blobs/sha256" / hex.substr(0, 2) / hex;
  }
  // Files left under tmp/ (downloads in progress or abandoned).
  int TempFiles() const {
    std::error_code ec;
    int n = 0;
    for (fs::directory_iterator it(dir_ / "tmp", ec), end; !ec && it != end; it.increment(ec)) ++n;
    return n;
  }

  fs::path dir_;
  MemoryFetcher fetcher_;
};

TEST_F(ArtifactCacheTest, CorruptedDownloadNeverAppearsUnderItsFinalName) {
  auto cache = Cache(0);
  const std::string hex = fetcher_.Add("the real bytes");
  fetcher_.corrupt = true;
  auto blob = cache->Blob(hex);
  ASSERT_FALSE(blob.ok());
  EXPECT_TRUE(absl::IsDataLoss(blob.status())) << blob.status();
  EXPECT_THAT(blob.status().message(), HasSubstr("corrupted"));
  EXPECT_FALSE(fs::exists(BlobPath(hex)));
  EXPECT_EQ(TempFiles(), 0);
  fetcher_.corrupt = false;  // A good download afterwards is cached.
  ASSERT_TRUE(cache->Blob(hex).ok());
  EXPECT_TRUE(fs::exists(BlobPath(hex)));
}

TEST_F(ArtifactCacheTest, PartialDownloadOfAFolderFileIsRefusedBySize) {
  auto cache = Cache(0);
  const std::string file = fetcher_.Add("0123456789");
  FolderManifest manifest;
  manifest.files.push_back({"data.txt", 10, file});
  const std::string tree = fetcher_.Add(FolderManifestToJson(manifest));
  ASSERT_TRUE(cache->Blob(tree).ok());  // The manifest itself arrives whole.
  fetcher_.truncate = true;
  auto folder = cache->Tree(tree);
  ASSERT_FALSE(folder.ok());
  EXPECT_THAT(folder.status().message(), HasSubstr("is 5 bytes, expected 10"));
  EXPECT_FALSE(fs::exists(BlobPath(file)));
  EXPECT_FALSE(fs::exists(dir_ / "trees" / tree));
}

TEST_F(ArtifactCacheTest, EvictsLeastRecentlyUsedBlobsBeyondTheLimit) {
  auto cache = Cache(250);
  const std::string a = fetcher_.Add(std::string(100, 'a'));
  const std::string b = fetcher_.Add(std::string(100, 'b'));
  const std::string c = fetcher_.Add(std::string(100, 'c'));
  ASSERT_TRUE(cache->Blob(a).ok());
  ASSERT_TRUE(cache->Blob(b).ok());
  ASSERT_TRUE(cache->Blob(a).ok());  // b is now the least recently used.
  ASSERT_TRUE(cache->Blob(c).ok());
  EXPECT_TRUE(fs::exists(BlobPath(a)));
  EXPECT_FALSE(fs::exists(BlobPath(b)));
  EXPECT_TRUE(fs::exists(BlobPath(c)));
  EXPECT_EQ(cache->bytes(), 200);
  EXPECT_EQ(fetcher_.fetches, 3);
}

TEST_F(ArtifactCacheTest, NeverEvictsWhatARunningJobHolds) {
  auto cache = Cache(250);
  const std::string held = fetcher_.Add(std::string(100, 'h'));
  const std::string b = fetcher_.Add(std::string(100, 'b'));
  const std::string c = fetcher_.Add(std::string(100, 'c'));
  const std::string big = fetcher_.Add(std::string(200, 'x'));
  ArtifactCache::Pins job;
  auto spec = cache->LocalizeSpec(
      "name: j\ntask: clm\nmodel:\n  config: {model_type: gpt2, n_layer: 1, n_head: 2, n_embd: "
      "8, n_positions: 32}\ntokenizer:\n  train: {type: bpe, vocab_size: 50}\ndata:\n  "
      "train_file: artifact:sha256:" + held + "\n",
      &job);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_THAT(*spec, HasSubstr(BlobPath(held).string()));
  ASSERT_TRUE(cache->Blob(b).ok());
  ASSERT_TRUE(cache->Blob(c).ok());  // Evicts b, the oldest one not held.
  EXPECT_TRUE(fs::exists(BlobPath(held)));
  EXPECT_FALSE(fs::exists(BlobPath(b)));
  auto refused = cache->Blob(big);  // Only c can go, and that is not enough.
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::IsResourceExhausted(refused.status())) << refused.status();
  EXPECT_TRUE(fs::exists(BlobPath(c)));
  EXPECT_EQ(TempFiles(), 0);
  job = ArtifactCache::Pins();  // The job ended.
  ASSERT_TRUE(cache->Blob(big).ok()) << "held and c go now";
  EXPECT_FALSE(fs::exists(BlobPath(held)));
}

// The worker passes the server's stored spec through: a spec without references is the same
// bytes, and in a normalised one (JobSpecToYaml, as lm-server stores it) only the references
// change.
TEST_F(ArtifactCacheTest, LocalizeSpecRewritesOnlyTheReferences) {
  auto cache = Cache(1000);
  const std::string plain = "# as stored\nname: j\ntask:   clm\n";
  EXPECT_EQ(*cache->LocalizeSpec(plain), plain);
  EXPECT_EQ(fetcher_.fetches, 0);

  const std::string data = fetcher_.Add("some text\n");
  const std::string ref = "artifact:sha256:" + data;
  ParseOptions options;
  options.base_dir = "/";
  options.check_files = false;
  auto parsed = ParseJobSpec(
      "name: j\ntask: clm\nmodel: {config: {model_type: gpt2, n_layer: 1, n_head: 2, n_embd: 8, "
      "n_positions: 32}}\ntokenizer: {path: /srv/tok.json}\ndata: {train_file: " +
          ref + "}\n",
      options);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const std::string stored = JobSpecToYaml(*parsed);
  auto local = cache->LocalizeSpec(stored);
  ASSERT_TRUE(local.ok()) << local.status();
  std::string expected = stored;
  expected.replace(expected.find(ref), ref.size(), BlobPath(data).string());
  EXPECT_EQ(*local, expected);
}

TEST_F(ArtifactCacheTest, PinnedFolderKeepsItsFilesAndAnEvictedFileTakesItsFolder) {
  auto cache = Cache(300);
  const std::string file = fetcher_.Add(std::string(100, 'f'));
  FolderManifest manifest;
  manifest.files.push_back({"sub/f.txt", 100, file});
  const std::string tree = fetcher_.Add(FolderManifestToJson(manifest));
  const std::string other = fetcher_.Add(std::string(150, 'o'));
  {
    ArtifactCache::Pins job;
    auto folder = cache->Tree(tree, &job);
    ASSERT_TRUE(folder.ok()) << folder.status();
    EXPECT_TRUE(fs::exists(fs::path(*folder) / "sub/f.txt"));
    EXPECT_TRUE(absl::IsResourceExhausted(cache->Blob(other).status()));
    EXPECT_TRUE(fs::exists(fs::path(*folder) / "sub/f.txt"));
  }
  ASSERT_TRUE(cache->Blob(other).ok());
  EXPECT_FALSE(fs::exists(dir_ / "trees" / tree));  // Built from an evicted blob: gone.
  auto rebuilt = cache->Tree(tree);  // Fetched and built again on demand.
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status();
}

TEST_F(ArtifactCacheTest, RestartKeepsTheIndexAndTheUseOrderAndDropsLeftoverDownloads) {
  const std::string a = fetcher_.Add(std::string(100, 'a'));
  const std::string b = fetcher_.Add(std::string(100, 'b'));
  const std::string c = fetcher_.Add(std::string(100, 'c'));
  {
    auto cache = Cache(250);
    ASSERT_TRUE(cache->Blob(b).ok());
    ASSERT_TRUE(cache->Blob(a).ok());
  }
  fs::last_write_time(BlobPath(b), fs::last_write_time(BlobPath(a)) - std::chrono::hours(1));
  std::ofstream(dir_ / "tmp" / "half-a-download") << "partial";
  auto cache = Cache(250);
  ASSERT_TRUE(cache->Blob(a).ok());
  EXPECT_EQ(fetcher_.fetches, 2);  // From the disk, not fetched again.
  EXPECT_EQ(cache->bytes(), 200);
  EXPECT_EQ(TempFiles(), 0);
  ASSERT_TRUE(cache->Blob(c).ok());
  EXPECT_FALSE(fs::exists(BlobPath(b)));  // Used longest ago before the restart.
  EXPECT_TRUE(fs::exists(BlobPath(a)));
}

}  // namespace
}  // namespace lmtrain
