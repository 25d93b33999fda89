// End to end on the real stack: lm-server + lm-worker processes on loopback, a real SQLite
// file, real lm-train children training a tiny GPT-2 on real text (examples/data).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "client/job_client.h"
#include "tests/integration/cluster.h"

namespace lmtrain::testing {
namespace {
namespace fs = std::filesystem;

// A tiny CLM job on the shipped Austen slice. `extra_training` is appended to training:.
std::string TinyJob(const std::string& name, int max_steps, const std::string& extra = "") {
  const std::string data = SourceDir() + "/examples/data";
  return absl::StrCat(
      "name: ", name, "\ntask: clm\n",
      "model:\n  config: {model_type: gpt2, n_layer: 2, n_head: 2, n_embd: 32, n_positions: 64}\n",
      "tokenizer:\n  train: {type: bpe, vocab_size: 400}\n", "data:\n  train_file: ", data,
      "/austen_train.txt\n  validation_file: ", data, "/austen_valid.txt\n  block_size: 32\n",
      "training:\n  learning_rate: 3.0e-3\n  per_device_train_batch_size: 8\n",
      "  max_steps: ", max_steps, "\n  warmup_steps: 5\n  weight_decay: 0.01\n",
      "  logging_steps: 5\n  evaluation_strategy: steps\n  eval_steps: 30\n  save_steps: 30\n  "
      "max_eval_samples: 64\n",
      "  eval_on_start: true\n  seed: 7\n", extra);
}

fs::path WriteFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
  return path;
}

TEST(EndToEnd, SubmitTrainStreamSucceedAndReloadCheckpoint) {
  auto cluster = Cluster::Start(1);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const fs::path job_file = WriteFile((*cluster)->dir() / "job" / "job.yaml", TinyJob("e2e", 150));
  JobClient client((*cluster)->address());
  auto id = client.Submit(job_file.string(), "");
  ASSERT_TRUE(id.ok()) << id.status();

  std::vector<v1::JobEvent> metrics;
  std::optional<double> start_eval_loss;
  ASSERT_TRUE(client
                  .Watch(*id, 0,
                         [&](const v1::JobEvent& e) {
                           if (!e.has_metrics()) return;
                           metrics.push_back(e);
                           if (e.metrics().step() == 0 && e.metrics().has_eval_loss()) {
                             start_eval_loss = e.metrics().eval_loss();
                           }
                         })
                  .ok());
  auto job = client.Get(*id);
  ASSERT_TRUE(job.ok());
  ASSERT_EQ(job->state(), v1::SUCCEEDED) << job->error();
  EXPECT_GE(metrics.size(), 5u);
  ASSERT_TRUE(start_eval_loss.has_value()) << "no step-0 evaluation was streamed";
  ASSERT_FALSE(job->checkpoints().empty());

  // lmctl get -o json carries the documented fields.
  std::string out, err;
  ASSERT_EQ((*cluster)->Lmctl({"get", *id, "-o", "json"}, &out, &err), 0) << err;
  auto j = nlohmann::json::parse(out);
  for (const char* key : {"id", "name", "state", "created_at", "started_at", "finished_at",
                          "metrics", "checkpoints"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["state"], "SUCCEEDED");
  for (const char* key :
       {"step", "loss", "learning_rate", "eval_loss", "perplexity", "tokens_per_second"}) {
    EXPECT_TRUE(j["metrics"].contains(key)) << key;
  }
  EXPECT_EQ(j["checkpoints"].back()["path"], job->checkpoints().rbegin()->path());

  // Reload the published checkpoint with lm-train (eval only): it beats the untrained model.
  const std::string ckpt = job->checkpoints().rbegin()->path();
  std::string eval_job = absl::StrCat(
      "name: reload\ntask: clm\nmodel:\n  name_or_path: ", ckpt, "\ntokenizer:\n  path: ", ckpt,
      "\ndata:\n  train_file: ", SourceDir(), "/examples/data/austen_train.txt\n",
      "  validation_file: ", SourceDir(), "/examples/data/austen_valid.txt\n  block_size: 32\n",
      "training:\n  do_train: false\n  max_eval_samples: 64\n");
  const fs::path eval_file = WriteFile((*cluster)->dir() / "reload" / "job.yaml", eval_job);
  const fs::path eval_out = (*cluster)->dir() / "reload" / "out";
  PosixProcessLauncher launcher;
  auto child = launcher.Launch(
      {{BinDir() + "/lm-train", eval_file.string(), "--output-dir", eval_out.string()}});
  ASSERT_TRUE(child.ok()) << child.status();
  const std::string train_out = ReadAll((*child)->stdout_fd());
  const std::string train_err = ReadAll((*child)->stderr_fd());
  ASSERT_EQ((*child)->Wait().exit_code, 0) << train_out << train_err;
  std::ifstream results(eval_out / "eval_results.json");
  ASSERT_TRUE(results) << "no eval_results.json";
  const double reloaded = nlohmann::json::parse(results)["eval_loss"];
  EXPECT_LT(reloaded, *start_eval_loss - 0.5);
}

TEST(EndToEnd, CancelRunningJobStopsTrainerWithinTwoSeconds) {
  auto cluster = Cluster::Start(1);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const fs::path job_file =
      WriteFile((*cluster)->dir() / "job" / "job.yaml",
                std::regex_replace(TinyJob("long", 100000), std::regex("logging_steps: 5"),
                                   "logging_steps: 1"));
  JobClient client((*cluster)->address());
  auto id = client.Submit(job_file.string(), "");
  ASSERT_TRUE(id.ok()) << id.status();

  absl::Mutex mu;
  int pid = 0;
  bool training = false;
  std::thread watcher([&] {
    client
        .Watch(*id, 0,
               [&](const v1::JobEvent& e) {
                 absl::MutexLock lock(&mu);
                 std::smatch m;
                 const std::string log = e.log().text();
                 if (std::regex_search(log, m, std::regex("started, pid ([0-9]+)")))
                   pid = std::stoi(m[1]);
                 if (e.has_metrics() && e.metrics().has_loss()) training = true;
               })
        .IgnoreError();
  });
  {
    absl::MutexLock lock(&mu);
    ASSERT_TRUE(mu.AwaitWithTimeout(absl::Condition(&training), absl::Seconds(120)))
        << "the job never reported a training step";
  }
  ASSERT_GT(pid, 0);
  const absl::Time start = absl::Now();
  std::string out, err;
  ASSERT_EQ((*cluster)->Lmctl({"cancel", *id}, &out, &err), 0) << err;
  v1::JobState state = v1::RUNNING;
  while (absl::Now() - start < absl::Seconds(5)) {
    state = client.Get(*id)->state();
    if (state != v1::RUNNING) break;
    absl::SleepFor(absl::Milliseconds(20));
  }
  const absl::Duration took = absl::Now() - start;
  watcher.join();
  EXPECT_EQ(state, v1::CANCELLED);
  EXPECT_LE(took, absl::Seconds(2));
  EXPECT_EQ(kill(pid, 0), -1) << "lm-train (pid " << pid << ") is still alive";
}

TEST(EndToEnd, BadInputIsRejectedClearlyAndNothingIsStored) {
  auto cluster = Cluster::Start(0);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const fs::path dir = (*cluster)->dir() / "bad";
  struct Case {
    std::string yaml, expect;
  } cases[] = {
      {"name: bad\ntask: clm\nmodel: {config: {model_type: gpt2}\n", "job.yaml:"},
      {std::regex_replace(TinyJob("bad", 10), std::regex("task: clm"), "task: summarize"),
       "job.yaml:2"},
      {std::regex_replace(TinyJob("bad", 10), std::regex("austen_train.txt"), "nope.txt"),
       "nope.txt"},
  };
  for (const Case& c : cases) {
    const fs::path file = WriteFile(dir / "job.yaml", c.yaml);
    std::string out, err;
    EXPECT_EQ((*cluster)->Lmctl({"submit", file.string()}, &out, &err), 1) << c.yaml;
    EXPECT_NE(err.find(c.expect), std::string::npos) << err;
    // The server validates too: send the same text straight over gRPC.
    auto stub = v1::JobService::NewStub(
        grpc::CreateChannel((*cluster)->address(), grpc::InsecureChannelCredentials()));
    grpc::ClientContext ctx;
    v1::SubmitJobRequest req;
    req.set_spec_yaml(c.yaml);
    req.set_source_name("job.yaml");
    req.set_base_dir(dir.string());
    v1::SubmitJobResponse resp;
    grpc::Status s = stub->SubmitJob(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(s.error_message().find(c.expect), std::string::npos) << s.error_message();
  }
  std::string out, err;
  ASSERT_EQ((*cluster)->Lmctl({"list", "-o", "json"}, &out, &err), 0) << err;
  EXPECT_EQ(nlohmann::json::parse(out).size(), 0u) << out;
  // And it keeps serving: a good job is accepted (it stays QUEUED: no worker here).
  const fs::path good = WriteFile(dir / "good.yaml", TinyJob("good", 10));
  ASSERT_EQ((*cluster)->Lmctl({"submit", good.string()}, &out, &err), 0) << err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out, m, std::regex("([0-9]+)\\s*$")));
  ASSERT_EQ((*cluster)->Lmctl({"get", m[1].str(), "-o", "json"}, &out, &err), 0) << err;
  EXPECT_EQ(nlohmann::json::parse(out)["state"], "QUEUED");
}

}  // namespace
}  // namespace lmtrain::testing
