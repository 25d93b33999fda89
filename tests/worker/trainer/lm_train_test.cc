// The real lm-train binary: a job file in, events on a pipe, files and exit codes out.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
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
using testing_child::Clock;
using testing_child::kBinary;
using testing_child::kData;
using testing_child::ReadFile;

std::string Describe(const TrainerEvent& e) {
  switch (e.type) {
    case TrainerEvent::Type::kCheckpoint:
      return "checkpoint@" + std::to_string(e.step);
    case TrainerEvent::Type::kError:
      return "error";
    case TrainerEvent::Type::kMetrics:
      return (e.metrics.eval_loss ? "eval@" : "train@") +
             std::to_string(e.metrics.step.value_or(-1));
  }
  return "?";
}

TEST_F(LmTrainTest, TrainsReportsEventsAndWritesHfOutputs) {
  const fs::path job = TinyJob("job.yaml",
                               "  learning_rate: 0.003\n"
                               "  max_steps: 30\n"
                               "  warmup_steps: 3\n"
                               "  logging_steps: 10\n"
                               "  evaluation_strategy: steps\n  eval_steps: 15\n"
                               "  save_steps: 15\n"
                               "  save_total_limit: 1\n"
                               "  max_eval_samples: 32\n"
                               "  eval_on_start: true\n");
  Child child(dir_, job);
  std::vector<TrainerEvent> events;
  while (auto event = child.NextEvent(std::chrono::seconds(50))) events.push_back(*event);
  ASSERT_EQ(child.Wait(), 0) << ReadFile(dir_ / "stderr.txt");

  std::vector<std::string> kinds;
  for (const auto& e : events) kinds.push_back(Describe(e));
  EXPECT_THAT(kinds, ::testing::ElementsAre("eval@0", "train@10", "eval@15", "checkpoint@15",
                                            "train@20", "train@30", "eval@30", "checkpoint@30"));
  const fs::path out = dir_ / "out";
  EXPECT_EQ(events.back().path, (out / "checkpoint-30").string());
  EXPECT_TRUE(events[1].metrics.tokens_per_second.value_or(0) > 0);
  EXPECT_EQ(events[1].metrics.max_steps, 30);
  EXPECT_LT(*events[6].metrics.eval_loss, *events[0].metrics.eval_loss);

  EXPECT_FALSE(fs::exists(out / "checkpoint-15"));  // save_total_limit: 1
  for (const char* file : {"checkpoint-30/model.safetensors", "config.json", "model.safetensors",
                           "spiece.model", "trainer_state.json", "train_results.json",
                           "eval_results.json", "all_results.json", "tokenizer/spiece.model"}) {
    EXPECT_TRUE(fs::exists(out / file)) << file;
  }
  for (const auto& entry : fs::directory_iterator(out)) {
    EXPECT_NE(entry.path().filename().string().rfind(".tmp", 0), 0u) << entry.path();
  }
  const auto all = nlohmann::json::parse(ReadFile(out / "all_results.json"));
  EXPECT_DOUBLE_EQ(all["eval_loss"].get<double>(), *events[6].metrics.eval_loss);
  EXPECT_NEAR(all["perplexity"].get<double>(), std::exp(all["eval_loss"].get<double>()), 1e-9);
  EXPECT_TRUE(all.contains("train_loss") && all.contains("train_runtime"));
  EXPECT_THAT(ReadFile(dir_ / "stdout.txt"), HasSubstr("'learning_rate': "));

  // do_train: false evaluates the saved checkpoint: the same eval loss as reported.
  const fs::path ckpt = dir_ / "saved-checkpoint";
  fs::rename(out / "checkpoint-30", ckpt);
  fs::remove_all(out);
  const fs::path eval_job = WriteJob("eval.yaml", "  name_or_path: " + ckpt.string() + "\n",
                                     "  path: " + (ckpt / "spiece.model").string() + "\n",
                                     "  do_train: false\n  max_eval_samples: 32\n");
  Child evaluator(dir_, eval_job);
  ASSERT_TRUE(evaluator.WaitForEof(std::chrono::seconds(30)));
  ASSERT_EQ(evaluator.Wait(), 0) << ReadFile(dir_ / "stderr.txt");
  const auto eval = nlohmann::json::parse(ReadFile(out / "eval_results.json"));
  EXPECT_NEAR(eval["eval_loss"].get<double>(), *events[6].metrics.eval_loss, 1e-5);
  EXPECT_FALSE(fs::exists(out / "train_results.json"));
}

TEST_F(LmTrainTest, SigtermStopsPromptlyWithExitCode143) {
  const fs::path job = TinyJob("job.yaml",
                               "  max_steps: 100000\n"
                               "  logging_steps: 1\n"
                               "  save_steps: 0\n"
                               "  do_eval: false\n");
  Child child(dir_, job);
  std::optional<TrainerEvent> event;
  do {
    event = child.NextEvent(std::chrono::seconds(40));
  } while (event && !event->metrics.loss.has_value());
  ASSERT_TRUE(event.has_value()) << ReadFile(dir_ / "stderr.txt");
  const auto sent = Clock::now();
  ASSERT_EQ(kill(child.pid(), SIGTERM), 0);
  ASSERT_TRUE(child.WaitForEof(std::chrono::seconds(5)));
  const auto reaction = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - sent);
  EXPECT_EQ(child.Wait(), 143);
  EXPECT_LT(reaction.count(), 1500);  // A step of this model is milliseconds.
  EXPECT_THAT(ReadFile(dir_ / "stderr.txt"), HasSubstr("received SIGTERM at step "));
  EXPECT_THAT(ReadFile(dir_ / "stderr.txt"), HasSubstr(", stopping"));
  EXPECT_FALSE(fs::exists(dir_ / "out" / "model.safetensors"));
}

TEST_F(LmTrainTest, BadJobFileExitsOneWithTheMessageAndAnErrorEvent) {
  const fs::path job = TinyJob("bad.yaml", "  learning_rate: -1\n");
  Child child(dir_, job);
  std::optional<TrainerEvent> event = child.NextEvent(std::chrono::seconds(20));
  EXPECT_EQ(child.Wait(), 1);
  const std::string stderr_text = ReadFile(dir_ / "stderr.txt");
  EXPECT_THAT(stderr_text, HasSubstr("training.learning_rate must be > 0"));
  ASSERT_TRUE(event.has_value());
  EXPECT_EQ(event->type, TrainerEvent::Type::kError);
  EXPECT_THAT(event->message, HasSubstr("training.learning_rate must be > 0"));
}

TEST_F(LmTrainTest, MissingJobFileAndBadFlagsExitOne) {
  Child missing(dir_, dir_ / "nope.yaml");
  EXPECT_EQ(missing.Wait(), 1);
  EXPECT_THAT(ReadFile(dir_ / "stderr.txt"), HasSubstr("cannot open job file"));
  Child bad_flag(dir_, dir_ / "nope.yaml", {"--bogus"});
  EXPECT_EQ(bad_flag.Wait(), 1);
  EXPECT_THAT(ReadFile(dir_ / "stderr.txt"), HasSubstr("unknown flag --bogus"));
}

// The seed of the kill step: LMTRAIN_TEST_SEED if set (to replay a failure), else the clock.
uint64_t KillStepSeed() {
  const char* env = std::getenv("LMTRAIN_TEST_SEED");
  return env != nullptr ? std::stoull(env)
                        : static_cast<uint64_t>(
                              std::chrono::system_clock::now().time_since_epoch().count());
}

// Exact resume: SIGKILL at a random step (5 to 26, drawn from a printed seed), restart with
// --resume, and the final weights equal an uninterrupted run's byte for byte; the log history
// has every logged step exactly once. `job` runs kResumeSteps steps, logging every step: far
// more than the kill step, so that a test process slowed by a busy machine still kills the
// trainer before it finishes.
constexpr int kResumeSteps = 80;
void KillAtARandomStepAndResume(const fs::path& dir, const fs::path& job) {
  fs::create_directories(dir / "straight");
  fs::create_directories(dir / "killed");
  {
    Child straight(dir / "straight", job);
    ASSERT_TRUE(straight.WaitForEof(std::chrono::seconds(240)));
    ASSERT_EQ(straight.Wait(), 0) << ReadFile(dir / "straight" / "stderr.txt");
  }
  const uint64_t seed = KillStepSeed();
  std::mt19937_64 rng(seed);
  const int kill_step = 5 + static_cast<int>(rng() % 22);  // 5..26
  const std::string trace = "killed after step " + std::to_string(kill_step) + ", seed " +
                            std::to_string(seed) + " (LMTRAIN_TEST_SEED replays it)";
  std::cout << trace << std::endl;
  SCOPED_TRACE(trace);
  {
    Child victim(dir / "killed", job);
    while (auto event = victim.NextEvent(std::chrono::seconds(120))) {
      if (event->metrics.step.value_or(0) >= kill_step) break;
    }
    ASSERT_EQ(kill(victim.pid(), SIGKILL), 0);
    EXPECT_EQ(victim.Wait(), 128 + SIGKILL);
  }
  ASSERT_FALSE(fs::exists(dir / "killed" / "out" / "model.safetensors"));
  Child resumed(dir / "killed", job, {"--resume"});
  ASSERT_TRUE(resumed.WaitForEof(std::chrono::seconds(240)));
  ASSERT_EQ(resumed.Wait(), 0) << ReadFile(dir / "killed" / "stderr.txt");
  EXPECT_THAT(ReadFile(dir / "killed" / "stdout.txt"), HasSubstr("Resumed from "));
  const std::string a = ReadFile(dir / "straight" / "out" / "model.safetensors");
  const std::string b = ReadFile(dir / "killed" / "out" / "model.safetensors");
  ASSERT_FALSE(a.empty());
  EXPECT_TRUE(a == b) << "final weights differ";
  const auto state = nlohmann::json::parse(ReadFile(dir / "killed" / "out" / "trainer_state.json"));
  std::vector<int64_t> logged;
  for (const auto& entry : state["log_history"]) {
    if (entry.contains("loss")) logged.push_back(entry["step"].get<int64_t>());
  }
  std::vector<int64_t> expected(kResumeSteps);
  for (int i = 0; i < kResumeSteps; ++i) expected[i] = i + 1;
  EXPECT_EQ(logged, expected);
}

// With NEFTune's embedding noise (drawn from the generator a checkpoint restores) and label
// smoothing on.
TEST_F(LmTrainTest, SigkillAtARandomStepThenResumeIsBitIdentical) {
  KillAtARandomStepAndResume(dir_, TinyJob("job.yaml",
                                           "  max_steps: 80\n  logging_steps: 1\n  save_steps: 4\n"
                                           "  learning_rate: 3.0e-3\n  warmup_steps: 3\n"
                                           "  per_device_train_batch_size: 8\n  do_eval: false\n"
                                           "  neftune_noise_alpha: 5\n"
                                           "  label_smoothing_factor: 0.1\n"));
}

// The same for MLM, where every batch draws fresh masks and dropout is on, with Adafactor and
// gradient accumulation: masks come from (seed, step, micro-batch), dropout from the restored
// generator, Adafactor's factored moments from optimizer.pt.
TEST_F(LmTrainTest, MlmWithAdafactorResumesBitIdentically) {
  const fs::path job = dir_ / "mlm.yaml";
  std::ofstream(job) << "name: mlm-resume\ntask: mlm\n"
                     << "model:\n  config: {model_type: bert, hidden_size: 32, "
                        "num_hidden_layers: 2, num_attention_heads: 2, intermediate_size: 64, "
                        "max_position_embeddings: 64}\n"
                     << "tokenizer:\n  path: " << LMTRAIN_SOURCE_DIR
                     << "/tests/data/tokenizers/bert-base-uncased\n"
                     << "data:\n  train_file: " << kData << "austen_train.txt\n"
                     << "  validation_file: " << kData << "austen_valid.txt\n"
                     << "  max_seq_length: 32\n  whole_word_masking: true\n"
                     << "training:\n  optim: adafactor\n  learning_rate: 1.0e-3\n"
                     << "  max_steps: 80\n  logging_steps: 1\n  save_steps: 4\n"
                     << "  per_device_train_batch_size: 4\n  gradient_accumulation_steps: 2\n"
                     << "  do_eval: false\n";
  KillAtARandomStepAndResume(dir_, job);
}

// The newest checkpoint-N folders in `out`, newest first.
std::vector<fs::path> CheckpointsNewestFirst(const fs::path& out) {
  std::vector<std::pair<int, fs::path>> found;
  for (const auto& entry : fs::directory_iterator(out)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("checkpoint-", 0) == 0) found.emplace_back(std::stoi(name.substr(11)), entry);
  }
  std::sort(found.rbegin(), found.rend());
  std::vector<fs::path> paths;
  for (const auto& [step, path] : found) paths.push_back(path);
  return paths;
}

// After a SIGKILL the newest checkpoint's model.safetensors has a flipped byte (still
// a loadable file) and the one before has a truncated optimizer.pt. An explicit resume from
// the newest fails naming the file; --auto-resume skips both with warnings, resumes from the
// third, and the final weights still equal an uninterrupted run's byte for byte.
TEST_F(LmTrainTest, AutoResumeSkipsCorruptCheckpointsAndStaysBitIdentical) {
  const std::string training =
      "  max_steps: 30\n  logging_steps: 1\n  save_steps: 4\n  learning_rate: 3.0e-3\n"
      "  warmup_steps: 3\n  per_device_train_batch_size: 8\n  do_eval: false\n";
  const fs::path job = TinyJob("job.yaml", training);
  for (const char* sub : {"straight", "killed", "explicit"}) fs::create_directories(dir_ / sub);
  {
    Child straight(dir_ / "straight", job);
    ASSERT_TRUE(straight.WaitForEof(std::chrono::seconds(240)));
    ASSERT_EQ(straight.Wait(), 0) << ReadFile(dir_ / "straight" / "stderr.txt");
  }
  {
    Child victim(dir_ / "killed", job);
    while (auto event = victim.NextEvent(std::chrono::seconds(120))) {
      if (event->type == TrainerEvent::Type::kCheckpoint && event->step >= 12) break;
    }
    ASSERT_EQ(kill(victim.pid(), SIGKILL), 0);
    EXPECT_EQ(victim.Wait(), 128 + SIGKILL);
  }
  const std::vector<fs::path> checkpoints = CheckpointsNewestFirst(dir_ / "killed" / "out");
  ASSERT_GE(checkpoints.size(), 3u);
  const fs::path newest = checkpoints[0], second = checkpoints[1], third = checkpoints[2];
  SCOPED_TRACE("newest " + newest.string());
  std::string weights = ReadFile(newest / "model.safetensors");
  weights[weights.size() / 2] ^= 0x10;
  std::ofstream(newest / "model.safetensors", std::ios::binary | std::ios::trunc) << weights;
  fs::resize_file(second / "optimizer.pt", fs::file_size(second / "optimizer.pt") / 2);

  const fs::path explicit_job =
      TinyJob("explicit.yaml", training + "  resume_from_checkpoint: " + newest.string() + "\n");
  Child refused(dir_ / "explicit", explicit_job);
  EXPECT_EQ(refused.Wait(), 1);
  EXPECT_THAT(ReadFile(dir_ / "explicit" / "stderr.txt"),
              HasSubstr("training.resume_from_checkpoint: checkpoint " + newest.string() +
                        " is corrupt: model.safetensors has SHA-256 "));

  Child resumed(dir_ / "killed", job, {"--auto-resume"});
  ASSERT_TRUE(resumed.WaitForEof(std::chrono::seconds(240)));
  ASSERT_EQ(resumed.Wait(), 0) << ReadFile(dir_ / "killed" / "stderr.txt");
  const std::string warnings = ReadFile(dir_ / "killed" / "stderr.txt");
  EXPECT_THAT(warnings, HasSubstr("warning: checkpoint " + newest.string() +
                                  " is corrupt: model.safetensors has SHA-256 "));
  EXPECT_THAT(warnings, HasSubstr("warning: checkpoint " + second.string() +
                                  " is corrupt: optimizer.pt has "));
  EXPECT_THAT(ReadFile(dir_ / "killed" / "stdout.txt"),
              HasSubstr("Resumed from " + third.string() + " at step "));
  const std::string a = ReadFile(dir_ / "straight" / "out" / "model.safetensors");
  ASSERT_FALSE(a.empty());
  EXPECT_TRUE(a == ReadFile(dir_ / "killed" / "out" / "model.safetensors"))
      << "final weights differ";
  // The corrupt checkpoint was written again, as the uninterrupted run wrote it.
  EXPECT_TRUE(ReadFile(dir_ / "straight" / "out" / newest.filename() / "model.safetensors") ==
              ReadFile(newest / "model.safetensors"));
}

// lm-train predict on the model a short run saved: a greedy continuation of the prompt, the
// same on every call; and a clear error for a model without a masked-LM head.
TEST_F(LmTrainTest, PredictGeneratesFromTheSavedModel) {
  const fs::path job = TinyJob("job.yaml", "  max_steps: 3\n  do_eval: false\n");
  {
    Child child(dir_, job);
    ASSERT_TRUE(child.WaitForEof(std::chrono::seconds(120)));
    ASSERT_EQ(child.Wait(), 0) << ReadFile(dir_ / "stderr.txt");
  }
  const std::string model = (dir_ / "out").string();
  auto run = [&](const std::string& args, const std::string& name) {
    const std::string cmd = kBinary + " predict --model " + model + " " + args + " > " +
                            (dir_ / (name + ".out")).string() + " 2> " +
                            (dir_ / (name + ".err")).string();
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  ASSERT_EQ(run("--generate 'It is a truth' --max-new-tokens 6", "a"), 0)
      << ReadFile(dir_ / "a.err");
  ASSERT_EQ(run("--generate 'It is a truth' --max-new-tokens 6", "b"), 0);
  const auto a = nlohmann::json::parse(ReadFile(dir_ / "a.out"));
  EXPECT_EQ(a["generated_text"].get<std::string>().rfind("It is a truth", 0), 0u);
  EXPECT_EQ(ReadFile(dir_ / "a.out"), ReadFile(dir_ / "b.out"));  // Greedy is deterministic.
  EXPECT_EQ(run("--fill-mask 'a [MASK] b'", "c"), 1);
  EXPECT_THAT(ReadFile(dir_ / "c.err"), HasSubstr("is not a masked LM"));
}

TEST_F(LmTrainTest, ResumeWithoutACheckpointFailsClearly) {
  const fs::path job = TinyJob("job.yaml", "  max_steps: 2\n");
  Child child(dir_, job, {"--resume"});
  ASSERT_TRUE(child.WaitForEof(std::chrono::seconds(60)));
  EXPECT_EQ(child.Wait(), 1);
  EXPECT_THAT(ReadFile(dir_ / "stderr.txt"), HasSubstr("--resume: no complete checkpoint-N"));
}

}  // namespace
}  // namespace lmtrain
