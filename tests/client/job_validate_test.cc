// `lmctl validate`'s checks on the repo's example jobs and on broken copies of them.
#include "client/job_validate.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "tests/test_paths.h"

namespace lmtrain {
namespace {
namespace fs = std::filesystem;

std::string Example(const std::string& name) {
  return std::string(LMTRAIN_SOURCE_DIR) + "/examples/" + name + "/job.yaml";
}
std::string Source(const std::string& path) { return std::string(LMTRAIN_SOURCE_DIR) + "/" + path; }

const ValidationCheck* Find(const ValidationReport& r, const std::string& prefix) {
  for (const ValidationCheck& c : r.checks) {
    if (c.name.rfind(prefix, 0) == 0) return &c;
  }
  return nullptr;
}

class JobValidateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           absl::StrCat("lmctl-validate-", getpid(), "-",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  fs::path dir_;
};

TEST_F(JobValidateTest, TinyGpt2ExampleIsValid) {
  auto r = ValidateJobFile(Example("tiny-gpt2"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->ok()) << ValidationToText(*r);
  const ValidationCheck* seq = Find(*r, "sequence length");
  ASSERT_NE(seq, nullptr);
  EXPECT_EQ(seq->detail, "block_size 64 fits the model's 128 positions");
  ASSERT_NE(Find(*r, "train text"), nullptr);
  // 2000 * 64 + 128 * 64 + 2 * (12 * 64^2 + 13 * 64) + 2 * 64 (tied LM head).
  EXPECT_EQ(r->estimate["parameters"], 2000 * 64 + 128 * 64 + 2 * (12 * 64 * 64 + 13 * 64) + 128);
  const std::string text = ValidationToText(*r);
  EXPECT_NE(text.find("estimate (rough, per process)"), std::string::npos) << text;
  EXPECT_NE(text.find("\nvalid\n"), std::string::npos) << text;
}

TEST_F(JobValidateTest, Fp16NeedsGpusAsAtSubmit) {
  const std::string job = absl::StrCat(
      "name: half\ntask: clm\nmodel: {config: {model_type: gpt2, n_layer: 1, n_head: 2, n_embd: "
      "8, n_positions: 32}}\ntokenizer: {train: {vocab_size: 50}}\ndata: {train_file: ",
      Source("examples/data/austen_train.txt"), ", block_size: 8}\ntraining:\n  fp16: true\n");
  const std::string path = Write("job.yaml", job);
  auto refused = ValidateJobFile(path);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            absl::StrCat(path,
                         ":7: training.fp16 needs a GPU: set resources.gpus_per_worker > 0 "
                         "(or use bf16: true on CPU)"));
  auto accepted = ValidateJobFile(Write("gpu.yaml", job + "resources: {gpus_per_worker: 1}\n"));
  ASSERT_TRUE(accepted.ok()) << accepted.status();
  EXPECT_EQ(accepted->estimate["assumed_flops_per_second"], 1e14) << accepted->estimate.dump();
}

TEST_F(JobValidateTest, DeprecatedKeysPassWithTheNewName) {
  const std::string path = Write(
      "old.yaml",
      absl::StrCat("name: old\ntask: clm\nmodel: {config: {model_type: gpt2, n_layer: 1, n_head: "
                   "2, n_embd: 8, n_positions: 32}}\ntokenizer: {train: {vocab_size: 50}}\ndata: "
                   "{train_file: ",
                   Source("examples/data/austen_train.txt"),
                   ", block_size: 8}\ntraining:\n  per_gpu_train_batch_size: 2\n"));
  auto r = ValidateJobFile(path);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->ok()) << ValidationToText(*r);
  const ValidationCheck* deprecated = Find(*r, "key warning");
  ASSERT_NE(deprecated, nullptr) << ValidationToText(*r);
  EXPECT_EQ(deprecated->detail,
            absl::StrCat(path,
                         ":7: training.per_gpu_train_batch_size is deprecated: use "
                         "training.per_device_train_batch_size"));
}

TEST_F(JobValidateTest, QaGlueAndClassificationExamplesAreValid) {
  for (const char* name : {"austen-qa", "paraphrase-mrpc", "brown-genres", "mlm-austen"}) {
    auto r = ValidateJobFile(Example(name));
    ASSERT_TRUE(r.ok()) << name << ": " << r.status();
    EXPECT_TRUE(r->ok()) << ValidationToText(*r);
    EXPECT_FALSE(r->estimate.is_null()) << name;
  }
  auto qa = ValidateJobFile(Example("austen-qa"));
  const ValidationCheck* spans = Find(*qa, "qa spans (train)");
  ASSERT_NE(spans, nullptr);
  EXPECT_NE(spans->detail.find("answers aligned with their contexts"), std::string::npos);
  auto glue = ValidateJobFile(Example("paraphrase-mrpc"));
  ASSERT_NE(Find(*glue, "glue labels (train)"), nullptr);
}

TEST_F(JobValidateTest, MisalignedQaSpanFailsWithItsPlace) {
  Write(
      "train.json",
      R"({"version":"1.1","data":[{"title":"t","paragraphs":[{"context":"Emma was rich.",)"
      R"("qas":[{"id":"q1","question":"Who?","answers":[{"text":"Emma","answer_start":3}]}]}]}]})");
  const std::string job = Write(
      "job.yaml",
      absl::StrCat("name: qa\ntask: qa\nmodel:\n  config: {model_type: bert, hidden_size: 64, "
                   "num_hidden_layers: 1, num_attention_heads: 2, intermediate_size: 64, "
                   "max_position_embeddings: 128}\ntokenizer:\n  path: ",
                   Source("tests/data/tokenizers/bert-base-uncased"),
                   "\ndata:\n  train_file: train.json\n  max_seq_length: 64\n  doc_stride: 16\n"));
  auto r = ValidateJobFile(job);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->ok());
  const ValidationCheck* spans = Find(*r, "qa spans (train)");
  ASSERT_NE(spans, nullptr);
  EXPECT_FALSE(spans->ok);
  EXPECT_NE(spans->detail.find("q1"), std::string::npos) << spans->detail;
  EXPECT_NE(ValidationToText(*r).find("INVALID"), std::string::npos);
}

TEST_F(JobValidateTest, ClassificationLabelUnseenInTrainFails) {
  Write("train.csv", "text,label\ngood film,pos\nbad film,neg\n");
  Write("dev.csv", "text,label\nfine film,neutral\n");
  const std::string job = Write(
      "job.yaml",
      absl::StrCat("name: cls\ntask: classification\nmodel:\n  config: {model_type: bert, "
                   "hidden_size: 64, num_hidden_layers: 1, num_attention_heads: 2, "
                   "intermediate_size: 64, max_position_embeddings: 128}\ntokenizer:\n  path: ",
                   Source("tests/data/tokenizers/bert-base-uncased"),
                   "\ndata:\n  train_file: train.csv\n  validation_file: dev.csv\n"));
  auto r = ValidateJobFile(job);
  ASSERT_TRUE(r.ok()) << r.status();
  const ValidationCheck* labels = Find(*r, "classification labels");
  ASSERT_NE(labels, nullptr);
  EXPECT_FALSE(labels->ok);
  EXPECT_NE(labels->detail.find("neutral"), std::string::npos) << labels->detail;
}

TEST_F(JobValidateTest, PretrainedModelWithOtherLabelCountFails) {
  fs::create_directories(dir_ / "model");
  Write("model/config.json",
        R"({"model_type": "bert", "hidden_size": 64, "num_hidden_layers": 1,)"
        R"( "num_attention_heads": 2, "intermediate_size": 64, "max_position_embeddings": 64,)"
        R"( "vocab_size": 30522, "id2label": {"0": "a", "1": "b", "2": "c"}})");
  const std::string job = Write(
      "job.yaml", absl::StrCat("name: mrpc\ntask: glue\nmodel:\n  name_or_path: model\n"
                               "tokenizer:\n  path: ",
                               Source("tests/data/tokenizers/bert-base-uncased"),
                               "\ndata:\n  task_name: mrpc\n  data_dir: ",
                               Source("tests/testdata/paraphrase"), "\n  max_seq_length: 64\n"));
  auto r = ValidateJobFile(job);
  ASSERT_TRUE(r.ok()) << r.status();
  const ValidationCheck* labels = Find(*r, "model labels");
  ASSERT_NE(labels, nullptr);
  EXPECT_FALSE(labels->ok);
  EXPECT_NE(labels->detail.find("has 3 labels (id2label) but the data has 2"), std::string::npos)
      << labels->detail;
  EXPECT_EQ(Find(*r, "sequence length")->detail, "max_seq_length 64 fits the model's 64 positions");
}

TEST_F(JobValidateTest, SpecErrorsAreReportedLikeSubmit) {
  const std::string job = Write(
      "job.yaml",
      "name: x\ntask: clm\nmodel:\n  config: {model_type: gpt2, n_layer: 1, n_head: 2, n_embd: 8, "
      "n_positions: 32}\ntokenizer:\n  train: {type: bpe, vocab_size: 50}\n"
      "data:\n  train_file: missing.txt\n  block_size: 64\n");
  auto r = ValidateJobFile(job);
  ASSERT_FALSE(r.ok());
  const std::string message(r.status().message());
  EXPECT_NE(message.find("job.yaml:"), std::string::npos) << message;
  EXPECT_NE(message.find("missing.txt"), std::string::npos) << message;
  EXPECT_NE(message.find("data.block_size must be <= 32"), std::string::npos) << message;
  EXPECT_EQ(ValidateJobFile((dir_ / "nope.yaml").string()).status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace lmtrain
