// lm-train's job-file options through the real process: a model too large for the machine,
// logging_strategy, eval_delay, overwrite_output_dir and HF's old names, tables as clm data,
// label_smoothing_factor, neftune_noise_alpha, include_num_input_tokens_seen,
// auto_find_batch_size.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <sstream>

#include "common/trainer_events.h"
#include "tests/test_paths.h"
#include "tests/worker/trainer/lm_train_child.h"
#include "tests/worker/trainer/lm_train_fixture.h"

namespace lmtrain {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing_child::Child;
using testing_child::kData;
using testing_child::ReadFile;

// A config whose weights cannot fit any machine fails before anything is allocated, with the
// sizes, not in the allocator with a LibTorch backtrace.
TEST_F(LmTrainTest, AModelTooLargeForTheMachineFailsBeforeAllocating) {
  const fs::path job = WriteJob("job.yaml",
                                "  config: {model_type: gpt2, n_layer: 2, n_head: 2, "
                                "n_embd: 4000000000, n_positions: 64}\n",
                                "  train: {type: bpe, vocab_size: 500}\n", "  max_steps: 2\n");
  Child child(dir_, job);
  ASSERT_TRUE(child.WaitForEof(std::chrono::seconds(60)));
  EXPECT_EQ(child.Wait(), 1);
  const std::string err = ReadFile(dir_ / "stderr.txt");
  EXPECT_THAT(err, HasSubstr("model.config: a model of"));
  EXPECT_THAT(err, HasSubstr("this machine has"));
  EXPECT_THAT(err, ::testing::Not(HasSubstr("frame #")));
}

// Lowers this process's address-space limit (RLIMIT_AS, soft) for its lifetime, so that a child
// spawned meanwhile inherits it: the CPU allocator then fails like a machine out of memory.
class ScopedAddressSpaceLimit {
 public:
  explicit ScopedAddressSpaceLimit(rlim_t bytes) {
    EXPECT_EQ(getrlimit(RLIMIT_AS, &saved_), 0);
    rlimit lowered = saved_;
    lowered.rlim_cur = bytes;
    EXPECT_EQ(setrlimit(RLIMIT_AS, &lowered), 0);
  }
  ~ScopedAddressSpaceLimit() { setrlimit(RLIMIT_AS, &saved_); }

 private:
  rlimit saved_{};
};

// HF's auto_find_batch_size through the real process, on a CPU that really runs out of memory:
// lm-train under a 6 GiB address space (about 3 of which its libraries map) cannot hold a step
// of 8 sequences of 1024 tokens with eager attention (16 heads of 1024²). Without the option
// the job fails with the batch size and what to change; with it, training starts over with
// int(8 × 0.9) = 7, then 6, ... until a step fits, and trainer_state.json records that batch.
TEST_F(LmTrainTest, AutoFindBatchSizeRetriesSmallerBatchesWhenMemoryRunsOut) {
  const auto write_job = [&](const std::string& name, const std::string& extra) {
    const fs::path job = dir_ / name;
    std::ofstream(job)
        << "name: oom\ntask: clm\n"
        << "model: {config: {model_type: gpt2, n_layer: 2, n_head: 16, n_embd: 64, "
           "n_positions: 1024}}\n"
        << "tokenizer: {path: " << LMTRAIN_SOURCE_DIR << "/tests/data/tokenizers/gpt2}\n"
        << "data: {train_file: " << kData << "austen_train.txt, block_size: 1024}\n"
        << "training: {per_device_train_batch_size: 8, max_steps: 1, do_eval: false, "
           "save_strategy: \"no\", device: cpu, report_to: none"
        << extra << "}\n";
    return job;
  };
  const auto run = [&](const fs::path& job) {
    const fs::path dir = dir_ / job.stem();
    fs::create_directories(dir);
    std::optional<Child> child;
    {
      ScopedAddressSpaceLimit limit(rlim_t{6} << 30);
      child.emplace(dir, job);
    }
    EXPECT_TRUE(child->WaitForEof(std::chrono::seconds(240)));
    return std::make_pair(child->Wait(), ReadFile(dir / "stderr.txt"));
  };
  const auto [failed, fixed_err] = run(write_job("fixed.yaml", ""));
  EXPECT_EQ(failed, 1) << fixed_err;
  EXPECT_THAT(fixed_err, HasSubstr("DefaultCPUAllocator: can't allocate memory"));
  EXPECT_THAT(fixed_err, HasSubstr("ran out of memory with per_device_train_batch_size 8"));
  EXPECT_THAT(fixed_err, HasSubstr("or set auto_find_batch_size: true"));

  const fs::path job = write_job("auto.yaml", ", auto_find_batch_size: true");
  const auto [code, err] = run(job);
  ASSERT_EQ(code, 0) << err;
  EXPECT_THAT(err, HasSubstr("warning: out of memory with per_device_train_batch_size 8; "
                             "retrying with 7 (auto_find_batch_size)"));
  const size_t last = err.rfind("retrying with ");
  ASSERT_NE(last, std::string::npos);
  const int fitted = std::atoi(err.c_str() + last + std::string("retrying with ").size());
  EXPECT_GE(fitted, 1);
  EXPECT_LT(fitted, 8);
  const nlohmann::json state =
      nlohmann::json::parse(ReadFile(dir_ / "auto" / "out" / "trainer_state.json"));
  EXPECT_EQ(state["train_batch_size"], fitted);
  EXPECT_EQ(state["global_step"], 1);
  // One attempt's history: the step's summary, nothing from the attempts that ran out.
  EXPECT_EQ(state["log_history"].size(), 1u) << state.dump();
}

// HF's bf16_full_eval: the evaluations during training are the same as without it (autocast
// off, float32), the final one runs on the bfloat16 model (close to, not equal to, float32's),
// and the weights written after it are the float32 ones, byte for byte.
TEST_F(LmTrainTest, Bf16FullEvalCastsTheFinalEvaluationOnly) {
  const auto run = [&](const std::string& name, const std::string& extra) {
    const fs::path job = TinyJob(name + ".yaml",
                                 "  max_steps: 6\n  eval_steps: 3\n  evaluation_strategy: steps\n"
                                 "  save_strategy: \"no\"\n  max_eval_samples: 16\n"
                                 "  report_to: none\n" +
                                     extra);
    const fs::path dir = dir_ / name;
    fs::create_directories(dir);
    Child child(dir, job);
    EXPECT_TRUE(child.WaitForEof(std::chrono::seconds(120)));
    EXPECT_EQ(child.Wait(), 0) << ReadFile(dir / "stderr.txt");
    return dir / "out";
  };
  const fs::path full = run("float32", "");
  const fs::path cast = run("bf16", "  bf16_full_eval: true\n");
  const auto eval_losses = [](const fs::path& out) {
    std::vector<double> losses;
    const nlohmann::json state = nlohmann::json::parse(ReadFile(out / "trainer_state.json"));
    for (const auto& entry : state["log_history"]) {
      if (entry.contains("eval_loss")) losses.push_back(entry["eval_loss"]);
    }
    return losses;
  };
  const std::vector<double> a = eval_losses(full), b = eval_losses(cast);
  ASSERT_EQ(a.size(), 2u);  // Steps 3 and 6, during training.
  // The same two, and the final evaluation on the cast model logged after them (float32's is
  // the step-6 one, not repeated).
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(std::vector<double>(b.begin(), b.begin() + 2), a);
  const double final_full =
      nlohmann::json::parse(ReadFile(full / "eval_results.json"))["eval_loss"];
  const double final_cast =
      nlohmann::json::parse(ReadFile(cast / "eval_results.json"))["eval_loss"];
  EXPECT_DOUBLE_EQ(final_full, a.back());
  EXPECT_DOUBLE_EQ(final_cast, b.back());
  EXPECT_NE(final_cast, final_full);
  EXPECT_NEAR(final_cast, final_full, 0.02 * final_full);
  EXPECT_EQ(ReadFile(cast / "model.safetensors"), ReadFile(full / "model.safetensors"));
}

// The events of a run of `job` in `dir`, which is expected to exit 0.
std::vector<TrainerEvent> RunEvents(const fs::path& dir, const fs::path& job) {
  Child child(dir, job);
  std::vector<TrainerEvent> events;
  while (auto event = child.NextEvent(std::chrono::seconds(60))) events.push_back(*event);
  EXPECT_EQ(child.Wait(), 0) << ReadFile(dir / "stderr.txt");
  return events;
}

// The training-log steps of a run of `job` in `dir` (train events only), with their epochs.
std::vector<std::pair<int64_t, double>> TrainLogs(const fs::path& dir, const fs::path& job) {
  std::vector<std::pair<int64_t, double>> logs;
  for (const TrainerEvent& event : RunEvents(dir, job)) {
    if (event.metrics.loss.has_value()) {
      logs.emplace_back(event.metrics.step.value_or(-1), event.metrics.epoch.value_or(-1));
    }
  }
  return logs;
}

// The steps at which a run of `job` in `dir` evaluated (evaluation events).
std::vector<int64_t> EvalSteps(const fs::path& dir, const fs::path& job) {
  std::vector<int64_t> steps;
  for (const TrainerEvent& event : RunEvents(dir, job)) {
    if (event.metrics.eval_loss.has_value()) steps.push_back(event.metrics.step.value_or(-1));
  }
  return steps;
}

// A one-layer GPT-2 job at `path` on 24 blocks of Jane Austen (an epoch is a few updates), with
// `training` as its training section and `data` added to its data section.
fs::path SmallClmJob(const fs::path& path, const std::string& training,
                     const std::string& data = "") {
  std::ofstream(path) << "name: small-clm\ntask: clm\n"
                      << "model: {config: {model_type: gpt2, n_layer: 1, n_head: 2, n_embd: 16, "
                         "n_positions: 64}}\n"
                      << "tokenizer: {train: {type: bpe, vocab_size: 300}}\n"
                      << "data:\n  train_file: " << kData << "austen_train.txt\n"
                      << "  validation_file: " << kData << "austen_valid.txt\n"
                      << "  block_size: 32\n  max_train_samples: 24\n"
                      << data << "training:\n"
                      << training;
  return path;
}

// logging_strategy and logging_first_step decide which updates log, as HF's
// DefaultFlowCallback: "no" with logging_first_step logs update 1 only; "epoch" logs each
// epoch's last update (logging_steps is not used).
TEST_F(LmTrainTest, LoggingStrategyAndFirstStep) {
  const std::string training = "  max_steps: 40\n  save_steps: 0\n  do_eval: false\n";
  fs::create_directories(dir_ / "no");
  const auto job = [&](const std::string& name, const std::string& logging) {
    return SmallClmJob(dir_ / name, training + logging);
  };
  const auto first_only = TrainLogs(
      dir_ / "no", job("no.yaml", "  logging_strategy: no\n  logging_first_step: true\n"));
  ASSERT_EQ(first_only.size(), 1u);
  EXPECT_EQ(first_only[0].first, 1);
  fs::create_directories(dir_ / "epoch");
  const auto epochs = TrainLogs(
      dir_ / "epoch", job("epoch.yaml", "  logging_strategy: epoch\n  logging_steps: 1\n"));
  ASSERT_GE(epochs.size(), 2u);
  for (const auto& [step, epoch] : epochs) {
    EXPECT_DOUBLE_EQ(epoch, std::round(epoch)) << "step " << step;  // An epoch's end.
  }
  EXPECT_EQ(epochs[1].first, 2 * epochs[0].first);
}

// eval_delay holds back evaluation_strategy's evaluations until that many steps ("steps") or
// epochs ("epoch"), as HF's DefaultFlowCallback; later ones keep their schedule.
TEST_F(LmTrainTest, EvalDelayHoldsBackTheFirstEvaluations) {
  // 24 examples in batches of 8: an epoch is 3 updates; 12 updates are 4 epochs.
  const auto job = [&](const std::string& name, const std::string& evaluation) {
    fs::create_directories(dir_ / name);
    const fs::path path = SmallClmJob(
        dir_ / (name + ".yaml"),
        "  max_steps: 12\n  save_steps: 0\n  do_eval: false\n  max_eval_samples: 8\n" + evaluation);
    return EvalSteps(dir_ / name, path);
  };
  using Steps = std::vector<int64_t>;
  EXPECT_EQ(job("steps", "  evaluation_strategy: steps\n  eval_steps: 2\n"),
            (Steps{2, 4, 6, 8, 10, 12}));
  EXPECT_EQ(
      job("steps-delayed", "  evaluation_strategy: steps\n  eval_steps: 2\n  eval_delay: 5\n"),
      (Steps{6, 8, 10, 12}));
  EXPECT_EQ(job("epochs", "  evaluation_strategy: epoch\n"), (Steps{3, 6, 9, 12}));
  EXPECT_EQ(job("epochs-delayed", "  evaluation_strategy: epoch\n  eval_delay: 1.5\n"),
            (Steps{6, 9, 12}));
}

// HF run_*.py's output-folder guard: a second run into a folder with checkpoints is refused
// unless it resumes; --auto-resume (what lm-worker passes a retried attempt) still resumes;
// overwrite_output_dir deletes the old checkpoints and starts over.
TEST_F(LmTrainTest, OutputDirWithCheckpointsNeedsOverwriteOrResume) {
  const std::string training = "  max_steps: 4\n  save_steps: 2\n  do_eval: false\n";
  const fs::path job = TinyJob("job.yaml", training);
  const fs::path out = dir_ / "out";
  {
    Child first(dir_, job);
    ASSERT_TRUE(first.WaitForEof(std::chrono::seconds(120)));
    ASSERT_EQ(first.Wait(), 0) << ReadFile(dir_ / "stderr.txt");
  }
  ASSERT_TRUE(fs::exists(out / "checkpoint-4"));
  {
    Child again(dir_, job);
    EXPECT_EQ(again.Wait(), 1);
    EXPECT_THAT(ReadFile(dir_ / "stderr.txt"),
                HasSubstr("Output directory (" + out.string() +
                          ") already exists and is not empty: it holds checkpoint-4. Use "
                          "--overwrite_output_dir to overcome"));
  }
  {
    Child retry(dir_, job, {"--auto-resume"});
    ASSERT_TRUE(retry.WaitForEof(std::chrono::seconds(120)));
    ASSERT_EQ(retry.Wait(), 0) << ReadFile(dir_ / "stderr.txt");
    EXPECT_THAT(ReadFile(dir_ / "stdout.txt"),
                HasSubstr("Resumed from " + (out / "checkpoint-4").string()));
  }
  fs::create_directories(out / "checkpoint-99");  // A stale folder of some older run.
  const fs::path overwrite = TinyJob(
      "overwrite.yaml", training + "  overwrite_output_dir: true\n  per_gpu_train_batch_size: 4\n");
  Child fresh(dir_, overwrite);
  ASSERT_TRUE(fresh.WaitForEof(std::chrono::seconds(120)));
  ASSERT_EQ(fresh.Wait(), 0) << ReadFile(dir_ / "stderr.txt");
  const std::string stdout_text = ReadFile(dir_ / "stdout.txt");
  EXPECT_THAT(stdout_text, HasSubstr("overwrite_output_dir: deleted 3 checkpoint folder(s)"));
  EXPECT_THAT(stdout_text, ::testing::Not(HasSubstr("Resumed from")));
  EXPECT_FALSE(fs::exists(out / "checkpoint-99"));
  EXPECT_TRUE(fs::exists(out / "checkpoint-4" / "manifest.json"));
  EXPECT_THAT(ReadFile(dir_ / "stderr.txt"),
              HasSubstr("warning: " + overwrite.string() +
                        ":16: training.per_gpu_train_batch_size is deprecated: use "
                        "training.per_device_train_batch_size"));
}

// The first `count` lines of `from`, written to `txt` as they are and to `jsonl` as rows
// {"id": i, "body": line}.
void WriteTextAndTable(const fs::path& from, size_t count, const fs::path& txt,
                       const fs::path& jsonl) {
  std::ifstream in(from);
  std::ofstream text(txt), table(jsonl);
  std::string line;
  for (size_t i = 0; i < count && std::getline(in, line); ++i) {
    text << line << "\n";
    table << nlohmann::json{{"id", i}, {"body", line}}.dump() << "\n";
  }
}

std::string DataLine(const std::string& stdout_text) {
  std::istringstream in(stdout_text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("data: ", 0) == 0) return line;
  }
  return "";
}

TEST_F(LmTrainTest, ClmOnATableReadsOnlyItsTextColumn) {
  WriteTextAndTable(kData + "austen_train.txt", 400, dir_ / "train.txt", dir_ / "train.jsonl");
  WriteTextAndTable(kData + "austen_valid.txt", 100, dir_ / "valid.txt", dir_ / "valid.jsonl");
  auto run = [&](const std::string& name, const std::string& extension,
                 const std::string& column_key) {
    const fs::path job = dir_ / (name + ".yaml");
    std::ofstream(job) << "name: " << name << "\ntask: clm\n"
                       << "model: {config: {model_type: gpt2, n_layer: 1, n_head: 2, n_embd: 16, "
                       << "n_positions: 32}}\n"
                       << "tokenizer: {train: {type: bpe, vocab_size: 300}}\n"
                       << "data:\n  train_file: train." << extension << "\n"
                       << "  validation_file: valid." << extension << "\n  block_size: 32\n"
                       << column_key << "training: {max_steps: 2, logging_steps: 1}\n";
    Child child(dir_ / name, job, {}, {}, dir_ / name / "out");
    EXPECT_TRUE(child.WaitForEof(std::chrono::seconds(120)));
    EXPECT_EQ(child.Wait(), 0) << ReadFile(dir_ / name / "stderr.txt");
    return DataLine(ReadFile(dir_ / name / "stdout.txt"));
  };
  fs::create_directories(dir_ / "text");
  fs::create_directories(dir_ / "table");
  const std::string text = run("text", "txt", "");
  const std::string table = run("table", "jsonl", "  text_column_name: body\n");
  EXPECT_THAT(text, HasSubstr(" train and "));
  EXPECT_EQ(table, text);  // Same examples: the JSON syntax never reached the tokenizer.
  const fs::path tokenizer = fs::path("out") / "tokenizer";
  EXPECT_EQ(ReadFile(dir_ / "table" / tokenizer / "spiece.model"),
            ReadFile(dir_ / "text" / tokenizer / "spiece.model"));
  EXPECT_FALSE(fs::exists(dir_ / "table" / tokenizer / "train_texts.txt"));
}

// The num_input_tokens_seen of the log_history entries of `dir`/out/trainer_state.json that
// have `key`, with their steps.
std::vector<std::pair<int64_t, int64_t>> TokensSeen(const fs::path& dir, const std::string& key) {
  const auto state = nlohmann::json::parse(ReadFile(dir / "out" / "trainer_state.json"));
  std::vector<std::pair<int64_t, int64_t>> seen;
  for (const nlohmann::json& entry : state["log_history"]) {
    if (!entry.contains(key)) continue;
    seen.emplace_back(entry["step"].get<int64_t>(), entry.value("num_input_tokens_seen", -1));
  }
  return seen;
}

// include_num_input_tokens_seen, as HF's Trainer: every log (training, evaluation, the final
// summary) carries the input tokens trained on so far, printed too; a resumed run continues the
// checkpoint's count; "non_padding" leaves out the padding that "all" counts.
TEST_F(LmTrainTest, InputTokensSeenAreLoggedAndResumed) {
  using Seen = std::vector<std::pair<int64_t, int64_t>>;
  // Blocks of 32 tokens, 8 per update: 256 input tokens per update, none of them padding.
  const std::string training =
      "  logging_steps: 1\n  save_steps: 3\n  evaluation_strategy: steps\n  eval_steps: 3\n"
      "  max_eval_samples: 8\n  do_eval: false\n  include_num_input_tokens_seen: true\n";
  const fs::path grouped = dir_ / "grouped";
  fs::create_directories(grouped);
  RunEvents(grouped, SmallClmJob(dir_ / "grouped.yaml", training + "  max_steps: 3\n"));
  EXPECT_EQ(TokensSeen(grouped, "loss"), (Seen{{1, 256}, {2, 512}, {3, 768}}));
  EXPECT_EQ(TokensSeen(grouped, "eval_loss"), (Seen{{3, 768}}));
  EXPECT_EQ(TokensSeen(grouped, "train_loss"), (Seen{{3, 768}}));
  EXPECT_THAT(ReadFile(grouped / "stdout.txt"),
              HasSubstr("'epoch': 0.33, 'num_input_tokens_seen': 256, 'train_runtime': "));
  RunEvents(grouped, SmallClmJob(dir_ / "resumed.yaml",
                                 training + "  max_steps: 6\n  resume_from_checkpoint: latest\n"));
  EXPECT_EQ(TokensSeen(grouped, "train_loss"), (Seen{{6, 1536}}));
  const auto state = nlohmann::json::parse(ReadFile(grouped / "out" / "trainer_state.json"));
  EXPECT_EQ(state["num_input_tokens_seen"], 1536);
  for (const nlohmann::json& entry : state["log_history"]) {
    if (entry.contains("loss")) EXPECT_TRUE(entry.contains("train_tokens_per_second")) << entry;
  }

  // One line per example, padded to the batch's longest: "all" counts the padding.
  const auto final_count = [&](const std::string& what) {
    fs::create_directories(dir_ / what);
    RunEvents(dir_ / what, SmallClmJob(dir_ / (what + ".yaml"),
                                       "  max_steps: 3\n  save_steps: 0\n  do_eval: false\n"
                                       "  include_num_input_tokens_seen: " +
                                           what + "\n",
                                       "  line_by_line: true\n"));
    const Seen seen = TokensSeen(dir_ / what, "train_loss");
    return seen.empty() ? -1 : seen[0].second;
  };
  const int64_t all = final_count("all"), non_padding = final_count("non_padding");
  EXPECT_GT(non_padding, 0);
  EXPECT_LT(non_padding, all);
}

class LmTrainLossOptionsTest : public LmTrainTest {
 protected:
  // The eval_loss of lm-train evaluating (do_train: false) the tiny fresh GPT-2 of TinyJob with
  // `extra` training keys, run in dir_/`name`.
  double EvalOnlyLoss(const std::string& name, const std::string& extra) {
    fs::create_directories(dir_ / name);
    const fs::path job =
        TinyJob(name + ".yaml", "  do_train: false\n  max_eval_samples: 16\n" + extra);
    Child child(dir_ / name, job);
    EXPECT_TRUE(child.WaitForEof(std::chrono::seconds(120)));
    EXPECT_EQ(child.Wait(), 0) << ReadFile(dir_ / name / "stderr.txt");
    const auto all = nlohmann::json::parse(ReadFile(dir_ / name / "out" / "all_results.json"));
    return all["eval_loss"].get<double>();
  }
};

// training.label_smoothing_factor reaches the loss in the real process: the same fresh model on
// the same evaluation set reports another eval_loss with it; a classification whose labels are
// numbers (a regression) or a multi-label model is refused, naming the key, before anything
// trains.
TEST_F(LmTrainLossOptionsTest, LabelSmoothingChangesTheLossAndNeedsClassLabels) {
  const double plain = EvalOnlyLoss("plain", "");
  const double smoothed = EvalOnlyLoss("smoothed", "  label_smoothing_factor: 0.5\n");
  EXPECT_TRUE(std::isfinite(plain) && std::isfinite(smoothed)) << plain << " " << smoothed;
  EXPECT_GT(std::abs(smoothed - plain), 1e-5) << plain;

  // A classification job on `labels` (one per row) whose model config adds `config`; its stderr.
  const auto refusal = [&](const std::string& name, const std::vector<std::string>& labels,
                           const std::string& config) {
    fs::create_directories(dir_ / name);
    std::ofstream csv(dir_ / name / "train.csv");
    csv << "text,label\n";
    for (size_t i = 0; i < labels.size(); ++i)
      csv << "line number " << i << "," << labels[i] << "\n";
    csv.close();
    const fs::path job = dir_ / name / "job.yaml";
    std::ofstream(job) << "name: " << name << "\ntask: classification\n"
                       << "model: {config: {model_type: bert, hidden_size: 16, "
                       << "num_hidden_layers: 1, num_attention_heads: 2, intermediate_size: 32"
                       << config << "}}\n"
                       << "tokenizer: {path: " << LMTRAIN_SOURCE_DIR
                       << "/tests/data/tokenizers/bert-base-uncased}\n"
                       << "data: {train_file: train.csv}\n"
                       << "training: {max_steps: 1, do_eval: false, label_smoothing_factor: 0.1}\n";
    Child child(dir_ / name, job);
    EXPECT_TRUE(child.WaitForEof(std::chrono::seconds(120)));
    EXPECT_EQ(child.Wait(), 1) << name;
    return ReadFile(dir_ / name / "stderr.txt");
  };
  EXPECT_THAT(refusal("regression", {"0.5", "1.25", "2.0", "0.75"}, ""),
              HasSubstr("training.label_smoothing_factor smooths class labels, and this task is "
                        "a regression"));
  EXPECT_THAT(
      refusal("multi-label", {"0", "1", "1", "0"}, ", problem_type: multi_label_classification"),
      HasSubstr("training.label_smoothing_factor does not apply to multi-label "
                "classification"));
}

// training.neftune_noise_alpha: the noise changes what a training step sees (the first logged
// loss) but not an evaluation (eval mode has none), with the same seed.
TEST_F(LmTrainLossOptionsTest, NeftuneNoiseChangesTrainingButNotEvaluation) {
  const auto first_loss = [&](const std::string& name, const std::string& extra) {
    fs::create_directories(dir_ / name);
    const fs::path job =
        TinyJob(name + ".yaml",
                "  max_steps: 2\n  logging_steps: 1\n  do_eval: false\n  save_steps: 0\n" + extra);
    for (const TrainerEvent& event : RunEvents(dir_ / name, job)) {
      if (event.metrics.loss.has_value()) return *event.metrics.loss;
    }
    return std::nan("");
  };
  const double plain = first_loss("plain", "");
  const double noisy = first_loss("noisy", "  neftune_noise_alpha: 50\n");
  EXPECT_TRUE(std::isfinite(plain) && std::isfinite(noisy)) << plain << " " << noisy;
  EXPECT_GT(std::abs(noisy - plain), 1e-4) << plain;
  EXPECT_EQ(EvalOnlyLoss("eval-plain", ""),
            EvalOnlyLoss("eval-noisy", "  neftune_noise_alpha: 50\n"));
}

}  // namespace
}  // namespace lmtrain
