// ParseJobSpec on bad job files: each test asserts the exact line and key path of the problem.
#include <gtest/gtest.h>

#include "common/job_spec.h"
#include "tests/common/job_spec_test_util.h"

namespace lmtrain {
namespace {

using test_util::HasError;
using test_util::ProblemCount;

class JobSpecErrorsTest : public test_util::JobSpecFixture {
 protected:
  // A good file; tests append to it or replace one of its lines. Lines 1-7.
  static constexpr char kGood[] = R"(name: ok
task: clm
model: {config: {model_type: gpt2, n_positions: 64, n_embd: 32, n_head: 4, n_layer: 1}}
tokenizer: {train: {type: bpe, vocab_size: 100}}
data:
  train_file: data/train.txt
  block_size: 32
)";

  // kGood with its `line` (1-based) replaced by `text`.
  static std::string GoodWithLine(int line, const std::string& text) {
    std::string file = kGood;
    size_t begin = 0;
    for (int i = 1; i < line; ++i) begin = file.find('\n', begin) + 1;
    return file.replace(begin, file.find('\n', begin) - begin, text);
  }
};

TEST_F(JobSpecErrorsTest, TheGoodFileParses) {
  absl::StatusOr<JobSpec> spec = Parse(kGood);
  EXPECT_TRUE(spec.ok()) << spec.status();
}

TEST_F(JobSpecErrorsTest, KeepLinebreaksIsRunClmsOnly) {
  EXPECT_TRUE(Parse(std::string(kGood) + "  keep_linebreaks: false\n").ok());
  EXPECT_TRUE(HasError(Parse(GoodWithLine(2, "task: mlm") + "  keep_linebreaks: true\n"), 8,
                       "data.keep_linebreaks is run_clm.py's (task clm); task mlm reads text "
                       "lines without their breaks, as run_mlm.py"));
  EXPECT_TRUE(
      HasError(Parse(std::string(kGood) + "  keep_linebreaks: 1\n"), 8, "data.keep_linebreaks"));
}

TEST_F(JobSpecErrorsTest, PreprocessingNumWorkersIsACount) {
  EXPECT_TRUE(Parse(std::string(kGood) + "  preprocessing_num_workers: 8\n").ok());
  EXPECT_TRUE(HasError(Parse(std::string(kGood) + "  preprocessing_num_workers: -1\n"), 8,
                       "data.preprocessing_num_workers"));
  EXPECT_TRUE(HasError(Parse(std::string(kGood) + "  preprocessing_num_workers: 1.5\n"), 8,
                       "data.preprocessing_num_workers"));
}

// Hostile YAML in the free-form model config: aliases that would expand to a billion values, and
// nesting deeper than any HF config, are refused at their line instead of exhausting memory.
TEST_F(JobSpecErrorsTest, AliasBombsAndDeepNestingInTheModelConfigAreRefused) {
  std::string bomb = "model:\n  config:\n    model_type: gpt2\n";
  bomb += "    l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 9; ++i) {
    bomb += "    l" + std::to_string(i) + ": &l" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) bomb += (j ? ", *l" : "*l") + std::to_string(i - 1);
    bomb += "]\n";
  }
  auto aliases = Parse(GoodWithLine(3, bomb));
  EXPECT_TRUE(HasError(aliases, 4, "model.config has more than 100000 values")) << aliases.status();
  const std::string deep =
      "model: {config: {model_type: gpt2, x: " + std::string(40, '[') + std::string(40, ']') + "}}";
  auto nested = Parse(GoodWithLine(3, deep));
  EXPECT_TRUE(HasError(nested, 3, "32 levels of nesting")) << nested.status();
}

TEST_F(JobSpecErrorsTest, MalformedYaml) {
  auto result = Parse(std::string(kGood) + "training:\n  seed: 1\n learning_rate: 2\n");
  EXPECT_TRUE(HasError(result, 10, "invalid YAML: end of map not found"));
  EXPECT_EQ(ProblemCount(result), 1);
  EXPECT_TRUE(HasError(Parse("name: x\ntask: [clm\n"), 3, "invalid YAML: end of sequence flow"));
}

TEST_F(JobSpecErrorsTest, EmptyFileAndNonMappingTopLevel) {
  EXPECT_TRUE(HasError(Parse(""), 1, "the job file is empty"));
  EXPECT_TRUE(HasError(Parse("# nothing but a comment\n"), 1, "the job file is empty"));
  EXPECT_TRUE(HasError(Parse("\n- name: x\n"), 2, "the top level must be a mapping"));
  EXPECT_TRUE(HasError(Parse("just text\n"), 1, "the top level must be a mapping"));
}

// yaml-cpp's parser yields empty documents forever on this file (found by the job_spec fuzz
// target); reading every document ran out of memory. One document is read, and it says why.
TEST_F(JobSpecErrorsTest, ALineThatYieldsNoDocumentIsAnErrorNotAnEndlessRead) {
  EXPECT_TRUE(HasError(Parse("     , x\n"), 1, "invalid YAML: no value could be read"));
  EXPECT_TRUE(HasError(Parse("# a comment\n     , evaluation on fixed\nname: x\n"), 2,
                       "invalid YAML: no value could be read"));
}

TEST_F(JobSpecErrorsTest, SecondDocumentIsRejected) {
  EXPECT_TRUE(HasError(Parse(std::string(kGood) + "---\nname: two\n"), 9, "one YAML document"));
}

// yaml-cpp starts a second document without a '---' after an indented block mapping or a flow
// mapping ends; the check must see those too, not only the marked ones.
TEST_F(JobSpecErrorsTest, SecondDocumentWithoutAMarkerIsRejected) {
  EXPECT_TRUE(HasError(Parse("  name: one\n  task: clm\nname: two\n"), 3, "one YAML document"));
  EXPECT_TRUE(HasError(Parse("{name: one, task: clm}\n{name: two}\n"), 2, "one YAML document"));
}

TEST_F(JobSpecErrorsTest, UnknownTopLevelKeySuggestsTheClosest) {
  auto result = Parse(std::string(kGood) + "trainig:\n  seed: 1\n");
  EXPECT_TRUE(HasError(result, 8, "unknown key 'trainig' (did you mean 'training'?)"));
  EXPECT_TRUE(HasError(Parse(std::string(kGood) + "zzz: 1\n"), 8,
                       "unknown key 'zzz' (known: name, task, model, tokenizer, data, training, "
                       "resources)"));
}

// The suggestion's distance counts a swap of two neighbours as one edit; a key far longer
// than every known name gets the list of names instead of a suggestion.
TEST_F(JobSpecErrorsTest, SuggestionsCountSwapsAndSkipKeysFarLongerThanAnyName) {
  EXPECT_TRUE(HasError(Parse(std::string(kGood) + "trainnig:\n  seed: 1\n"), 8,
                       "unknown key 'trainnig' (did you mean 'training'?)"));
  EXPECT_TRUE(HasError(Parse(std::string(kGood) + "rtaining:\n  seed: 1\n"), 8,
                       "unknown key 'rtaining' (did you mean 'training'?)"));
  const std::string long_key = "training" + std::string(900, 'x');  // YAML allows 1024.
  EXPECT_TRUE(HasError(Parse(std::string(kGood) + long_key + ": 1\n"), 8,
                       "unknown key '" + long_key + "' (known: name, task,"));
}

TEST_F(JobSpecErrorsTest, UnknownNestedKeys) {
  auto result = Parse(std::string(kGood) + "training:\n  seed: 1\n  lerning_rate: 0.1\n");
  EXPECT_TRUE(HasError(result, 10,
                       "unknown key 'training.lerning_rate' (did you mean "
                       "'training.learning_rate'?)"));
  EXPECT_TRUE(HasError(Parse(std::string(kGood) + "  train_files: x\n"), 8,
                       "unknown key 'data.train_files' (did you mean 'data.train_file'?)"));
  EXPECT_TRUE(HasError(Parse(GoodWithLine(4, "tokenizer: {train: {type: bpe, size: 3}}")), 4,
                       "unknown key 'tokenizer.train.size'"));
}

TEST_F(JobSpecErrorsTest, DuplicateKey) {
  EXPECT_TRUE(HasError(Parse(std::string(kGood) + "name: again\n"), 8,
                       "duplicate key 'name' (first set on line 1)"));
}

TEST_F(JobSpecErrorsTest, WrongTypes) {
  std::string file = std::string(kGood) + R"(training:
  learning_rate: fast
  per_device_train_batch_size: 8.5
  max_steps: "100"
  bf16: maybe
  seed: [1, 2]
resources: [1]
)";
  auto result = Parse(file);
  EXPECT_TRUE(HasError(result, 9, "training.learning_rate must be a finite number (got 'fast')"));
  EXPECT_TRUE(
      HasError(result, 10, "training.per_device_train_batch_size must be an integer (got '8.5')"));
  EXPECT_TRUE(
      HasError(result, 11, "training.max_steps must be an integer (got the quoted string '100')"));
  EXPECT_TRUE(HasError(result, 12, "training.bf16 must be true or false"));
  EXPECT_TRUE(HasError(result, 13, "training.seed must be an integer (got a sequence)"));
  EXPECT_TRUE(HasError(result, 14, "resources must be a mapping of key: value (got a sequence)"));
  EXPECT_EQ(ProblemCount(result), 6);
  EXPECT_TRUE(HasError(Parse(GoodWithLine(1, "name: [a, b]")), 1,
                       "name must be a string (got a sequence)"));
  EXPECT_TRUE(HasError(Parse(std::string(kGood) + "training: fast\n"), 8,
                       "training must be a mapping of key: value (got 'fast')"));
  EXPECT_TRUE(HasError(Parse(GoodWithLine(7, "  block_size: {a: 1}")), 7,
                       "data.block_size must be an integer (got a mapping)"));
}

TEST_F(JobSpecErrorsTest, ValuesOutOfRange) {
  auto result = Parse(std::string(kGood) + R"(  validation_split_percentage: 100
training:
  learning_rate: -1
  warmup_ratio: 1
  per_device_train_batch_size: 3000000000
  lr_scheduler_type: cosin
resources: {gpus_per_worker: -1}
)");
  EXPECT_TRUE(
      HasError(result, 8, "data.validation_split_percentage must be in [0, 100) (got 100)"));
  EXPECT_TRUE(HasError(result, 10, "training.learning_rate must be > 0 (got -1)"));
  EXPECT_TRUE(HasError(result, 11, "training.warmup_ratio must be in [0, 1) (got 1)"));
  EXPECT_TRUE(HasError(result, 12,
                       "training.per_device_train_batch_size must be <= 2147483647 (got "
                       "3000000000)"));
  EXPECT_TRUE(HasError(result, 13,
                       "training.lr_scheduler_type must be one of linear, cosine, "
                       "cosine_with_restarts, polynomial, constant, constant_with_warmup, "
                       "inverse_sqrt, reduce_lr_on_plateau, cosine_with_min_lr, "
                       "cosine_warmup_with_min_lr, warmup_stable_decay (got 'cosin')"));
  EXPECT_TRUE(HasError(result, 14, "resources.gpus_per_worker must be >= 0 (got -1)"));
  EXPECT_EQ(ProblemCount(result), 6);
}

TEST_F(JobSpecErrorsTest, ExactMessageForNegativeLearningRate) {
  auto result = Parse(std::string(kGood) + "training:\n  learning_rate: -1\n");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(), "job.yaml:9: training.learning_rate must be > 0 (got -1)");
}

TEST_F(JobSpecErrorsTest, BlockSizeAboveNPositions) {
  EXPECT_TRUE(HasError(Parse(GoodWithLine(7, "  block_size: 65")), 7,
                       "data.block_size must be <= 64, the model's n_positions (got 65)"));
  // Without n_positions in the config, gpt2's default of 1024 applies.
  std::string file = GoodWithLine(3, "model: {config: {model_type: gpt2}}");
  size_t at = file.find("block_size: 32");
  EXPECT_TRUE(Parse(std::string(file).replace(at, 14, "block_size: 1024")).ok());
  EXPECT_TRUE(HasError(Parse(std::string(file).replace(at, 14, "block_size: 1025")), 7,
                       "data.block_size must be <= 1024"));
}

TEST_F(JobSpecErrorsTest, MissingFilesAndFolders) {
  auto result =
      Parse(GoodWithLine(6, "  train_file: data/missing.txt") + "  validation_file: data\n");
  EXPECT_TRUE(HasError(result, 6, "data.train_file: file not found: " + Abs("data/missing.txt")));
  EXPECT_TRUE(HasError(result, 8,
                       "data.validation_file: expected a file, found a directory: " + Abs("data")));
  EXPECT_TRUE(HasError(Parse(GoodWithLine(3, "model: {name_or_path: nomodel}")), 3,
                       "model.name_or_path: directory not found: " + Abs("nomodel")));
  EXPECT_TRUE(HasError(Parse(GoodWithLine(3, "model: {name_or_path: data}")), 3,
                       "model.name_or_path: no config.json in " + Abs("data")));
  EXPECT_TRUE(HasError(Parse(GoodWithLine(4, "tokenizer: {path: tok/nope.model}")), 4,
                       "tokenizer.path: path not found: " + Abs("tok/nope.model")));
}

TEST_F(JobSpecErrorsTest, MissingRequiredKeys) {
  auto result = Parse("# comment\nresources: {gpus_per_worker: 0}\n");
  EXPECT_TRUE(HasError(result, 2, "name is required"));
  EXPECT_TRUE(
      HasError(result, 2, "task is required (supported: clm, mlm, qa, glue, classification)"));
  EXPECT_TRUE(HasError(result, 2, "model: set one of model.name_or_path"));
  EXPECT_TRUE(HasError(result, 2, "tokenizer: set one of tokenizer.path"));
  EXPECT_TRUE(HasError(result, 2, "data.train_file is required"));
  EXPECT_EQ(ProblemCount(result), 5);
  EXPECT_TRUE(HasError(Parse(GoodWithLine(6, "  validation_file: data/valid.txt")), 5,
                       "data.train_file is required"));
  EXPECT_TRUE(HasError(Parse(GoodWithLine(2, "task:")), 2, "task is required"));
  EXPECT_TRUE(HasError(Parse(GoodWithLine(1, "name: \"\"")), 1, "name is required"));
}

TEST_F(JobSpecErrorsTest, UnknownAndUnsupportedTasks) {
  EXPECT_TRUE(HasError(Parse(GoodWithLine(2, "task: foo")), 2,
                       "task 'foo' is unknown (known: clm, mlm, qa, glue, classification)"));
  EXPECT_TRUE(HasError(Parse(GoodWithLine(2, "task: glue")), 5,
                       "data.task_name is required for task glue (one of cola, sst2"));
}

TEST_F(JobSpecErrorsTest, TaskSpecificKeysBelongToTheirTask) {
  auto result = Parse(std::string(kGood) + "  mlm_probability: 0.2\n  doc_stride: 64\n");
  EXPECT_TRUE(HasError(result, 8, "data.mlm_probability applies to task mlm, not to task 'clm'"));
  EXPECT_TRUE(HasError(result, 9, "data.doc_stride applies to task qa, not to task 'clm'"));
  // The default value is not "set": a normalised spec of another task keeps parsing.
  EXPECT_TRUE(Parse(std::string(kGood) + "  doc_stride: 128\n").ok());
  EXPECT_TRUE(HasError(Parse(std::string(kGood) + "  mlm_probability: 1.5\n"), 8,
                       "data.mlm_probability must be in (0, 1) (got 1.5)"));
}

TEST_F(JobSpecErrorsTest, TextColumnNameIsForClmAndMlmTables) {
  WriteFile("data/train.jsonl", "{\"body\": \"a\"}\n");
  WriteFile("data/valid.csv", "body\na\n");
  auto table = Parse(GoodWithLine(6, "  train_file: data/train.jsonl") +
                     "  validation_file: data/valid.csv\n  text_column_name: body\n");
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->data.text_column_name, "body");
  EXPECT_EQ(Parse(kGood)->data.text_column_name, "");
  // A text file's one column is "text".
  EXPECT_TRUE(Parse(std::string(kGood) + "  text_column_name: text\n").ok());
  EXPECT_TRUE(HasError(Parse(std::string(kGood) + "  text_column_name: body\n"), 8,
                       "data.text_column_name 'body' needs csv, tsv, json or jsonl data files, "
                       "but " +
                           Abs("data/train.txt") + " is a text file"));
  EXPECT_TRUE(HasError(Parse(GoodWithLine(6, "  train_file: data/train.jsonl") +
                             "  validation_file: data/train.txt\n  text_column_name: body\n"),
                       9, "but " + Abs("data/train.txt") + " is a text file"));
  EXPECT_TRUE(HasError(Parse(std::string(kGood) + "  text_column_name: [a]\n"), 8,
                       "data.text_column_name must be a string"));
  EXPECT_TRUE(HasError(Parse(GoodWithLine(2, "task: qa") + "  text_column_name: body\n"), 8,
                       "data.text_column_name applies to task clm, mlm, not to task 'qa'"));
}

TEST_F(JobSpecErrorsTest, LoadBestModelNeedsMatchingStrategies) {
  EXPECT_TRUE(HasError(Parse(std::string(kGood) + "training: {load_best_model_at_end: true}\n"), 8,
                       "needs evaluation_strategy steps or epoch"));
  EXPECT_TRUE(
      HasError(Parse(std::string(kGood) +
                     "training: {load_best_model_at_end: true, evaluation_strategy: steps,\n"
                     "  save_strategy: epoch}\n"),
               9, "needs save_strategy equal to evaluation_strategy"));
  EXPECT_TRUE(
      HasError(Parse(std::string(kGood) +
                     "training: {load_best_model_at_end: true, evaluation_strategy: steps,\n"
                     "  eval_steps: 30, save_steps: 50}\n"),
               9, "needs save_steps (50) to be a multiple of eval_steps (30)"));
  EXPECT_TRUE(Parse(std::string(kGood) +
                    "training: {load_best_model_at_end: true, evaluation_strategy: steps,\n"
                    "  eval_steps: 25, save_steps: 50, greater_is_better: ~}\n")
                  .ok());
  EXPECT_TRUE(HasError(Parse(std::string(kGood) + "training: {fp16: true, bf16: true}\n"), 8,
                       "set at most one of fp16 and bf16"));
}

// HF 5's save_strategy best: any evaluation strategy but "no", with or without
// load_best_model_at_end (which then needs no matching save_strategy or save_steps).
TEST_F(JobSpecErrorsTest, SaveStrategyBestNeedsEvaluations) {
  EXPECT_TRUE(HasError(Parse(std::string(kGood) + "training: {save_strategy: best}\n"), 8,
                       "training.save_strategy best saves after each evaluation that improves "
                       "metric_for_best_model: set evaluation_strategy steps or epoch"));
  auto best = Parse(std::string(kGood) +
                    "training: {save_strategy: best, evaluation_strategy: steps, eval_steps: 30,\n"
                    "  save_steps: 50, load_best_model_at_end: true}\n");
  ASSERT_TRUE(best.ok()) << best.status();
  EXPECT_EQ(best->training.save_strategy, "best");
  EXPECT_TRUE(
      Parse(std::string(kGood) + "training: {save_strategy: best, eval_strategy: epoch}\n").ok());
}

TEST_F(JobSpecErrorsTest, EvalStepsAloneMeansEvaluateEveryEvalSteps) {
  auto spec = Parse(std::string(kGood) + "training: {eval_steps: 50}\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->training.evaluation_strategy, "steps");
  spec = Parse(std::string(kGood) + "training: {eval_steps: 50, evaluation_strategy: epoch}\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->training.evaluation_strategy, "epoch");
  spec = Parse(kGood);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->training.evaluation_strategy, "no");
}

TEST_F(JobSpecErrorsTest, LoggingStrategyIsOneOfHfs) {
  EXPECT_TRUE(HasError(Parse(std::string(kGood) + "training:\n  logging_strategy: hourly\n"), 9,
                       "training.logging_strategy must be one of no, steps, epoch (got 'hourly')"));
  EXPECT_TRUE(HasError(Parse(std::string(kGood) + "training: {logging_first_step: maybe}\n"), 8,
                       "training.logging_first_step"));
  auto spec = Parse(kGood);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->training.logging_strategy, "steps");
  EXPECT_FALSE(spec->training.logging_first_step);
}

TEST_F(JobSpecErrorsTest, LoggingDirStaysInsideTheOutputFolder) {
  EXPECT_TRUE(HasError(Parse(std::string(kGood) + "training:\n  logging_dir: /tmp/tb\n"), 9,
                       "training.logging_dir must be a relative path inside the output folder, "
                       "without '..' (got '/tmp/tb')"));
  EXPECT_TRUE(HasError(Parse(std::string(kGood) + "training: {logging_dir: tb/../../x}\n"), 8,
                       "training.logging_dir must be a relative path inside the output folder, "
                       "without '..' (got 'tb/../../x')"));
  EXPECT_TRUE(HasError(Parse(std::string(kGood) + "training: {report_to: wandb}\n"), 8,
                       "training.report_to must be one of tensorboard, all, none (got 'wandb')"));
  auto spec = Parse(std::string(kGood) + "training: {logging_dir: tb/run1, report_to: all}\n");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->training.logging_dir, "tb/run1");
}

TEST_F(JobSpecErrorsTest, GlueReadsItsDataDirectory) {
  WriteFile("glue/MRPC/train.tsv", "x");
  const std::string job = R"(name: ok
task: glue
model: {config: {model_type: bert, hidden_size: 32, num_attention_heads: 4}}
tokenizer: {path: data/train.txt}
data: {task_name: mrpc, data_dir: glue/MRPC}
)";
  absl::StatusOr<JobSpec> spec = Parse(job);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->data.data_dir, Abs("glue/MRPC"));
  EXPECT_TRUE(HasError(Parse(R"(name: ok
task: glue
model: {config: {model_type: bert, hidden_size: 30, num_attention_heads: 4}}
tokenizer: {path: data/train.txt}
data: {task_name: mrpc}
)"),
                       3, "model.config.hidden_size (30) must be divisible by"));
}

TEST_F(JobSpecErrorsTest, InvalidName) {
  EXPECT_TRUE(HasError(Parse(GoodWithLine(1, "name: my job")), 1, "name 'my job' is invalid"));
  EXPECT_TRUE(HasError(Parse(GoodWithLine(1, "name: " + std::string(129, 'a'))), 1,
                       "is invalid: use 1 to 128"));
  EXPECT_TRUE(Parse(GoodWithLine(1, "name: " + std::string(128, 'a'))).ok());
}

TEST_F(JobSpecErrorsTest, ExactlyOneModelSource) {
  EXPECT_TRUE(
      HasError(Parse(GoodWithLine(3, "model:\n  name_or_path: gpt2\n  config: {model_type: gpt2}")),
               5, "model: set only one of model.name_or_path and model.config"));
  EXPECT_TRUE(
      HasError(Parse(GoodWithLine(3, "model: {}")), 3, "model: set one of model.name_or_path"));
  EXPECT_TRUE(HasError(Parse(GoodWithLine(3, "model: {name_or_path: \"\"}")), 3,
                       "model.name_or_path must not be empty"));
}

TEST_F(JobSpecErrorsTest, ModelConfigProblems) {
  auto result = Parse(GoodWithLine(3, R"(model:
  config:
    model_type: gpt2
    n_heads: 4
    n_embd: 30
    n_layer: 0
    resid_pdrop: 1.5
    use_cache: 3)"));
  EXPECT_TRUE(HasError(result, 6,
                       "unknown key 'model.config.n_heads' (did you mean "
                       "'model.config.n_head'?)"));
  EXPECT_TRUE(HasError(result, 7,
                       "model.config.n_embd (30) must be divisible by "
                       "model.config.n_head (12)"));
  EXPECT_TRUE(HasError(result, 8, "model.config.n_layer must be > 0 (got 0)"));
  EXPECT_TRUE(HasError(result, 9, "model.config.resid_pdrop must be in [0, 1) (got 1.5)"));
  EXPECT_TRUE(HasError(result, 10, "model.config.use_cache must be true or false"));
  EXPECT_TRUE(HasError(Parse(GoodWithLine(3, "model: {config: {n_layer: 2}}")), 3,
                       "model.config.model_type is required (supported: gpt2, bert, roberta, "
                       "distilbert, albert, electra)"));
  EXPECT_TRUE(HasError(Parse(GoodWithLine(3, "model:\n  config:\n    model_type: t5")), 5,
                       "model.config.model_type 't5' is not supported yet (supported: gpt2, "));
  EXPECT_TRUE(HasError(Parse(GoodWithLine(3, "model: {config: [gpt2]}")), 3,
                       "model.config must be a mapping of HF config keys (got a sequence)"));
}

// A repeated model_type whose second value is not a string: the checks use the first value
// and report the second, instead of throwing from the JSON copy that kept the second.
TEST_F(JobSpecErrorsTest, ARepeatedModelTypeIsReportedNotThrown) {
  auto result = Parse(GoodWithLine(
      3, "model: {config: {model_type: bert, hidden_size: 64, num_attention_heads: 4, "
         "model_type: }}"));
  EXPECT_FALSE(result.ok());
  EXPECT_TRUE(HasError(result, 3, "model.config.model_type")) << result.status();
}

TEST_F(JobSpecErrorsTest, PretrainedConfigJsonProblems) {
  WriteFile("t5/config.json", R"({"model_type": "t5"})");
  WriteFile("broken/config.json", "{not json");
  EXPECT_TRUE(HasError(Parse(GoodWithLine(3, "model: {name_or_path: t5}")), 3,
                       "model.name_or_path: model_type 't5' in " + Abs("t5/config.json") +
                           " is not supported yet (supported: gpt2, "));
  EXPECT_TRUE(
      HasError(Parse(GoodWithLine(3, "model: {name_or_path: broken}")), 3,
               "model.name_or_path: " + Abs("broken/config.json") + " is not a JSON object"));
}

TEST_F(JobSpecErrorsTest, ExactlyOneTokenizerSource) {
  EXPECT_TRUE(HasError(Parse(GoodWithLine(4, "tokenizer:\n  path: tok\n  train: {}")), 6,
                       "tokenizer: set only one of tokenizer.path and tokenizer.train"));
  EXPECT_TRUE(
      HasError(Parse(GoodWithLine(4, "tokenizer: {}")), 4, "tokenizer: set one of tokenizer.path"));
  EXPECT_TRUE(HasError(Parse(GoodWithLine(4, "tokenizer: {train: {type: wordpiece}}")), 4,
                       "tokenizer.train.type must be one of bpe, unigram (got 'wordpiece')"));
}

TEST_F(JobSpecErrorsTest, RelativePathWithoutBaseDir) {
  ParseOptions options;  // base_dir left empty
  auto result = ParseJobSpec(kGood, options);
  EXPECT_TRUE(HasError(result, 6,
                       "data.train_file: relative path 'data/train.txt' needs an "
                       "absolute base directory"));
}

TEST_F(JobSpecErrorsTest, ReportsEveryProblemAtOnceInLineOrder) {
  auto result = Parse(R"(name: bad name
task: qaa
model: {name_or_path: gpt2, config: {model_type: gpt2}}
tokenizer: {path: tok, train: {}}
data: {train_file: nowhere.txt, block_size: -4}
training: {learning_rate: 0, warmup_steps: x}
extra: 1
)");
  EXPECT_TRUE(HasError(result, 1, "name 'bad name' is invalid"));
  EXPECT_TRUE(HasError(result, 2, "task 'qaa' is unknown"));
  EXPECT_TRUE(HasError(result, 3, "model: set only one of"));
  EXPECT_TRUE(HasError(result, 4, "tokenizer: set only one of"));
  EXPECT_TRUE(HasError(result, 5, "data.train_file: file not found: " + Abs("nowhere.txt")));
  EXPECT_TRUE(HasError(result, 5, "data.block_size must be >= 0 (got -4)"));
  EXPECT_TRUE(HasError(result, 6, "training.learning_rate must be > 0 (got 0)"));
  EXPECT_TRUE(HasError(result, 6, "training.warmup_steps must be a finite number (got 'x')"));
  EXPECT_TRUE(HasError(result, 7, "unknown key 'extra'"));
  EXPECT_EQ(ProblemCount(result), 9);
  // Ordered by line.
  std::string message(result.status().message());
  EXPECT_LT(message.find("job.yaml:1:"), message.find("job.yaml:2:"));
  EXPECT_LT(message.find("job.yaml:6:"), message.find("job.yaml:7:"));
}

TEST_F(JobSpecErrorsTest, UsesTheSourceName) {
  ParseOptions options;
  options.source_name = "jobs/austen.yaml";
  options.base_dir = dir_.string();
  auto result = ParseJobSpec("name: [x]\n", options);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(std::string(result.status().message()).rfind("jobs/austen.yaml:1: name must be", 0), 0u)
      << result.status();
}

}  // namespace
}  // namespace lmtrain
