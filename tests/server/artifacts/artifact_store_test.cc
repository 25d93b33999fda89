// ArtifactStore on a temp folder: dedup, verification, limits, quotas, resume.
#include "server/artifacts/artifact_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/sha256.h"

namespace lmtrain {
namespace {
namespace fs = std::filesystem;

std::string Hex(const std::string& bytes) { return DigestHex(*Sha256Of(bytes)); }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every regular file under `dir` (relative), to prove that nothing was kept.
std::vector<std::string> FilesUnder(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) out.push_back(e.path().lexically_relative(dir).string());
  }
  return out;
}

class ArtifactStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("lmtrain-artifact-store-" + std::to_string(getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  std::unique_ptr<ArtifactStore> Open(int64_t max_file = 1 << 20, int64_t quota = 0) {
    auto store = ArtifactStore::Open({root_.string(), max_file, quota});
    EXPECT_TRUE(store.ok()) << store.status();
    return std::move(*store);
  }

  // One whole upload in chunks of `chunk` bytes.
  absl::Status Put(ArtifactStore& store, const std::string& user, const std::string& bytes,
                   const std::string& hex, size_t chunk = 7) {
    auto upload = store.BeginUpload(user, hex, static_cast<int64_t>(bytes.size()), 0);
    if (!upload.ok()) return upload.status();
    for (size_t i = 0; i < bytes.size(); i += chunk) {
      absl::Status s = (*upload)->Append(std::string_view(bytes).substr(i, chunk));
      if (!s.ok()) return s;
    }
    return (*upload)->Finish();
  }

  fs::path root_;
};

TEST_F(ArtifactStoreTest, StoresVerifiedBlobUnderItsHashAndDeduplicates) {
  auto store = Open();
  const std::string data = "the quick brown fox jumps over the lazy dog\n";
  const std::string hex = Hex(data);
  ASSERT_TRUE(Put(*store, "alice", data, hex).ok());
  const fs::path blob = root_ / "blobs/sha256" / hex.substr(0, 2) / hex;
  EXPECT_EQ(ReadFile(blob.string()), data);
  EXPECT_EQ(*store->BlobPath(hex), blob.string());
  auto stat = store->Stat(hex);
  ASSERT_TRUE(stat.ok());
  EXPECT_TRUE(stat->exists);
  EXPECT_EQ(stat->size, static_cast<int64_t>(data.size()));
  EXPECT_EQ(store->UsageBytes("alice"), static_cast<int64_t>(data.size()));

  // The same content again, by anyone: nothing is written or charged.
  EXPECT_TRUE(absl::IsAlreadyExists(Put(*store, "alice", data, hex)));
  EXPECT_TRUE(absl::IsAlreadyExists(Put(*store, "bob", data, hex)));
  EXPECT_EQ(store->UsageBytes("alice"), static_cast<int64_t>(data.size()));
  EXPECT_EQ(store->UsageBytes("bob"), 0);
  int blobs = 0;
  for (const std::string& f : FilesUnder(root_)) blobs += f.rfind("blobs/", 0) == 0;
  EXPECT_EQ(blobs, 1);

  // Usage survives a restart.
  store.reset();
  EXPECT_EQ(Open()->UsageBytes("alice"), static_cast<int64_t>(data.size()));
}

TEST_F(ArtifactStoreTest, HashMismatchIsRejectedAndNothingIsKept) {
  auto store = Open();
  const std::string claimed = Hex("what the client said");
  absl::Status s = Put(*store, "alice", "something else entirely", claimed);
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_NE(s.message().find("not the claimed " + claimed), std::string::npos) << s;
  auto stat = store->Stat(claimed);
  EXPECT_FALSE(stat->exists);
  EXPECT_EQ(stat->partial_bytes, 0);
  EXPECT_TRUE(FilesUnder(root_).empty());
  EXPECT_TRUE(absl::IsNotFound(store->BlobPath(claimed).status()));
  EXPECT_EQ(store->UsageBytes("alice"), 0);
}

TEST_F(ArtifactStoreTest, MoreBytesThanDeclaredAreRejectedAndNothingIsKept) {
  auto store = Open();
  const std::string data = "0123456789";
  auto upload = store->BeginUpload("alice", Hex(data), 5, 0);
  ASSERT_TRUE(upload.ok());
  EXPECT_TRUE(absl::IsInvalidArgument((*upload)->Append(data)));
  upload->reset();
  EXPECT_TRUE(FilesUnder(root_).empty());
}

TEST_F(ArtifactStoreTest, FileSizeLimit) {
  auto store = Open(/*max_file=*/16);
  const std::string data(17, 'x');
  absl::Status s = Put(*store, "alice", data, Hex(data));
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
  EXPECT_NE(s.message().find("over the server's limit of 16 bytes"), std::string::npos) << s;
  EXPECT_TRUE(FilesUnder(root_).empty());
  const std::string ok(16, 'y');
  EXPECT_TRUE(Put(*store, "alice", ok, Hex(ok)).ok());
}

TEST_F(ArtifactStoreTest, PerUserQuotaCountsStoredAndInProgressBytes) {
  auto store = Open(1 << 20, /*quota=*/100);
  const std::string a(60, 'a'), b(60, 'b'), c(40, 'c');
  ASSERT_TRUE(Put(*store, "alice", a, Hex(a)).ok());
  absl::Status s = Put(*store, "alice", b, Hex(b));
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
  EXPECT_NE(s.message().find("quota exceeded for user 'alice'"), std::string::npos) << s;
  EXPECT_TRUE(Put(*store, "bob", b, Hex(b)).ok());  // Quotas are per user.
  // An upload in progress holds its bytes: 60 + 40 reserved leaves no room for more.
  auto pending = store->BeginUpload("alice", Hex(c), 40, 0);
  ASSERT_TRUE(pending.ok());
  const std::string d(1, 'd');
  EXPECT_TRUE(absl::IsResourceExhausted(Put(*store, "alice", d, Hex(d))));
  ASSERT_TRUE((*pending)->Append(c).ok());
  ASSERT_TRUE((*pending)->Finish().ok());
  EXPECT_EQ(store->UsageBytes("alice"), 100);
}

TEST_F(ArtifactStoreTest, InterruptedUploadResumesFromTheBytesKept) {
  auto store = Open();
  std::string data;
  for (int i = 0; i < 1000; ++i) data += "line " + std::to_string(i) + "\n";
  const std::string hex = Hex(data);
  const int64_t size = static_cast<int64_t>(data.size());
  {
    auto upload = store->BeginUpload("alice", hex, size, 0);
    ASSERT_TRUE(upload.ok());
    ASSERT_TRUE((*upload)->Append(data.substr(0, 3000)).ok());
    // A second stream for the same hash is refused while the first is open.
    EXPECT_TRUE(absl::IsAborted(store->BeginUpload("bob", hex, size, 0).status()));
    absl::Status early = (*upload)->Finish();
    EXPECT_TRUE(absl::IsFailedPrecondition(early)) << early;
    EXPECT_NE(early.message().find("resume from 3000"), std::string::npos) << early;
  }  // The stream broke: the upload object goes away without a Finish.
  auto stat = store->Stat(hex);
  EXPECT_FALSE(stat->exists);
  EXPECT_EQ(stat->partial_bytes, 3000);
  EXPECT_TRUE(absl::IsNotFound(store->BlobPath(hex).status()));  // Not visible yet.

  // Past what the server has: refused, naming the offset to resume from.
  auto bad = store->BeginUpload("alice", hex, size, 3001);
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status()));
  EXPECT_NE(bad.status().message().find("the server has 3000 bytes"), std::string::npos);

  auto resumed = store->BeginUpload("alice", hex, size, 3000);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  ASSERT_TRUE((*resumed)->Append(data.substr(3000)).ok());
  ASSERT_TRUE((*resumed)->Finish().ok());
  EXPECT_EQ(ReadFile(*store->BlobPath(hex)), data);
  EXPECT_EQ(store->Stat(hex)->partial_bytes, 0);
  EXPECT_FALSE(fs::exists(root_ / "uploads" / (hex + ".partial")));
}

TEST_F(ArtifactStoreTest, RestartFromZeroDropsThePartialBytes) {
  auto store = Open();
  const std::string data(5000, 'z');
  const std::string hex = Hex(data);
  {
    auto upload = store->BeginUpload("alice", hex, 5000, 0);
    ASSERT_TRUE((*upload)->Append("garbage that is not the content").ok());
  }
  ASSERT_TRUE(Put(*store, "alice", data, hex, 1024).ok());
  EXPECT_EQ(ReadFile(*store->BlobPath(hex)), data);
}

TEST_F(ArtifactStoreTest, BadHashesAndUserNames) {
  auto store = Open();
  EXPECT_TRUE(absl::IsInvalidArgument(store->Stat("abc").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(store->Stat(std::string(64, 'A')).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(store->BeginUpload("a", "../../etc", 1, 0).status()));
  EXPECT_EQ(UserDirName(""), "_anonymous");
  EXPECT_EQ(UserDirName("alice"), "alice");
  EXPECT_EQ(UserDirName("../x"), "..%2Fx");
  EXPECT_EQ(UserDirName(".."), "%2E.");
}

}  // namespace
}  // namespace lmtrain
