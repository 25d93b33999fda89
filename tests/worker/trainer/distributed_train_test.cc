// Data-parallel lm-train through the real binary: N processes started as lm-worker starts
// them (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT) form one c10d group; they must train
// exactly as one process with the global batch, fail as retryable (exit 3) when a peer is
// lost, and stop together on SIGTERM with a checkpoint that resumes bit-identically.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>

#include "tests/worker/trainer/free_port.h"
#include "tests/worker/trainer/lm_train_child.h"

namespace lmtrain {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;
using ::testing::HasSubstr;
using testing_child::Child;
using testing_child::Clock;
using testing_child::kData;
using testing_child::ReadFile;

using testing_child::FreePort;

std::vector<std::string> RankEnv(int rank, int world, int port) {
  return {"RANK=" + std::to_string(rank),        "WORLD_SIZE=" + std::to_string(world),
          "LOCAL_RANK=" + std::to_string(rank),  "MASTER_ADDR=127.0.0.1",
          "MASTER_PORT=" + std::to_string(port), "LMTRAIN_DIST_TIMEOUT_S=30"};
}

// Every F32 tensor of a .safetensors file by name.
std::map<std::string, std::vector<float>> ReadSafetensors(const fs::path& path) {
  const std::string bytes = ReadFile(path);
  std::map<std::string, std::vector<float>> tensors;
  if (bytes.size() < 8) return tensors;
  uint64_t header_size = 0;
  std::memcpy(&header_size, bytes.data(), 8);
  const auto header = nlohmann::json::parse(bytes.substr(8, header_size));
  for (const auto& [name, info] : header.items()) {
    if (name == "__metadata__") continue;
    EXPECT_EQ(info["dtype"], "F32") << name;
    const size_t begin = info["data_offsets"][0], end = info["data_offsets"][1];
    std::vector<float> values((end - begin) / sizeof(float));
    std::memcpy(values.data(), bytes.data() + 8 + header_size + begin, end - begin);
    tensors[name] = std::move(values);
  }
  return tensors;
}

// Largest |a - b| over all tensors; infinity when the names or sizes differ.
double MaxAbsDiff(const std::map<std::string, std::vector<float>>& a,
                  const std::map<std::string, std::vector<float>>& b) {
  if (a.size() != b.size() || a.empty()) return INFINITY;
  double worst = 0;
  for (const auto& [name, values] : a) {
    auto it = b.find(name);
    if (it == b.end() || it->second.size() != values.size()) return INFINITY;
    for (size_t i = 0; i < values.size(); ++i) {
      worst = std::max(worst, std::fabs(static_cast<double>(values[i]) - it->second[i]));
    }
  }
  return worst;
}

// Rank 0's reported losses by step, training ("train") and evaluation ("eval").
struct Reported {
  std::map<int64_t, double> train, eval;
  int checkpoints = 0;
  int events = 0;
};

// Reads `child`'s events until it exits (at most `timeout`).
Reported Drain(Child& child, std::chrono::seconds timeout) {
  Reported r;
  const auto deadline = Clock::now() + timeout;
  while (auto e = child.NextEvent(
             std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()))) {
    ++r.events;
    if (e->type == TrainerEvent::Type::kCheckpoint) ++r.checkpoints;
    if (e->metrics.loss) r.train[*e->metrics.step] = *e->metrics.loss;
    if (e->metrics.eval_loss) r.eval[e->metrics.step.value_or(-1)] = *e->metrics.eval_loss;
  }
  return r;
}

class DistributedTrainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("lm-train-dist-" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // A small training file (89 blocks of 32 tokens): epochs end with a short batch.
    std::ifstream in(kData + "austen_train.txt");
    std::ofstream out(dir_ / "train.txt");
    std::string line;
    for (size_t bytes = 0; bytes < 7000 && std::getline(in, line); bytes += line.size() + 1) {
      out << line << "\n";
    }
  }

  // Tiny GPT-2 without dropout on full blocks (or, with `data` "  line_by_line: true\n", on
  // lines of unequal length), seeded; `training` adds keys.
  fs::path Job(const std::string& name, int per_device, const std::string& training,
               int accumulation = 2, const std::string& data = "") {
    const fs::path job = dir_ / name;
    std::ofstream(job) << "name: dist-test\ntask: clm\nmodel:\n"
                       << "  config: {model_type: gpt2, n_layer: 2, n_head: 2, n_embd: 32, "
                          "n_positions: 64, resid_pdrop: 0, embd_pdrop: 0, attn_pdrop: 0}\n"
                       << "tokenizer:\n  train: {type: bpe, vocab_size: 300}\n"
                       << "data:\n  train_file: " << (dir_ / "train.txt").string() << "\n"
                       << "  validation_file: " << (dir_ / "train.txt").string() << "\n"
                       << "  block_size: 32\n"
                       << data
                       << "training:\n  seed: 7\n  learning_rate: 3.0e-3\n  warmup_steps: 2\n"
                       << "  logging_steps: 1\n  gradient_accumulation_steps: " << accumulation
                       << "\n"
                       << "  per_device_train_batch_size: " << per_device << "\n"
                       << training;
    return job;
  }

  // Starts `world` ranks sharing dir_/name/out; logs in dir_/name/rank-R.
  std::vector<std::unique_ptr<Child>> StartRanks(const std::string& name, const fs::path& job,
                                                 int world, std::vector<std::string> extra = {}) {
    const int port = FreePort();
    std::vector<std::unique_ptr<Child>> ranks;
    for (int r = 0; r < world; ++r) {
      const fs::path logs = dir_ / name / ("rank-" + std::to_string(r));
      fs::create_directories(logs);
      ranks.push_back(
          std::make_unique<Child>(logs, job, extra, RankEnv(r, world, port), dir_ / name / "out"));
    }
    return ranks;
  }

  std::string Stderr(const std::string& name, int rank) {
    return ReadFile(dir_ / name / ("rank-" + std::to_string(rank)) / "stderr.txt");
  }

  fs::path dir_;
};

// Runs `job` on one process in dir_/name; returns rank 0's reports.
Reported RunSingle(const fs::path& dir, const fs::path& job, std::vector<std::string> extra = {}) {
  fs::create_directories(dir);
  Child child(dir, job, std::move(extra));
  Reported r = Drain(child, seconds(240));
  EXPECT_EQ(child.Wait(), 0) << ReadFile(dir / "stderr.txt");
  return r;
}

const char kEquivalenceTraining[] =
    "  num_train_epochs: 3\n  save_steps: 4\n  evaluation_strategy: steps\n  eval_steps: 5\n"
    "  do_eval: true\n  per_device_eval_batch_size: 16\n";

TEST_F(DistributedTrainTest, TwoRanksOfFourTrainAsOneProcessOfEight) {
  const Reported single = RunSingle(dir_ / "single", Job("single.yaml", 8, kEquivalenceTraining));
  auto ranks = StartRanks("pair", Job("pair.yaml", 4, kEquivalenceTraining), 2);
  const Reported pair = Drain(*ranks[0], seconds(240));
  const Reported quiet = Drain(*ranks[1], seconds(60));
  ASSERT_EQ(ranks[0]->Wait(), 0) << Stderr("pair", 0);
  ASSERT_EQ(ranks[1]->Wait(), 0) << Stderr("pair", 1);

  ASSERT_GE(single.train.size(), 10u);
  ASSERT_EQ(pair.train.size(), single.train.size());
  double worst_loss = 0;
  for (const auto& [step, loss] : single.train) {
    ASSERT_TRUE(pair.train.count(step)) << "step " << step;
    EXPECT_NEAR(pair.train.at(step), loss, 1e-5) << "step " << step;
    worst_loss = std::max(worst_loss, std::fabs(pair.train.at(step) - loss));
  }
  ASSERT_EQ(pair.eval.size(), single.eval.size());
  for (const auto& [step, loss] : single.eval) EXPECT_NEAR(pair.eval.at(step), loss, 1e-5);
  EXPECT_EQ(pair.checkpoints, single.checkpoints);
  EXPECT_EQ(quiet.events, 0) << "rank 1 must not report";
  // Only rank 0 writes TensorBoard events: one event file under the shared output's runs/.
  std::vector<fs::path> event_files;
  for (const auto& e : fs::recursive_directory_iterator(dir_ / "pair/out/runs")) {
    if (e.is_regular_file()) event_files.push_back(e.path());
  }
  EXPECT_EQ(event_files.size(), 1u) << "rank 1 must not write TensorBoard events";

  const double worst_weight = MaxAbsDiff(ReadSafetensors(dir_ / "single/out/model.safetensors"),
                                         ReadSafetensors(dir_ / "pair/out/model.safetensors"));
  EXPECT_LE(worst_weight, 1e-5);
  RecordProperty("max_loss_diff", std::to_string(worst_loss));
  RecordProperty("max_weight_diff", std::to_string(worst_weight));
  std::cout << "steps " << single.train.size() << ", max |loss diff| " << worst_loss
            << ", max |weight diff| " << worst_weight << std::endl;
}

// dataloader_drop_last and the sequential order cut the global batch (per device × ranks) as one
// process of that batch cuts it: the same updates, losses and final weights.
TEST_F(DistributedTrainTest, DropLastAndSequentialOrderCutTheGlobalBatchOnTwoRanks) {
  const std::string training =
      "  num_train_epochs: 2\n  save_strategy: \"no\"\n  do_eval: false\n"
      "  dataloader_drop_last: true\n  train_sampling_strategy: sequential\n";
  const Reported single = RunSingle(dir_ / "single", Job("single.yaml", 8, training, 1));
  auto ranks = StartRanks("pair", Job("pair.yaml", 4, training, 1), 2);
  const Reported pair = Drain(*ranks[0], seconds(240));
  Drain(*ranks[1], seconds(60));
  ASSERT_EQ(ranks[0]->Wait(), 0) << Stderr("pair", 0);
  ASSERT_EQ(ranks[1]->Wait(), 0) << Stderr("pair", 1);
  // 89 blocks: 11 full batches of 8 an epoch (the 12th, of 1, is left out), 22 updates in two.
  ASSERT_THAT(ReadFile(dir_ / "single" / "stdout.txt"), ::testing::HasSubstr("data: 89 train"));
  ASSERT_EQ(single.train.size(), 22u);
  ASSERT_EQ(pair.train.size(), single.train.size());
  for (const auto& [step, loss] : single.train) {
    ASSERT_TRUE(pair.train.count(step)) << "step " << step;
    EXPECT_NEAR(pair.train.at(step), loss, 1e-5) << "step " << step;
  }
  EXPECT_LE(MaxAbsDiff(ReadSafetensors(dir_ / "single/out/model.safetensors"),
                       ReadSafetensors(dir_ / "pair/out/model.safetensors")),
            1e-5);
  // HF's total_flos sums the ranks' input positions: 6 × 25,472 non-embedding parameters × 22
  // updates of 8 blocks of 32, on one process and on two.
  for (const char* run : {"single", "pair"}) {
    const nlohmann::json state =
        nlohmann::json::parse(ReadFile(dir_ / run / "out" / "trainer_state.json"));
    EXPECT_EQ(state["total_flos"].get<double>(), 6.0 * 25472 * 22 * 8 * 32) << run;
  }
}

// Lines of unequal length, so micro-batches and ranks hold different numbers of target tokens:
// an update's loss is the mean over all its targets (HF's num_items_in_batch), so one process
// with micro-batches of 8, one with micro-batches of 4 (twice the accumulation) and two ranks
// of 4 train alike. A mean of the micro-batch means would weigh a short line's tokens more.
TEST_F(DistributedTrainTest, MicroBatchesAndRanksWeighTheirTargetTokens) {
  const std::string lines = "  line_by_line: true\n";
  const std::string training = "  max_steps: 12\n  save_steps: 0\n  do_eval: false\n";
  const Reported single = RunSingle(dir_ / "single", Job("single.yaml", 8, training, 2, lines));
  const Reported smaller = RunSingle(dir_ / "smaller", Job("smaller.yaml", 4, training, 4, lines));
  auto ranks = StartRanks("pair", Job("pair.yaml", 4, training, 2, lines), 2);
  const Reported pair = Drain(*ranks[0], seconds(240));
  Drain(*ranks[1], seconds(60));
  ASSERT_EQ(ranks[0]->Wait(), 0) << Stderr("pair", 0);
  ASSERT_EQ(ranks[1]->Wait(), 0) << Stderr("pair", 1);

  ASSERT_EQ(single.train.size(), 12u);
  for (const Reported* other : {&smaller, &pair}) {
    ASSERT_EQ(other->train.size(), single.train.size());
    for (const auto& [step, loss] : single.train) {
      EXPECT_NEAR(other->train.at(step), loss, 1e-5) << "step " << step;
    }
  }
  const auto weights = ReadSafetensors(dir_ / "single/out/model.safetensors");
  EXPECT_LE(MaxAbsDiff(weights, ReadSafetensors(dir_ / "smaller/out/model.safetensors")), 1e-5);
  EXPECT_LE(MaxAbsDiff(weights, ReadSafetensors(dir_ / "pair/out/model.safetensors")), 1e-5);
}

// SIGKILL one rank mid-training: the survivor sees the lost peer in its next collective and
// exits 3 (retryable) promptly, whichever rank died.
TEST_F(DistributedTrainTest, LosingAPeerExitsRetryablePromptly) {
  const fs::path job =
      Job("job.yaml", 4, "  max_steps: 100000\n  save_steps: 0\n  do_eval: false\n");
  for (int victim : {1, 0}) {
    const std::string name = "kill-" + std::to_string(victim);
    auto ranks = StartRanks(name, job, 2);
    std::optional<TrainerEvent> event;
    do {
      event = ranks[0]->NextEvent(seconds(120));
    } while (event && !event->metrics.loss.has_value());
    ASSERT_TRUE(event.has_value()) << Stderr(name, 0);
    ASSERT_EQ(kill(ranks[victim]->pid(), SIGKILL), 0);
    EXPECT_EQ(ranks[victim]->Wait(), 128 + SIGKILL);
    Child& survivor = *ranks[1 - victim];
    const auto sent = Clock::now();
    ASSERT_TRUE(survivor.WaitForEof(seconds(45))) << "rank " << 1 - victim << " hangs";
    EXPECT_EQ(survivor.Wait(), 3) << Stderr(name, 1 - victim);
    EXPECT_LT(Clock::now() - sent, seconds(45));
    EXPECT_THAT(Stderr(name, 1 - victim), HasSubstr("a peer was lost or timed out"));
  }
}

TEST_F(DistributedTrainTest, BadEnvironmentExitsOneAndAMissingPeerExitsThree) {
  const fs::path job = Job("job.yaml", 4, "  max_steps: 5\n");
  {
    fs::create_directories(dir_ / "bad");
    Child child(dir_ / "bad", job, {},
                {"WORLD_SIZE=2", "RANK=2", "MASTER_ADDR=127.0.0.1", "MASTER_PORT=1234"});
    EXPECT_EQ(child.Wait(), 1);
    EXPECT_THAT(ReadFile(dir_ / "bad" / "stderr.txt"),
                HasSubstr("RANK=\"2\" must be an integer in [0, 1]"));
  }
  fs::create_directories(dir_ / "alone");
  std::vector<std::string> env = RankEnv(0, 2, FreePort());
  env.insert(env.begin(), "LMTRAIN_DIST_TIMEOUT_S=2");  // First entry wins.
  const auto start = Clock::now();
  Child alone(dir_ / "alone", job, {}, env);
  ASSERT_TRUE(alone.WaitForEof(seconds(60)));
  EXPECT_EQ(alone.Wait(), 3) << ReadFile(dir_ / "alone" / "stderr.txt");
  EXPECT_LT(Clock::now() - start, seconds(60));
  EXPECT_THAT(ReadFile(dir_ / "alone" / "stderr.txt"), HasSubstr("rendezvous at 127.0.0.1:"));
}

// The step the run reported stopping at ("... at step N, stopping").
int64_t StoppedAt(const std::string& stderr_text) {
  std::smatch m;
  if (!std::regex_search(stderr_text, m, std::regex("at step ([0-9]+), stopping"))) {
    return -1;
  }
  return std::stoll(m[1]);
}

const char kStopTraining[] = "  max_steps: 24\n  save_steps: 0\n  do_eval: false\n";

// One process: SIGTERM mid-run saves checkpoint-N at the step it stops at and exits 143;
// --auto-resume (what lm-worker passes a later attempt) ends byte-identical to a run that
// was never stopped.
TEST_F(DistributedTrainTest, SigtermSavesACheckpointAndAutoResumeIsBitIdentical) {
  const fs::path job = Job("job.yaml", 8, kStopTraining);
  RunSingle(dir_ / "straight", job);
  const int after = 4 + static_cast<int>(std::random_device()() % 14);  // 4..17
  SCOPED_TRACE("SIGTERM after step " + std::to_string(after));
  fs::create_directories(dir_ / "stopped");
  {
    Child victim(dir_ / "stopped", job);
    while (auto event = victim.NextEvent(seconds(120))) {
      if (event->metrics.step.value_or(0) >= after) break;
    }
    ASSERT_EQ(kill(victim.pid(), SIGTERM), 0);
    EXPECT_EQ(victim.Wait(), 143);
  }
  const int64_t step = StoppedAt(ReadFile(dir_ / "stopped" / "stderr.txt"));
  ASSERT_GE(step, after);
  ASSERT_LT(step, 24);
  const fs::path checkpoint = dir_ / "stopped" / "out" / ("checkpoint-" + std::to_string(step));
  EXPECT_TRUE(fs::exists(checkpoint / "lmtrain_state.json")) << checkpoint;
  ASSERT_FALSE(fs::exists(dir_ / "stopped" / "out" / "model.safetensors"));
  RunSingle(dir_ / "stopped", job, {"--auto-resume"});
  EXPECT_THAT(ReadFile(dir_ / "stopped" / "stdout.txt"), HasSubstr("Resumed from "));
  const std::string a = ReadFile(dir_ / "straight" / "out" / "model.safetensors");
  ASSERT_FALSE(a.empty());
  EXPECT_TRUE(a == ReadFile(dir_ / "stopped" / "out" / "model.safetensors"))
      << "final weights differ";
}

// Two ranks: SIGTERM to rank 1 stops both at the same step (143), rank 0 saves the
// checkpoint, and the pair resumed with --auto-resume ends byte-identical to an
// uninterrupted pair.
TEST_F(DistributedTrainTest, SigtermToOneRankStopsBothAndThePairResumesBitIdentically) {
  const fs::path job = Job("job.yaml", 4, kStopTraining);
  for (const std::string name : {"straight", "stopped"}) {
    auto ranks = StartRanks(name, job, 2);
    if (name == "stopped") {
      while (auto event = ranks[0]->NextEvent(seconds(120))) {
        if (event->metrics.step.value_or(0) >= 6) break;
      }
      ASSERT_EQ(kill(ranks[1]->pid(), SIGTERM), 0);
      EXPECT_EQ(ranks[0]->Wait(), 143) << Stderr(name, 0);
      EXPECT_EQ(ranks[1]->Wait(), 143) << Stderr(name, 1);
      const int64_t step = StoppedAt(Stderr(name, 0));
      EXPECT_EQ(step, StoppedAt(Stderr(name, 1)));
      EXPECT_TRUE(fs::exists(dir_ / name / "out" / ("checkpoint-" + std::to_string(step)) /
                             "lmtrain_state.json"));
      ranks = StartRanks(name, job, 2, {"--auto-resume"});
    }
    ASSERT_TRUE(ranks[0]->WaitForEof(seconds(240)));
    ASSERT_EQ(ranks[0]->Wait(), 0) << Stderr(name, 0);
    ASSERT_EQ(ranks[1]->Wait(), 0) << Stderr(name, 1);
  }
  const std::string a = ReadFile(dir_ / "straight" / "out" / "model.safetensors");
  ASSERT_FALSE(a.empty());
  EXPECT_TRUE(a == ReadFile(dir_ / "stopped" / "out" / "model.safetensors"))
      << "final weights differ";
}

}  // namespace
}  // namespace lmtrain
