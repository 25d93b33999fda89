// ParseJobSpec on good job files (every field, defaults, paths) and the JobSpecToYaml round trip.
// Bad files are in job_spec_errors_test.cc.
#include "common/job_spec.h"

#include <gtest/gtest.h>

#include "tests/common/job_spec_test_util.h"

namespace lmtrain {
namespace {

using test_util::ExpectSpecsEqual;
using test_util::ExpectTrainingEqual;

class JobSpecTest : public test_util::JobSpecFixture {};

// Every key of the format, each set to a value other than its default.
constexpr char kFullFile[] = R"(# A job with every key set.
name: gpt2-austen_v1.0
task: clm
model:
  config:
    model_type: gpt2
    vocab_size: 500
    n_positions: 128
    n_embd: 64
    n_layer: 2
    n_head: 4
    n_inner: ~
    activation_function: "gelu_new"
    resid_pdrop: 0.1
    embd_pdrop: 0
    attn_pdrop: 0.05
    layer_norm_epsilon: 1e-5
    initializer_range: 0.02
    bos_token_id: 0
    eos_token_id: 1
    scale_attn_weights: true
    use_cache: no
    tie_word_embeddings: yes
tokenizer:
  train:
    type: unigram
    vocab_size: 300
data:
  train_file: data/train.txt
  validation_file: data/valid.txt
  validation_split_percentage: 10
  block_size: 64
  line_by_line: true
  keep_linebreaks: true
  preprocessing_num_workers: 4
  text_column_name: text
training:
  learning_rate: 3e-4
  per_device_train_batch_size: 4
  per_device_eval_batch_size: 2
  gradient_accumulation_steps: 3
  max_steps: 100
  num_train_epochs: 1.5
  warmup_steps: 7
  warmup_ratio: 0.25
  lr_scheduler_type: cosine
  weight_decay: 0.01
  adam_beta1: 0.8
  adam_beta2: 0.99
  adam_epsilon: 1e-6
  max_grad_norm: 0
  logging_strategy: epoch
  logging_steps: 10
  logging_first_step: true
  eval_steps: 20
  save_steps: 0
  save_total_limit: 2
  seed: -7
  bf16: on
  full_determinism: true
  max_eval_samples: 50
  do_train: false
  do_eval: False
  eval_on_start: YES
  report_to: none
  logging_dir: tb/logs
resources:
  gpus_per_worker: 4
  priority: -3
  workers: 2
  slots_per_worker: 4
  selector: {gpu: h100, zone: 3}
  max_retries: 0
)";

TEST_F(JobSpecTest, ParsesEveryField) {
  absl::StatusOr<JobSpec> spec = Parse(kFullFile);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->name, "gpt2-austen_v1.0");
  EXPECT_EQ(spec->task, "clm");
  EXPECT_EQ(spec->model.name_or_path, "");
  const nlohmann::json& c = spec->model.config;
  EXPECT_EQ(c["model_type"], "gpt2");
  EXPECT_TRUE(c["n_positions"].is_number_integer());
  EXPECT_EQ(c["n_positions"], 128);
  EXPECT_TRUE(c["n_inner"].is_null());
  EXPECT_TRUE(c["resid_pdrop"].is_number_float());
  EXPECT_EQ(c["resid_pdrop"], 0.1);
  EXPECT_TRUE(c["embd_pdrop"].is_number_integer());  // "0" looks like an integer
  EXPECT_EQ(c["layer_norm_epsilon"], 1e-5);
  EXPECT_EQ(c["use_cache"], false);
  EXPECT_EQ(c["tie_word_embeddings"], true);
  EXPECT_EQ(c.size(), 18u);
  EXPECT_TRUE(spec->tokenizer.path.empty());
  ASSERT_TRUE(spec->tokenizer.train.has_value());
  EXPECT_EQ(spec->tokenizer.train->type, "unigram");
  EXPECT_EQ(spec->tokenizer.train->vocab_size, 300);
  EXPECT_EQ(spec->data.train_file, Abs("data/train.txt"));
  EXPECT_EQ(spec->data.validation_file, Abs("data/valid.txt"));
  EXPECT_EQ(spec->data.validation_split_percentage, 10);
  EXPECT_EQ(spec->data.block_size, 64);
  EXPECT_TRUE(spec->data.line_by_line);
  EXPECT_EQ(spec->data.keep_linebreaks, true);
  EXPECT_EQ(spec->data.preprocessing_num_workers, 4);
  EXPECT_EQ(spec->data.text_column_name, "text");
  TrainingSpec want;
  want.learning_rate = 3e-4;
  want.per_device_train_batch_size = 4;
  want.per_device_eval_batch_size = 2;
  want.gradient_accumulation_steps = 3;
  want.max_steps = 100;
  want.num_train_epochs = 1.5;
  want.warmup_steps = 7;
  want.warmup_ratio = 0.25;
  want.lr_scheduler_type = "cosine";
  want.weight_decay = 0.01;
  want.adam_beta1 = 0.8;
  want.adam_beta2 = 0.99;
  want.adam_epsilon = 1e-6;
  want.max_grad_norm = 0;
  want.logging_strategy = "epoch";
  want.logging_steps = 10;
  want.logging_first_step = true;
  want.eval_steps = 20;
  want.save_steps = 0;
  want.save_total_limit = 2;
  want.seed = -7;
  want.bf16 = true;
  want.full_determinism = true;
  want.max_eval_samples = 50;
  want.do_train = false;
  want.do_eval = false;
  want.eval_on_start = true;
  want.report_to = "none";
  want.logging_dir = "tb/logs";  // Relative to the output folder, so not resolved here.
  ExpectTrainingEqual(spec->training, want);
  EXPECT_EQ(spec->resources.gpus_per_worker, 4);
  EXPECT_EQ(spec->resources.priority, -3);
  EXPECT_EQ(spec->resources.workers, 2);
  EXPECT_EQ(spec->resources.slots_per_worker, 4);
  EXPECT_EQ(spec->resources.selector,
            (std::map<std::string, std::string>{{"gpu", "h100"}, {"zone", "3"}}));
  EXPECT_EQ(spec->resources.max_retries, 0);
}

TEST_F(JobSpecTest, RejectsBadResources) {
  absl::StatusOr<JobSpec> spec = Parse(R"(name: tiny
task: clm
model: {config: {model_type: gpt2, n_layer: 1, n_head: 1, n_embd: 8, n_positions: 16}}
tokenizer: {train: {vocab_size: 300}}
data: {train_file: data/train.txt}
resources:
  workers: 0
  selector: [gpu]
  max_retries: -1
)");
  ASSERT_FALSE(spec.ok());
  const std::string m(spec.status().message());
  EXPECT_NE(m.find(":7: resources.workers must be >= 1 (got 0)"), std::string::npos) << m;
  EXPECT_NE(m.find(":8: resources.selector must be a mapping"), std::string::npos) << m;
  EXPECT_NE(m.find(":9: resources.max_retries must be >= 0"), std::string::npos) << m;
}

TEST_F(JobSpecTest, AppliesDefaults) {
  absl::StatusOr<JobSpec> spec = Parse(R"(name: tiny
task: clm
model: {name_or_path: gpt2}
tokenizer: {train: }
data: {train_file: data/train.txt}
)");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_TRUE(spec->model.config.is_null());
  ASSERT_TRUE(spec->tokenizer.train.has_value());
  EXPECT_EQ(spec->tokenizer.train->type, "bpe");
  EXPECT_EQ(spec->tokenizer.train->vocab_size, 2000);
  EXPECT_EQ(spec->data.validation_file, "");
  EXPECT_EQ(spec->data.validation_split_percentage, 5);
  EXPECT_EQ(spec->data.block_size, 0);
  EXPECT_FALSE(spec->data.line_by_line);
  EXPECT_FALSE(spec->data.keep_linebreaks.has_value());  // run_clm.py's true for group_texts.
  // The header's documented defaults, spelled out so that a changed default is noticed.
  EXPECT_EQ(spec->training.learning_rate, 5e-5);
  EXPECT_EQ(spec->training.per_device_train_batch_size, 8);
  EXPECT_EQ(spec->training.max_steps, -1);
  EXPECT_EQ(spec->training.num_train_epochs, 3.0);
  EXPECT_EQ(spec->training.lr_scheduler_type, "linear");
  EXPECT_EQ(spec->training.adam_beta2, 0.999);
  EXPECT_EQ(spec->training.logging_steps, 500);
  EXPECT_EQ(spec->training.seed, 42);
  EXPECT_TRUE(spec->training.do_train);
  EXPECT_TRUE(spec->training.do_eval);
  EXPECT_FALSE(spec->training.eval_on_start);
  EXPECT_EQ(spec->training.report_to, "tensorboard");
  EXPECT_EQ(spec->training.logging_dir, "");
  ExpectTrainingEqual(spec->training, TrainingSpec{});
  EXPECT_EQ(spec->resources.gpus_per_worker, 0);
  EXPECT_EQ(spec->resources.slots_per_worker, 1);
  EXPECT_EQ(spec->training.device, "auto");
  EXPECT_FALSE(spec->training.use_cpu);
  EXPECT_EQ(spec->resources.priority, 0);
}

TEST_F(JobSpecTest, ResolvesRelativePathsAgainstBaseDir) {
  std::string abs_valid = Abs("data/./valid.txt");
  absl::StatusOr<JobSpec> spec = Parse(R"(name: paths
task: clm
model: {name_or_path: ./gpt2/}
tokenizer: {path: tok/../tok/tokenizer.json}
data:
  train_file: data//train.txt
  validation_file: )" + abs_valid + "\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->model.name_or_path, Abs("gpt2"));
  EXPECT_EQ(spec->tokenizer.path, Abs("tok/tokenizer.json"));
  EXPECT_EQ(spec->data.train_file, Abs("data/train.txt"));
  EXPECT_EQ(spec->data.validation_file, Abs("data/valid.txt"));
}

TEST_F(JobSpecTest, ReadsNPositionsFromPretrainedConfigJson) {
  // gpt2/config.json says n_positions 256: 256 fits, 257 does not.
  std::string file = R"(name: pre
task: clm
model: {name_or_path: gpt2}
tokenizer: {path: tok}
data: {train_file: data/train.txt, block_size: BLOCK}
)";
  std::string fits = file, too_big = file;
  fits.replace(fits.find("BLOCK"), 5, "256");
  too_big.replace(too_big.find("BLOCK"), 5, "257");
  EXPECT_TRUE(Parse(fits).ok()) << Parse(fits).status();
  EXPECT_TRUE(test_util::HasError(Parse(too_big), 5, "data.block_size must be <= 256"));
}

TEST_F(JobSpecTest, WithoutCheckFilesMissingPathsAreAccepted) {
  std::string file = R"(name: nofiles
task: clm
model: {name_or_path: no/such/model}
tokenizer: {path: no/such/tokenizer.json}
data: {train_file: no/such/train.txt}
)";
  absl::StatusOr<JobSpec> spec = Parse(file, /*check_files=*/false);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->data.train_file, Abs("no/such/train.txt"));
  EXPECT_FALSE(Parse(file, /*check_files=*/true).ok());
}

TEST_F(JobSpecTest, RoundTripsFullSpecThroughYaml) {
  absl::StatusOr<JobSpec> spec = Parse(kFullFile);
  ASSERT_TRUE(spec.ok()) << spec.status();
  std::string yaml = JobSpecToYaml(*spec);
  ParseOptions options;  // no base_dir: every path in `yaml` must already be absolute
  absl::StatusOr<JobSpec> again = ParseJobSpec(yaml, options);
  ASSERT_TRUE(again.ok()) << again.status() << "\n" << yaml;
  ExpectSpecsEqual(*spec, *again);
  EXPECT_EQ(JobSpecToYaml(*again), yaml);
  // Every field is explicit, including the defaults nobody wrote.
  EXPECT_NE(yaml.find("eval_on_start: true"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("train_file: " + Abs("data/train.txt")), std::string::npos) << yaml;
}

TEST_F(JobSpecTest, RoundTripsDefaultsAndPretrainedModel) {
  absl::StatusOr<JobSpec> spec = Parse(R"(name: "123"
task: clm
model: {name_or_path: gpt2}
tokenizer: {path: tok/tokenizer.json}
data: {train_file: data/train.txt}
)");
  ASSERT_TRUE(spec.ok()) << spec.status();
  std::string yaml = JobSpecToYaml(*spec);
  for (const char* key : {"learning_rate: 5e-05", "num_train_epochs: 3.0", "seed: 42",
                          "validation_file: \"\"", "lr_scheduler_type: linear"}) {
    EXPECT_NE(yaml.find(key), std::string::npos) << key << " missing from\n" << yaml;
  }
  absl::StatusOr<JobSpec> again = ParseJobSpec(yaml, ParseOptions{});
  ASSERT_TRUE(again.ok()) << again.status() << "\n" << yaml;
  ExpectSpecsEqual(*spec, *again);
}

TEST_F(JobSpecTest, RoundTripKeepsConfigValueTypes) {
  // Strings that look like numbers or booleans must stay strings; doubles that look like
  // integers must stay doubles.
  JobSpec spec;
  spec.name = "types";
  spec.task = "clm";
  spec.model.config = nlohmann::json::parse(
      R"({"model_type": "gpt2", "activation_function": "123", "n_layer": 2,
          "resid_pdrop": 0.0, "initializer_range": 0.1, "use_cache": true, "n_inner": null})");
  spec.tokenizer.train = TokenizerTrainSpec{};
  spec.data.train_file = Abs("data/train.txt");
  absl::StatusOr<JobSpec> again = ParseJobSpec(JobSpecToYaml(spec), ParseOptions{});
  ASSERT_TRUE(again.ok()) << again.status() << "\n" << JobSpecToYaml(spec);
  EXPECT_EQ(again->model.config.dump(), spec.model.config.dump());
  EXPECT_TRUE(again->model.config["activation_function"].is_string());
  EXPECT_TRUE(again->model.config["resid_pdrop"].is_number_float());
}

}  // namespace
}  // namespace lmtrain
