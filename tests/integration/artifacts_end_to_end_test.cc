// Data that travels with the job, on the real stack: lmctl uploads a job's data from a folder
// that is deleted before any worker exists; the lm-worker started afterwards fetches the
// artifacts from lm-server, the job trains to SUCCEEDED, and `lmctl download` brings its
// checkpoints back, verified against their manifest.json.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "artifacts/artifact_client.h"
#include "client/job_client.h"
#include "tests/integration/cluster.h"

namespace lmtrain::testing {
namespace {
namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string LastLine(const std::string& text) {
  std::string t = text;
  while (!t.empty() && t.back() == '\n') t.pop_back();
  return t.substr(t.rfind('\n') == std::string::npos ? 0 : t.rfind('\n') + 1);
}

// A tiny CLM job whose data sits next to it (relative paths).
constexpr char kJob[] = R"(name: travelling-data
task: clm
model:
  config: {model_type: gpt2, n_layer: 2, n_head: 2, n_embd: 32, n_positions: 64}
tokenizer:
  train: {type: bpe, vocab_size: 400}
data:
  train_file: data/train.txt
  validation_file: data/valid.txt
  block_size: 32
training:
  learning_rate: 3.0e-3
  per_device_train_batch_size: 8
  max_steps: 40
  logging_steps: 10
  save_steps: 20
  max_eval_samples: 32
  seed: 7
)";

TEST(ArtifactsEndToEnd, UploadedDataTrainsOnAWorkerThatNeverSawItAndCheckpointsComeBack) {
  auto cluster = Cluster::Start(/*worker_slots=*/0);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Cluster& c = **cluster;
  const fs::path laptop = fs::temp_directory_path() / absl::StrCat("lmtrain-laptop-", getpid());
  fs::remove_all(laptop);
  fs::create_directories(laptop / "data");
  fs::copy_file(SourceDir() + "/examples/data/austen_train.txt", laptop / "data/train.txt");
  fs::copy_file(SourceDir() + "/examples/data/austen_valid.txt", laptop / "data/valid.txt");
  std::ofstream(laptop / "job.yaml") << kJob;

  std::string out, err;
  ASSERT_EQ(c.Lmctl({"--upload=always", "submit", (laptop / "job.yaml").string()}, &out, &err), 0)
      << err;
  EXPECT_NE(err.find("uploading data.train_file"), std::string::npos) << err;
  const std::string id = LastLine(out);
  JobClient jobs(c.address());
  auto job = jobs.Get(id);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_NE(job->spec_yaml().find("artifact:sha256:"), std::string::npos) << job->spec_yaml();
  EXPECT_EQ(job->spec_yaml().find(laptop.string()), std::string::npos) << job->spec_yaml();

  // The client's folder disappears before any worker exists.
  fs::remove_all(laptop);
  ASSERT_TRUE(c.AddWorker(1).ok());
  ASSERT_EQ(c.Lmctl({"watch", id}, &out, &err), 0) << out << err;
  job = jobs.Get(id);
  ASSERT_EQ(job->state(), v1::SUCCEEDED) << job->error();
  EXPECT_TRUE(fs::is_directory(c.dir() / "worker/artifact-cache/blobs/sha256"));

  // lmctl download: the latest checkpoint, then step 20; both match the server's files.
  for (const auto& [step_args, step] :
       std::vector<std::pair<std::vector<std::string>, int>>{{{}, 40}, {{"--step", "20"}, 20}}) {
    const fs::path into = c.dir() / absl::StrCat("downloaded-", step);
    std::vector<std::string> args = {"download", id, into.string()};
    args.insert(args.begin() + 1, step_args.begin(), step_args.end());
    ASSERT_EQ(c.Lmctl(args, &out, &err), 0) << err;
    EXPECT_NE(out.find(absl::StrCat("checkpoint-", step, ":")), std::string::npos) << out;
    EXPECT_NE(out.find("verified against manifest.json"), std::string::npos) << out;
    const fs::path server_copy = fs::path(job->output_dir()) / absl::StrCat("checkpoint-", step);
    int files = 0;
    for (const auto& e : fs::recursive_directory_iterator(server_copy)) {
      if (!e.is_regular_file()) continue;
      ++files;
      const fs::path rel = e.path().lexically_relative(server_copy);
      EXPECT_EQ(ReadFile(into / rel), ReadFile(e.path())) << rel;
    }
    EXPECT_GE(files, 3);
    EXPECT_TRUE(*VerifyCheckpointFolder(into.string()));
  }
  // The verifier notices a changed file.
  const fs::path config = c.dir() / "downloaded-40/config.json";
  std::ofstream(config, std::ios::app) << " ";
  auto tampered = VerifyCheckpointFolder((c.dir() / "downloaded-40").string());
  EXPECT_TRUE(absl::IsDataLoss(tampered.status())) << tampered.status();

  // Fine-tune from the downloaded checkpoint-20 (model and tokenizer folders travel as folder
  // manifests), deleted again before the worker fetches it.
  const fs::path pretrained = c.dir() / "downloaded-20";
  const fs::path job2 = c.dir() / "job2.yaml";
  std::ofstream(job2) << "name: from-pretrained\ntask: clm\nmodel: {name_or_path: "
                      << pretrained.string() << "}\ntokenizer: {path: " << pretrained.string()
                      << "}\ndata: {train_file: " << SourceDir()
                      << "/examples/data/austen_valid.txt, block_size: 32}\n"
                      << "training: {max_steps: 4, per_device_train_batch_size: 4, "
                         "do_eval: false, logging_steps: 2}\n";
  ASSERT_EQ(c.Lmctl({"--upload=always", "submit", job2.string()}, &out, &err), 0) << err;
  EXPECT_NE(err.find("manifest of " + pretrained.string()), std::string::npos) << err;
  const std::string id2 = LastLine(out);
  fs::remove_all(pretrained);
  ASSERT_EQ(c.Lmctl({"watch", id2}, &out, &err), 0) << out << err;
  EXPECT_FALSE(fs::is_empty(c.dir() / "worker/artifact-cache/trees"));

  // A step that does not exist, and a job that does not: clear errors, exit 1.
  EXPECT_EQ(c.Lmctl({"download", "--step", "7", id, (c.dir() / "x").string()}, &out, &err), 1);
  EXPECT_NE(err.find("no checkpoint-7"), std::string::npos) << err;
}

}  // namespace
}  // namespace lmtrain::testing
