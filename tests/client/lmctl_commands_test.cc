// lmctl's commands against a real lm-server process on loopback: output formats, retry,
// logs, checkpoints, workers, explain, watch (plain lines), and bad input. Jobs run on a
// ScriptedWorker (the real worker protocol, no lm-train) where a test needs them to.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "client/job_client.h"
#include "tests/client/scripted_worker.h"
#include "tests/integration/cluster.h"

namespace lmtrain::testing {
namespace {

using W = ScriptedWorker;

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class LmctlCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = Cluster::Start(/*worker_slots=*/0);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    client_ = std::make_unique<JobClient>(cluster_->address());
    std::ofstream(cluster_->dir() / "train.txt") << "hello world\nthe quick brown fox\n";
  }

  // A tiny CLM job file; `resources` is extra YAML for its resources section.
  std::string WriteJob(const std::string& name, const std::string& resources = "") {
    const std::string file = (cluster_->dir() / (name + ".yaml")).string();
    std::ofstream(file) << "name: " << name
                        << "\ntask: clm\nmodel:\n  config: {model_type: gpt2, n_layer: 1, "
                           "n_head: 2, n_embd: 8, n_positions: 32}\ntokenizer:\n  train: "
                           "{type: bpe, vocab_size: 50}\ndata:\n  train_file: train.txt\n  "
                           "block_size: 8\n"
                        << (resources.empty() ? "" : "resources:\n" + resources);
    return file;
  }

  std::string Submit(const std::string& name, const std::string& resources = "") {
    auto id = client_->Submit(WriteJob(name, resources), "");
    EXPECT_TRUE(id.ok()) << id.status();
    return id.value_or("");
  }

  int Run(const std::vector<std::string>& args) { return cluster_->Lmctl(args, &out_, &err_); }

  // A job that ran on a scripted worker: metrics, a checkpoint, logs, then exit code 1 (the
  // trainer's "the job itself is bad": never retried, so FAILED at once).
  std::string FailedJob(ScriptedWorker& worker) {
    const std::string id = Submit("doomed");
    EXPECT_TRUE(worker.Register().ok());
    auto assignment = worker.WaitForAssignment();
    EXPECT_TRUE(assignment.ok()) << assignment.status();
    EXPECT_EQ(assignment.value_or(RankAssignment()).job_id, id);
    EXPECT_TRUE(worker
                    .Report({W::Started(), W::Metrics(5, 10, 2.5, 1234), W::Log("step five"),
                             W::Checkpoint(5, "/ckpt/checkpoint-5")})
                    .ok());
    EXPECT_TRUE(worker.Report({W::Log("bad row 3"), W::Exited(1, "bad data: row 3")}).ok());
    return id;
  }

  std::unique_ptr<Cluster> cluster_;
  std::unique_ptr<JobClient> client_;
  std::string out_, err_;
};

TEST_F(LmctlCommandsTest, GetAndListAsYaml) {
  const std::string id = Submit("yamlish");
  ASSERT_EQ(Run({"get", id, "-o", "yaml"}), 0) << err_;
  YAML::Node job = YAML::Load(out_);
  EXPECT_EQ(job["id"].as<std::string>(), id);
  EXPECT_EQ(job["name"].as<std::string>(), "yamlish");
  EXPECT_EQ(job["state"].as<std::string>(), "QUEUED");
  EXPECT_EQ(job["resources"]["workers"].as<int>(), 1);
  ASSERT_EQ(Run({"list", "-o", "yaml"}), 0) << err_;
  YAML::Node list = YAML::Load(out_);
  ASSERT_TRUE(list.IsSequence()) << out_;
  EXPECT_EQ(list[0]["id"].as<std::string>(), id);
  ASSERT_EQ(Run({"submit", WriteJob("again"), "-o", "json"}), 0) << err_;
  EXPECT_FALSE(nlohmann::json::parse(out_)["job_id"].get<std::string>().empty());
}

TEST_F(LmctlCommandsTest, ListPagesWithPageTokenOrAll) {
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(Submit("paged" + std::to_string(i)));
  ASSERT_EQ(Run({"list", "--limit", "2"}), 0) << err_;
  const std::string hint = "more: lmctl list --limit 2 --page-token ";
  const size_t at = out_.find(hint);
  ASSERT_NE(at, std::string::npos) << out_;
  const std::string token = out_.substr(at + hint.size(), out_.find('\n', at) - at - hint.size());
  ASSERT_EQ(Run({"list", "--limit", "2", "--page-token", token, "-o", "json"}), 0) << err_;
  nlohmann::json page = nlohmann::json::parse(out_);
  ASSERT_EQ(page.size(), 2u);
  EXPECT_EQ(page[0]["id"], ids[2]);
  EXPECT_TRUE(Has(err_, "more: lmctl list --limit 2 --page-token ")) << err_;
  ASSERT_EQ(Run({"list", "--limit", "2", "--all", "-o", "json"}), 0) << err_;
  page = nlohmann::json::parse(out_);
  ASSERT_EQ(page.size(), 5u);
  EXPECT_EQ(page[4]["id"], ids[0]);
  EXPECT_FALSE(Has(err_, "more:")) << err_;
  EXPECT_EQ(Run({"list", "--page-token", "bogus"}), 1);
  EXPECT_TRUE(Has(err_, "page_token")) << err_;
}

TEST_F(LmctlCommandsTest, RetryACancelledJobRecordsTheLink) {
  const std::string id = Submit("flaky");
  ASSERT_TRUE(client_->Cancel(id).ok());
  ASSERT_EQ(Run({"retry", id}), 0) << err_;
  const std::string new_id = out_.substr(0, out_.find('\n'));
  EXPECT_NE(new_id, id);
  EXPECT_TRUE(Has(err_, "job " + id + " retried as job " + new_id)) << err_;
  auto job = client_->Get(new_id);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->state(), v1::QUEUED);
  EXPECT_EQ(job->name(), "flaky");
  ASSERT_EQ(Run({"logs", new_id}), 0) << err_;
  EXPECT_EQ(out_, "retry of job " + id + "\n");
  ASSERT_EQ(Run({"logs", id, "-o", "json"}), 0) << err_;
  const nlohmann::json line = nlohmann::json::parse(out_);
  EXPECT_EQ(line["stream"], "server");
  EXPECT_EQ(line["text"], "retried as job " + new_id);
  // A QUEUED job cannot be retried; nor can a job that does not exist.
  EXPECT_EQ(Run({"retry", new_id}), 1);
  EXPECT_TRUE(Has(err_, "QUEUED")) << err_;
  EXPECT_EQ(out_, "");
  EXPECT_EQ(Run({"retry", "999"}), 1);
  EXPECT_TRUE(Has(err_, "999")) << err_;
}

// ListJobs view BASIC over gRPC: the FULL job less spec, attempts and checkpoints. lmctl's
// table (basic by default) still shows progress; JSON is full unless --view basic.
TEST_F(LmctlCommandsTest, ListViewsBasicAndFull) {
  ScriptedWorker worker(cluster_->address(), "scripted", 1, {{"pool", "test"}});
  const std::string id = FailedJob(worker);
  auto full = client_->ListPage(10, "", v1::JOB_VIEW_FULL);
  ASSERT_TRUE(full.ok()) << full.status();
  auto basic = client_->ListPage(10, "", v1::JOB_VIEW_BASIC);
  ASSERT_TRUE(basic.ok()) << basic.status();
  ASSERT_EQ(full->jobs_size(), 1);
  ASSERT_EQ(basic->jobs_size(), 1);
  v1::Job expected = full->jobs(0);
  EXPECT_FALSE(expected.spec_yaml().empty());
  EXPECT_EQ(expected.attempts_size(), 1);
  EXPECT_EQ(expected.checkpoints_size(), 1);
  expected.clear_spec_yaml();
  expected.clear_attempts();
  expected.clear_checkpoints();
  EXPECT_EQ(basic->jobs(0).ShortDebugString(), expected.ShortDebugString());
  EXPECT_EQ(basic->jobs(0).metrics().step(), 5);

  ASSERT_EQ(Run({"list"}), 0) << err_;
  EXPECT_TRUE(Has(out_, "FAILED")) << out_;
  EXPECT_TRUE(Has(out_, "2.5000")) << out_;
  ASSERT_EQ(Run({"list", "-o", "json"}), 0) << err_;
  nlohmann::json listed = nlohmann::json::parse(out_);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0]["attempts"].size(), 1u);
  EXPECT_EQ(listed[0]["checkpoints"].size(), 1u);
  listed[0].erase("attempts");
  listed[0].erase("checkpoints");
  ASSERT_EQ(Run({"list", "-o", "json", "--view", "basic"}), 0) << err_;
  EXPECT_EQ(nlohmann::json::parse(out_), listed);
  Submit("second");
  ASSERT_EQ(Run({"list", "--limit", "1", "--view", "basic", "-o", "json"}), 0) << err_;
  EXPECT_TRUE(Has(err_, "more: lmctl list --limit 1 --view basic --page-token ")) << err_;
  EXPECT_EQ(Run({"list", "--view", "short"}), 1);
  EXPECT_TRUE(Has(err_, "--view must be basic or full")) << err_;
}

TEST_F(LmctlCommandsTest, FailedJobCheckpointsLogsExplainWatchAndRetry) {
  ScriptedWorker worker(cluster_->address(), "scripted", 1, {{"pool", "test"}});
  const std::string id = FailedJob(worker);

  ASSERT_EQ(Run({"checkpoints", id}), 0) << err_;
  EXPECT_TRUE(Has(out_, "STEP  TIME")) << out_;
  EXPECT_TRUE(Has(out_, "       5  20")) << out_;
  EXPECT_TRUE(Has(out_, "/ckpt/checkpoint-5")) << out_;
  ASSERT_EQ(Run({"checkpoints", id, "-o", "json"}), 0) << err_;
  const nlohmann::json ckpts = nlohmann::json::parse(out_);
  ASSERT_EQ(ckpts.size(), 1u);
  EXPECT_EQ(ckpts[0]["step"], 5);
  EXPECT_EQ(ckpts[0]["path"], "/ckpt/checkpoint-5");

  ASSERT_EQ(Run({"logs", id}), 0) << err_;
  EXPECT_TRUE(Has(out_, "step five\n")) << out_;
  EXPECT_TRUE(Has(out_, "bad row 3\n")) << out_;

  ASSERT_EQ(Run({"explain", id}), 0) << err_;
  EXPECT_TRUE(Has(out_, "job " + id + " is FAILED")) << out_;
  EXPECT_TRUE(Has(out_, "bad data: row 3")) << out_;
  EXPECT_TRUE(Has(out_, "(exit code 1)")) << out_;
  EXPECT_TRUE(Has(out_, "attempt 1 on " + worker.id() + ": ")) << out_;
  ASSERT_EQ(Run({"explain", id, "-o", "json"}), 0) << err_;
  const nlohmann::json e = nlohmann::json::parse(out_);
  EXPECT_EQ(e["exit_code"], 1);
  EXPECT_EQ(e["attempts"].size(), 1u);

  // watch on a pipe: plain lines, then the final state; exit 1 because it FAILED.
  EXPECT_EQ(Run({"watch", id}), 1);
  EXPECT_TRUE(Has(out_, "step 5/10  loss 2.5000")) << out_;
  EXPECT_TRUE(Has(out_, "job " + id + " FAILED: bad data: row 3")) << out_;
  EXPECT_EQ(Run({"watch", id, "-o", "json"}), 1);
  EXPECT_TRUE(Has(out_, "\"type\":\"metrics\"")) << out_;
  EXPECT_TRUE(Has(err_, "FAILED")) << err_;

  ASSERT_EQ(Run({"retry", id, "-o", "json"}), 0) << err_;
  EXPECT_EQ(nlohmann::json::parse(out_)["retry_of"], id);
}

TEST_F(LmctlCommandsTest, WorkersTableAndJson) {
  ASSERT_EQ(Run({"workers"}), 0) << err_;
  EXPECT_EQ(out_, "no workers registered\n");
  ScriptedWorker worker(cluster_->address(), "scripted", 2, {{"pool", "test"}});
  ASSERT_TRUE(worker.Register().ok());
  ASSERT_EQ(Run({"workers"}), 0) << err_;
  EXPECT_TRUE(Has(out_, "ID      NAME          HOST")) << out_;
  EXPECT_TRUE(Has(out_, "scripted")) << out_;
  EXPECT_TRUE(Has(out_, "test-host")) << out_;
  EXPECT_TRUE(Has(out_, "0/2")) << out_;
  EXPECT_TRUE(Has(out_, "pool=test")) << out_;
  EXPECT_TRUE(Has(out_, "cpu:0")) << out_;
  EXPECT_TRUE(Has(out_, "s ago")) << out_;
  ASSERT_EQ(Run({"workers", "-o", "json"}), 0) << err_;
  const nlohmann::json all = nlohmann::json::parse(out_);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0]["id"], worker.id());
  EXPECT_EQ(all[0]["slots"], 2);
  EXPECT_EQ(all[0]["used_slots"], 0);
  EXPECT_EQ(all[0]["labels"]["pool"], "test");
  EXPECT_EQ(all[0]["devices"][0]["type"], "cpu");
  EXPECT_TRUE(all[0]["last_seen"].is_string());
}

TEST_F(LmctlCommandsTest, ExplainAQueuedJob) {
  const std::string id = Submit("picky", "  selector: {gpu: h100}\n");
  ASSERT_EQ(Run({"explain", id}), 0) << err_;
  EXPECT_TRUE(Has(out_, "job " + id + " is QUEUED")) << out_;
  EXPECT_TRUE(Has(out_, "no worker is registered")) << out_;
  EXPECT_TRUE(Has(out_, "asks: 1 worker(s) x 1 slot(s), selector {\"gpu\":\"h100\"}")) << out_;

  ScriptedWorker worker(cluster_->address(), "cpu-box", 1, {{"gpu", "none"}});
  ASSERT_TRUE(worker.Register().ok());
  ASSERT_EQ(Run({"explain", id, "-o", "json"}), 0) << err_;
  const nlohmann::json e = nlohmann::json::parse(out_);
  EXPECT_EQ(e["eligible_ever"], 0);
  ASSERT_EQ(e["workers"].size(), 1u);
  EXPECT_EQ(e["workers"][0]["mismatched_labels"][0], "gpu=h100 (worker has none)");
  EXPECT_TRUE(Has(e["summary"].get<std::string>(), "can never start")) << e.dump();
}

TEST_F(LmctlCommandsTest, UnknownJobsAndBadInput) {
  for (const char* command : {"get", "checkpoints", "logs", "explain", "watch", "cancel"}) {
    EXPECT_EQ(Run({command, "424242"}), 1) << command;
    EXPECT_TRUE(Has(err_, "424242")) << command << ": " << err_;
  }
  EXPECT_EQ(Run({"frobnicate"}), 2);
  EXPECT_TRUE(Has(err_, "unknown command 'frobnicate'")) << err_;
  EXPECT_EQ(Run({"list", "-o", "xml"}), 2);
  EXPECT_TRUE(Has(err_, "-o must be text, json or yaml")) << err_;
  EXPECT_EQ(Run({"retry"}), 2);
  EXPECT_TRUE(Has(err_, "usage: lmctl retry ID")) << err_;
}

TEST_F(LmctlCommandsTest, ValidateNeedsNoServer) {
  // --server points nowhere: validate must not try to reach it.
  ASSERT_EQ(Run({"--server", "127.0.0.1:1", "validate", WriteJob("local")}), 0) << err_;
  EXPECT_TRUE(Has(out_, "valid\n")) << out_;
  ASSERT_EQ(Run({"validate", WriteJob("local2"), "-o", "json"}), 0) << err_;
  const nlohmann::json report = nlohmann::json::parse(out_);
  EXPECT_EQ(report["ok"], true);
  EXPECT_GT(report["estimate"]["parameters"].get<int64_t>(), 0);
  EXPECT_EQ(Run({"validate", (cluster_->dir() / "missing.yaml").string()}), 1);
  EXPECT_TRUE(Has(err_, "missing.yaml: cannot open file")) << err_;
}

}  // namespace
}  // namespace lmtrain::testing
