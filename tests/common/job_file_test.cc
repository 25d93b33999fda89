// LoadJobFile: reading a job file from disk (missing, folder, too large, not UTF-8), its paths
// resolved against the file's own folder, and the checks that need only the spec.
#include "common/job_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "tests/common/job_spec_test_util.h"

namespace lmtrain {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string Message(const absl::StatusOr<JobFile>& file) {
  return std::string(file.status().message());
}

class JobFileTest : public test_util::JobSpecFixture {
 protected:
  // Lines 1-5, with paths relative to a job file in dir_/jobs/; tests append from line 6.
  static constexpr char kJob[] = R"(name: tiny
task: clm
model: {name_or_path: ../gpt2}
tokenizer: {path: ../tok/tokenizer.json}
data: {train_file: ../data/./train.txt, validation_file: ../data/valid.txt}
)";
};

TEST_F(JobFileTest, RelativePathsResolveAgainstTheFilesFolder) {
  const std::string path = WriteFile("jobs/job.yaml", kJob);
  absl::StatusOr<JobFile> file = LoadJobFile(path, LoadJobFileOptions());
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->source_name, path);
  EXPECT_EQ(file->base_dir, Abs("jobs"));
  EXPECT_EQ(file->text, kJob);
  EXPECT_EQ(file->spec.model.name_or_path, Abs("gpt2"));
  EXPECT_EQ(file->spec.tokenizer.path, Abs("tok/tokenizer.json"));
  EXPECT_EQ(file->spec.data.train_file, Abs("data/train.txt"));
  EXPECT_EQ(file->spec.data.validation_file, Abs("data/valid.txt"));
  EXPECT_TRUE(file->warnings.empty());
}

TEST_F(JobFileTest, ARelativeFileNameResolvesAgainstTheWorkingFolder) {
  WriteFile("jobs/job.yaml", kJob);
  const fs::path before = fs::current_path();
  fs::current_path(dir_ / "data");  // Not the job file's folder: paths must not depend on it.
  absl::StatusOr<JobFile> file = LoadJobFile("../jobs/../jobs/job.yaml", LoadJobFileOptions());
  fs::current_path(before);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->source_name, "../jobs/../jobs/job.yaml");
  EXPECT_EQ(file->base_dir, Abs("jobs"));
  EXPECT_EQ(file->spec.data.train_file, Abs("data/train.txt"));
}

TEST_F(JobFileTest, MissingFileIsNotFoundNamingThePath) {
  const std::string path = Abs("nope.yaml");
  absl::StatusOr<JobFile> file = LoadJobFile(path, LoadJobFileOptions());
  EXPECT_EQ(file.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(file.status().message(), path + ": cannot open file: no such file");
}

TEST_F(JobFileTest, FolderIsRefused) {
  absl::StatusOr<JobFile> file = LoadJobFile(dir_ / "data", LoadJobFileOptions());
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(file.status().message(), Abs("data") + ": is a folder, not a job file");
}

TEST_F(JobFileTest, UnreadableFileIsPermissionDenied) {
  if (geteuid() == 0) GTEST_SKIP() << "root reads every file";
  const std::string path = WriteFile("secret.yaml", kJob);
  ASSERT_EQ(chmod(path.c_str(), 0), 0);
  absl::StatusOr<JobFile> file = LoadJobFile(path, LoadJobFileOptions());
  EXPECT_EQ(file.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(Message(file), StartsWith(path + ": cannot open file: "));
}

TEST_F(JobFileTest, FileLargerThanTheLimitIsRefusedBeforeParsing) {
  const std::string path = WriteFile("jobs/job.yaml", kJob);
  LoadJobFileOptions options;
  options.max_bytes = 10;
  absl::StatusOr<JobFile> file = LoadJobFile(path, options);
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(file.status().message(),
            absl::StrCat(path, ": the job file is ", std::string(kJob).size(),
                         " bytes; at most 10 are read"));
}

TEST_F(JobFileTest, BytesThatAreNotUtf8AreReportedWithLineAndColumn) {
  const std::string path = WriteFile("jobs/job.yaml", std::string(kJob) + "# caf\xE9\n");
  absl::StatusOr<JobFile> file = LoadJobFile(path, LoadJobFileOptions());
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(file.status().message(),
            path + ":6: the job file is not UTF-8 text (byte 0xE9 at column 6); save it as UTF-8");
  // Well-formed multi-byte text is fine.
  WriteFile("jobs/job.yaml", std::string(kJob) + "# caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\n");
  EXPECT_TRUE(LoadJobFile(path, LoadJobFileOptions()).ok());
}

TEST_F(JobFileTest, BadYamlNamesTheFileAndLine) {
  const std::string path = WriteFile("jobs/job.yaml", std::string(kJob) + "training: [1, 2\n");
  absl::StatusOr<JobFile> file = LoadJobFile(path, LoadJobFileOptions());
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(file), StartsWith(path + ":"));
  EXPECT_THAT(Message(file), HasSubstr("invalid YAML"));
  const std::string unknown = WriteFile("jobs/unknown.yaml", std::string(kJob) + "traning: {}\n");
  file = LoadJobFile(unknown, LoadJobFileOptions());
  EXPECT_THAT(Message(file),
              HasSubstr(unknown + ":6: unknown key 'traning' (did you mean 'training'?)"));
}

TEST_F(JobFileTest, Fp16OnACpuDeviceFailsAtLoadTime) {
  const std::string path =
      WriteFile("jobs/job.yaml", std::string(kJob) + "training:\n  device: cpu\n  fp16: true\n");
  absl::StatusOr<JobFile> file = LoadJobFile(path, LoadJobFileOptions());
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(file),
              HasSubstr(path + ":8: training.fp16 needs a GPU: training.device is cpu"));
}

TEST_F(JobFileTest, ScheduledJobsNeedGpusForCudaOnlyOptions) {
  const std::string path =
      WriteFile("jobs/job.yaml", std::string(kJob) + "training:\n  fp16: true\n");
  EXPECT_TRUE(LoadJobFile(path, LoadJobFileOptions()).ok());  // lm-train decides at run time.
  LoadJobFileOptions scheduled;
  scheduled.scheduled = true;
  absl::StatusOr<JobFile> file = LoadJobFile(path, scheduled);
  EXPECT_THAT(Message(file),
              HasSubstr(path + ":7: training.fp16 needs a GPU: set resources.gpus_per_worker > 0"));
}

TEST_F(JobFileTest, MissingDataIsAnErrorOnlyWhenFilesAreChecked) {
  const std::string path = WriteFile("a/b/job.yaml", kJob);  // a/gpt2, a/data do not exist.
  absl::StatusOr<JobFile> file = LoadJobFile(path, LoadJobFileOptions());
  EXPECT_THAT(Message(file),
              HasSubstr(path + ":5: data.train_file: file not found: " + Abs("a/data/train.txt")));
  LoadJobFileOptions unchecked;
  unchecked.check_files = false;
  file = LoadJobFile(path, unchecked);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->spec.data.train_file, Abs("a/data/train.txt"));
}

TEST_F(JobFileTest, DeprecatedKeysComeBackAsWarnings) {
  const std::string path =
      WriteFile("jobs/job.yaml", std::string(kJob) + "training:\n  per_gpu_train_batch_size: 4\n");
  absl::StatusOr<JobFile> file = LoadJobFile(path, LoadJobFileOptions());
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_EQ(file->warnings.size(), 1u);
  EXPECT_THAT(file->warnings[0], StartsWith(path + ":7: "));
  EXPECT_EQ(file->spec.training.per_device_train_batch_size, 4);
}

}  // namespace
}  // namespace lmtrain
