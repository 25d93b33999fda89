// JobManager::Submit with a SubmitPolicy: data roots and artifact references.
#include <gtest/gtest.h>

#include <filesystem>

#include "common/sha256.h"
#include "server/job_manager.h"
#include "tests/server/job_manager_fixture.h"

namespace lmtrain {
namespace {
namespace fs = std::filesystem;

class SubmitPolicyTest : public testing::JobManagerFixture {
 protected:
  SubmitPolicyTest() {
    root_ = fs::temp_directory_path() / ("lmtrain-submit-policy-" + std::to_string(getpid()));
    artifacts_ = std::move(*ArtifactStore::Open({root_.string(), 1 << 20, 0}));
  }
  ~SubmitPolicyTest() override { fs::remove_all(root_); }

  // A manager whose submit policy allows `roots` and references into artifacts_.
  JobManager Manager(std::vector<std::string> roots) {
    JobManager::Options options;
    options.submit_policy = {std::move(roots), root_.string(), artifacts_.get()};
    return ManagerWith(std::move(options));
  }

  fs::path root_;
  std::unique_ptr<ArtifactStore> artifacts_;
};

TEST_F(SubmitPolicyTest, DataRootsAllowTheirFilesAndRejectOthers) {
  EXPECT_TRUE(Manager({folder_.dir().string()}).Submit(folder_.Request()).ok());
  auto rejected = Manager({(root_ / "elsewhere").string()}).Submit(folder_.Request());
  ASSERT_TRUE(absl::IsInvalidArgument(rejected.status()));
  EXPECT_NE(rejected.status().message().find("data.train_file: " +
                                             (folder_.dir() / "train.txt").string()),
            std::string::npos)
      << rejected.status();
  EXPECT_EQ(JobCount(), 1u);
}

TEST_F(SubmitPolicyTest, ArtifactReferencesMustNameStoredBlobs) {
  const std::string text = "hello world\nthe quick brown fox\n";
  const std::string hex = DigestHex(*Sha256Of(text));
  SubmitRequest r = folder_.Request();
  const std::string ref = "artifact:sha256:" + hex;
  r.spec_yaml.replace(r.spec_yaml.find("train.txt"), 9, ref);
  JobManager manager = Manager({(root_ / "data-root").string()});
  auto missing = manager.Submit(r);
  ASSERT_TRUE(absl::IsInvalidArgument(missing.status()));
  EXPECT_NE(missing.status().message().find("data.train_file: artifact sha256:" + hex +
                                            " is not in the server's artifact store"),
            std::string::npos)
      << missing.status();

  auto upload = artifacts_->BeginUpload("", hex, static_cast<int64_t>(text.size()), 0);
  ASSERT_TRUE((*upload)->Append(text).ok());
  ASSERT_TRUE((*upload)->Finish().ok());
  // Stored: accepted even though the data roots hold nothing (references are the store's).
  auto id = manager.Submit(r);
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_NE(manager.Get(*id)->spec_yaml.find(ref), std::string::npos);

  r.spec_yaml.replace(r.spec_yaml.find(ref), ref.size(), "artifact:sha256:XYZ");
  auto bad = manager.Submit(r);
  ASSERT_TRUE(absl::IsInvalidArgument(bad.status()));
  EXPECT_NE(bad.status().message().find("bad artifact reference"), std::string::npos);
}

}  // namespace
}  // namespace lmtrain
