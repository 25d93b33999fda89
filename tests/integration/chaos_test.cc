// Chaos tests: several workers and a batch of tiny jobs; lm-worker and lm-server
// processes are killed with SIGKILL at random moments and restarted. Every job must end
// SUCCEEDED exactly once, and its final weights must equal, byte for byte, those of the same
// job run by lm-train without interruption. Bounded: a handful of kills, tiny jobs.
// LMTRAIN_CHAOS_SEED picks the kill schedule (printed, to replay a failure).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/job_client.h"
#include "tests/integration/chaos_util.h"
#include "tests/integration/cluster.h"
#include "tests/integration/process_group.h"

namespace lmtrain::testing {
namespace {
namespace fs = std::filesystem;

constexpr int kJobs = 5;
constexpr int kMaxSteps = 40;
// The killed-processes test's jobs: a few seconds of training each; a checkpoint and a log every
// kKilledSaveSteps. Its worker kills aim at a worker whose job has reported a training step.
constexpr int kKilledMaxSteps = 400;
constexpr int kKilledSaveSteps = 40;

std::string ChaosJob(const std::string& name, int max_steps = kMaxSteps, int priority = 0,
                     int save_steps = 4, int logging_steps = 5) {
  const std::string data = SourceDir() + "/examples/data";
  return absl::StrCat(
      "name: ", name, "\ntask: clm\n",
      "model:\n  config: {model_type: gpt2, n_layer: 2, n_head: 2, n_embd: 32, n_positions: 64}\n",
      "tokenizer:\n  train: {type: bpe, vocab_size: 400}\n", "data:\n  train_file: ", data,
      "/austen_train.txt\n  block_size: 32\n", "training:\n  learning_rate: 3.0e-3\n",
      "  per_device_train_batch_size: 8\n  max_steps: ", max_steps, "\n  warmup_steps: 3\n",
      "  logging_steps: ", logging_steps, "\n  save_steps: ", save_steps,
      "\n  do_eval: false\n  seed: 11\n",
      // Several kills may hit one job; the test is about losing nothing, not the retry cap.
      "resources:\n  max_retries: 10\n  priority: ", priority, "\n");
}

bool AllTerminal(JobClient& client, const std::vector<std::string>& ids) {
  for (const std::string& id : ids) {
    auto job = client.Get(id);
    if (!job.ok()) return false;  // The server may be down right now.
    const v1::JobState s = job->state();
    if (s != v1::SUCCEEDED && s != v1::FAILED && s != v1::CANCELLED) return false;
  }
  return true;
}

// The index of a worker (named "w<index>" by ProcessGroup) that runs a job which has reported
// a training step, waiting up to `patience` for one; -1 when none appears.
int WorkerWithTrainingJob(JobClient& client, absl::Duration patience) {
  const absl::Time end = absl::Now() + patience;
  do {
    auto workers = client.ListWorkers();
    for (const v1::Worker& w : workers.ok() ? *workers : std::vector<v1::Worker>{}) {
      for (const std::string& id : w.running_job_ids()) {
        auto job = client.Get(id);
        if (job.ok() && job->state() == v1::RUNNING && job->has_metrics() &&
            job->metrics().step() > 0 && w.name().size() > 1) {
          return std::stoi(w.name().substr(1));
        }
      }
    }
    absl::SleepFor(absl::Milliseconds(50));
  } while (absl::Now() < end);
  return -1;
}

TEST(ChaosTest, KilledWorkersAndServerLoseNoJobAndChangeNoWeight) {
  ProcessGroup group({/*workers=*/3, /*slots_per_worker=*/1, /*lease_timeout_ms=*/4000});
  const fs::path job_file = group.dir() / "job" / "job.yaml";
  fs::create_directories(job_file.parent_path());
  std::ofstream(job_file) << ChaosJob("chaos", kKilledMaxSteps, /*priority=*/0, kKilledSaveSteps,
                                      kKilledSaveSteps);
  const std::string reference = ReferenceWeights(group.dir(), job_file);
  ASSERT_FALSE(reference.empty());

  ASSERT_TRUE(group.StartAll().ok());
  JobClient client(group.address(), 3000);
  std::vector<std::string> ids;
  for (int i = 0; i < kJobs; ++i) {
    auto id = client.Submit(job_file.string(), absl::StrCat("chaos-req-", i));
    ASSERT_TRUE(id.ok()) << id.status();
    ids.push_back(*id);
  }
  auto again = client.Submit(job_file.string(), "chaos-req-0");  // A retried submit.
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, ids[0]);

  const uint64_t seed = ChaosSeed();
  std::cout << "chaos seed " << seed << " (LMTRAIN_CHAOS_SEED to replay)" << std::endl;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> pause(0.2, 2.0);
  int server_kills = 0, worker_kills = 0;
  for (int event = 0; event < 8 && !AllTerminal(client, ids); ++event) {
    absl::SleepFor(absl::Seconds(pause(rng)));
    // One event in four (and the third, if none yet) kills the server; the rest kill a worker
    // that is training a job, so the test does not depend on how fast training runs.
    if (rng() % 4 == 3 || (event == 2 && server_kills == 0)) {
      group.KillServer();
      ++server_kills;
      absl::SleepFor(absl::Milliseconds(300 + rng() % 700));
      ASSERT_TRUE(group.StartServer().ok());
    } else {
      const int target = WorkerWithTrainingJob(client, absl::Seconds(30));
      if (target < 0) continue;
      group.KillWorker(target);
      ++worker_kills;
      absl::SleepFor(absl::Milliseconds(300 + rng() % 700));
      ASSERT_TRUE(group.StartWorker(target).ok());
    }
  }
  const absl::Time deadline = absl::Now() + absl::Minutes(6);
  while (!AllTerminal(client, ids) && absl::Now() < deadline) absl::SleepFor(absl::Seconds(1));
  std::cout << "killed the server " << server_kills << "x and workers " << worker_kills << "x"
            << std::endl;

  int attempts = 0;
  for (const std::string& id : ids) {
    SCOPED_TRACE("job " + id);
    auto job = client.Get(id);
    ASSERT_TRUE(job.ok()) << job.status();
    EXPECT_EQ(job->state(), v1::SUCCEEDED) << job->error();
    attempts += job->attempts_size();
    std::cout << "job " << id << ": " << job->attempts_size() << " attempt(s), " << job->retries()
              << " retries" << std::endl;
    int succeeded = 0;
    ASSERT_TRUE(client
                    .Watch(id, 0,
                           [&](const v1::JobEvent& e) {
                             if (e.has_state_changed() &&
                                 e.state_changed().state() == v1::SUCCEEDED) {
                               ++succeeded;
                             }
                           })
                    .ok());
    EXPECT_EQ(succeeded, 1);
    const std::string weights = ReadFile(fs::path(job->output_dir()) / "model.safetensors");
    EXPECT_TRUE(weights == reference) << "final weights differ from the uninterrupted run";
  }
  EXPECT_GT(attempts, kJobs) << "no kill hit a running job: the test proved nothing";
  auto all = client.List(100);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), static_cast<size_t>(kJobs));  // No duplicate jobs.
}

// The control plane blinks while every job is training: the workers keep their lm-train
// processes, re-register and re-attach them, so no job needs a second attempt.
TEST(ChaosTest, ServerKilledMidTrainingReattachesEveryRunningJob) {
  ProcessGroup group({/*workers=*/2, /*slots_per_worker=*/1, /*lease_timeout_ms=*/4000});
  const fs::path job_file = group.dir() / "job" / "job.yaml";
  fs::create_directories(job_file.parent_path());
  std::ofstream(job_file) << ChaosJob("blink", /*max_steps=*/200);
  ASSERT_TRUE(group.StartAll().ok());
  JobClient client(group.address(), 3000);
  std::vector<std::string> ids;
  for (int i = 0; i < 2; ++i) {
    auto id = client.Submit(job_file.string(), absl::StrCat("blink-", i));
    ASSERT_TRUE(id.ok()) << id.status();
    ids.push_back(*id);
  }
  // Wait until both report training metrics, so both really are mid-training.
  const absl::Time deadline = absl::Now() + absl::Minutes(2);
  auto training = [&](const std::string& id) {
    auto job = client.Get(id);
    return job.ok() && job->state() == v1::RUNNING && job->has_metrics() &&
           job->metrics().step() > 0;
  };
  while (!(training(ids[0]) && training(ids[1])) && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(100));
  }
  ASSERT_TRUE(training(ids[0]) && training(ids[1])) << "jobs never started training";
  group.KillServer();
  absl::SleepFor(absl::Milliseconds(500));
  ASSERT_TRUE(group.StartServer().ok());
  const absl::Time end = absl::Now() + absl::Minutes(4);
  while (!AllTerminal(client, ids) && absl::Now() < end) absl::SleepFor(absl::Seconds(1));
  for (const std::string& id : ids) {
    auto job = client.Get(id);
    ASSERT_TRUE(job.ok()) << job.status();
    EXPECT_EQ(job->state(), v1::SUCCEEDED) << job->error();
    EXPECT_EQ(job->attempts_size(), 1)
        << "job " << id << " was not re-attached: " << job->attempts(0).outcome();
    EXPECT_EQ(job->retries(), 0);
  }
}

// Preemption end to end: a higher-priority job takes the only slot; the victim gets SIGTERM,
// saves a checkpoint, goes PREEMPTED -> QUEUED without using a retry, resumes afterwards and
// ends with the weights of an uninterrupted run.
TEST(ChaosTest, PreemptedJobCheckpointsResumesAndKeepsItsWeights) {
  ProcessGroup group({/*workers=*/1, /*slots_per_worker=*/1, /*lease_timeout_ms=*/4000});
  const fs::path low_file = group.dir() / "low" / "job.yaml";
  const fs::path high_file = group.dir() / "high" / "job.yaml";
  fs::create_directories(low_file.parent_path());
  fs::create_directories(high_file.parent_path());
  std::ofstream(low_file) << ChaosJob("low", /*max_steps=*/160, /*priority=*/0);
  std::ofstream(high_file) << ChaosJob("high", kMaxSteps, /*priority=*/80);
  const std::string reference = ReferenceWeights(group.dir(), low_file);
  ASSERT_FALSE(reference.empty());
  ASSERT_TRUE(group.StartAll().ok());
  JobClient client(group.address(), 3000);
  auto low = client.Submit(low_file.string(), "low");
  ASSERT_TRUE(low.ok()) << low.status();
  const absl::Time deadline = absl::Now() + absl::Minutes(2);
  auto training = [&] {
    auto job = client.Get(*low);
    return job.ok() && job->state() == v1::RUNNING && job->has_metrics() &&
           job->metrics().step() > 0;
  };
  while (!training() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(100));
  ASSERT_TRUE(training()) << "the low-priority job never started training";
  auto high = client.Submit(high_file.string(), "high");
  ASSERT_TRUE(high.ok()) << high.status();
  const absl::Time end = absl::Now() + absl::Minutes(4);
  while (!AllTerminal(client, {*low, *high}) && absl::Now() < end) {
    absl::SleepFor(absl::Seconds(1));
  }
  auto low_job = client.Get(*low);
  auto high_job = client.Get(*high);
  ASSERT_TRUE(low_job.ok() && high_job.ok());
  EXPECT_EQ(high_job->state(), v1::SUCCEEDED) << high_job->error();
  EXPECT_EQ(low_job->state(), v1::SUCCEEDED) << low_job->error();
  ASSERT_EQ(low_job->attempts_size(), 2);
  EXPECT_THAT(low_job->attempts(0).outcome(), ::testing::HasSubstr("preempted by job"));
  EXPECT_EQ(low_job->retries(), 0);
  bool preempted = false;
  ASSERT_TRUE(client
                  .Watch(*low, 0,
                         [&](const v1::JobEvent& e) {
                           preempted |=
                               e.has_state_changed() && e.state_changed().state() == v1::PREEMPTED;
                         })
                  .ok());
  EXPECT_TRUE(preempted);
  const std::string weights = ReadFile(fs::path(low_job->output_dir()) / "model.safetensors");
  EXPECT_TRUE(weights == reference) << "the preempted job's final weights differ";
}

// The float32 tensors' bytes after a safetensors header; "" when the file is unreadable.
std::vector<float> SafetensorsFloats(const std::string& file, std::string* header) {
  if (file.size() < 8) return {};
  uint64_t n = 0;
  std::memcpy(&n, file.data(), 8);
  if (8 + n > file.size()) return {};
  *header = file.substr(8, n);
  std::vector<float> out((file.size() - 8 - n) / sizeof(float));
  std::memcpy(out.data(), file.data() + 8 + n, out.size() * sizeof(float));
  return out;
}

// A two-worker gang through the whole stack: the server places both ranks at once, hands out
// rank 0's rendezvous address, the workers start lm-train as one c10d group, and the result
// matches one process with the same global batch.
TEST(ChaosTest, TwoWorkerGangTrainsLikeOneProcessWithTheGlobalBatch) {
  ProcessGroup group({/*workers=*/2, /*slots_per_worker=*/1, /*lease_timeout_ms=*/4000});
  const fs::path one_file = group.dir() / "one" / "job.yaml";
  const fs::path gang_file = group.dir() / "gang" / "job.yaml";
  fs::create_directories(one_file.parent_path());
  fs::create_directories(gang_file.parent_path());
  // per_device_train_batch_size 8 in one process; no dropout, whose draws differ by rank.
  std::string one = ChaosJob("gang");
  const std::string positions = "n_positions: 64";
  one.replace(one.find(positions), positions.size(),
              "n_positions: 64, resid_pdrop: 0.0, embd_pdrop: 0.0, attn_pdrop: 0.0");
  std::string gang = one;
  const std::string batch = "per_device_train_batch_size: 8";
  gang.replace(gang.find(batch), batch.size(), "per_device_train_batch_size: 4");
  gang += "  workers: 2\n";  // Appended to the resources section, which comes last.
  std::ofstream(one_file) << one;
  std::ofstream(gang_file) << gang;
  const std::string reference = ReferenceWeights(group.dir(), one_file);
  ASSERT_FALSE(reference.empty());
  ASSERT_TRUE(group.StartAll().ok());
  JobClient client(group.address(), 3000);
  auto id = client.Submit(gang_file.string(), "gang");
  ASSERT_TRUE(id.ok()) << id.status();
  const absl::Time end = absl::Now() + absl::Minutes(4);
  while (!AllTerminal(client, {*id}) && absl::Now() < end) absl::SleepFor(absl::Seconds(1));
  auto job = client.Get(*id);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_EQ(job->state(), v1::SUCCEEDED) << job->error();
  ASSERT_EQ(job->attempts_size(), 1);
  EXPECT_EQ(job->attempts(0).worker_ids_size(), 2);
  EXPECT_NE(job->attempts(0).worker_ids(0), job->attempts(0).worker_ids(1));
  std::string want_header, got_header;
  const std::vector<float> want = SafetensorsFloats(reference, &want_header);
  const std::vector<float> got =
      SafetensorsFloats(ReadFile(fs::path(job->output_dir()) / "model.safetensors"), &got_header);
  ASSERT_EQ(got_header, want_header);
  ASSERT_EQ(got.size(), want.size());
  ASSERT_FALSE(want.empty());
  float worst = 0;
  for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::fabs(got[i] - want[i]));
  EXPECT_LT(worst, 1e-4f) << "2 ranks x 4 drifted from 1 process x 8";
  std::cout << "gang vs one process: largest weight difference " << worst << std::endl;
}

}  // namespace
}  // namespace lmtrain::testing
