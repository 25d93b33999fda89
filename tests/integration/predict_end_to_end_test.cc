// lmctl predict and POST /api/v1/jobs/ID/predict through the real stack: lm-server +
// lm-worker + lm-train on loopback. A tiny MLM trained for a few steps, then `lmctl predict`
// (gRPC) and the HTTP JSON API run fill-mask on its checkpoints on the server (lm-train predict
// as the server's child); jobs without a checkpoint, unfinished jobs and inputs the model
// cannot take are clear errors.
#include <gtest/gtest.h>
#include <httplib.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/job_client.h"
#include "tests/integration/cluster.h"

namespace lmtrain::testing {
namespace {
namespace fs = std::filesystem;

constexpr char kCourseText[] = "This is a great [MASK].";

std::string MlmJob(const std::string& training) {
  const std::string data = SourceDir() + "/examples/data/";
  return absl::StrCat(
      "name: predict-mlm\ntask: mlm\n",
      "model: {config: {model_type: bert, hidden_size: 32, num_hidden_layers: 1, "
      "num_attention_heads: 2, intermediate_size: 64, max_position_embeddings: 64}}\n",
      "tokenizer: {path: ", SourceDir(), "/tests/data/tokenizers/bert-base-uncased}\n",
      "data: {train_file: ", data, "austen_train.txt, max_seq_length: 32}\n",
      "training: {per_device_train_batch_size: 4, do_eval: false, ", training, "}\n");
}

class PredictEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = Cluster::Start(1);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
  }

  // Submits the job file `yaml`; returns its id.
  std::string Submit(const std::string& name, const std::string& yaml) {
    const fs::path file = cluster_->dir() / name / "job.yaml";
    fs::create_directories(file.parent_path());
    std::ofstream(file) << yaml;
    auto id = client().Submit(file.string(), "");
    EXPECT_TRUE(id.ok()) << id.status();
    return id.value_or("");
  }

  // Follows job `id` to its end; returns its final state.
  v1::JobState WaitFor(const std::string& id) {
    EXPECT_TRUE(client().Watch(id, 0, [](const v1::JobEvent&) {}).ok());
    auto job = client().Get(id);
    EXPECT_TRUE(job.ok()) << job.status();
    if (job.ok() && job->state() != v1::SUCCEEDED) ADD_FAILURE() << job->error();
    return job.ok() ? job->state() : v1::JOB_STATE_UNSPECIFIED;
  }

  // POSTs `body` to the job's HTTP predict route; returns the status, the JSON reply in *out.
  int HttpPredict(const std::string& id, const nlohmann::json& body, nlohmann::json* out) {
    httplib::Client http("127.0.0.1", cluster_->http_port());
    http.set_read_timeout(120);
    auto res = http.Post("/api/v1/jobs/" + id + "/predict", body.dump(), "application/json");
    EXPECT_TRUE(res) << httplib::to_string(res.error());
    if (!res) return -1;
    *out = nlohmann::json::parse(res->body, nullptr, false);
    return res->status;
  }

  int Lmctl(const std::vector<std::string>& args, std::string* out, std::string* err) {
    return cluster_->Lmctl(args, out, err);
  }

  JobClient& client() {
    if (!client_) client_ = std::make_unique<JobClient>(cluster_->address());
    return *client_;
  }

  std::unique_ptr<Cluster> cluster_;
  std::unique_ptr<JobClient> client_;
};

TEST_F(PredictEndToEnd, FillMaskOnAFinishedJobsCheckpoints) {
  const std::string id = Submit("mlm", MlmJob("max_steps: 4, save_steps: 2"));
  ASSERT_EQ(WaitFor(id), v1::SUCCEEDED);
  std::string out, err;
  ASSERT_EQ(Lmctl({"predict", id, "--fill-mask", kCourseText, "-o", "json"}, &out, &err), 0) << err;
  nlohmann::json doc = nlohmann::json::parse(out);
  EXPECT_EQ(doc["job_id"], id);
  EXPECT_EQ(doc["step"], 4);  // The latest checkpoint.
  const nlohmann::json& result = doc["result"];
  ASSERT_EQ(result.size(), 5u) << out;
  for (size_t i = 0; i < result.size(); ++i) {
    EXPECT_EQ(result[i]["sequence"].get<std::string>().rfind("this is a great", 0), 0u) << out;
    if (i > 0) EXPECT_LE(result[i]["score"], result[i - 1]["score"]);
  }

  ASSERT_EQ(Lmctl({"predict", id, "--step", "2", "--top-k", "2", "--fill-mask", kCourseText, "-o",
                   "json"},
                  &out, &err),
            0)
      << err;
  doc = nlohmann::json::parse(out);
  EXPECT_EQ(doc["step"], 2);
  EXPECT_EQ(doc["result"].size(), 2u);

  ASSERT_EQ(Lmctl({"predict", id, "--top-k", "3", "--fill-mask", kCourseText}, &out, &err), 0)
      << err;
  const std::vector<std::string> lines = absl::StrSplit(out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u) << out;
  for (const std::string& line : lines)
    EXPECT_NE(line.find("  this is a great"), std::string::npos);

  EXPECT_EQ(Lmctl({"predict", id, "--generate", "It is"}, &out, &err), 1);
  EXPECT_NE(err.find("is not a causal LM"), std::string::npos) << err;
  EXPECT_EQ(Lmctl({"predict", id, "--fill-mask", "no mask here"}, &out, &err), 1);
  EXPECT_NE(err.find("no mask token [MASK] in the text"), std::string::npos) << err;
  EXPECT_EQ(Lmctl({"predict", id}, &out, &err), 1);
  EXPECT_NE(err.find("predict needs one of --fill-mask TEXT or --generate PROMPT"),
            std::string::npos)
      << err;
}

TEST_F(PredictEndToEnd, TheHttpApiPredictsLikeLmctl) {
  const std::string id = Submit("mlm", MlmJob("max_steps: 4, save_steps: 2"));
  ASSERT_EQ(WaitFor(id), v1::SUCCEEDED);
  std::string out, err;
  ASSERT_EQ(Lmctl({"predict", id, "--step", "2", "--top-k", "3", "--fill-mask", kCourseText, "-o",
                   "json"},
                  &out, &err),
            0)
      << err;
  nlohmann::json http;
  ASSERT_EQ(HttpPredict(id, {{"fill_mask", kCourseText}, {"top_k", 3}, {"step", 2}}, &http), 200)
      << http;
  EXPECT_EQ(http, nlohmann::json::parse(out));  // The same document, result for result.
  ASSERT_EQ(http["result"].size(), 3u);
  EXPECT_EQ(http["result"][0]["sequence"].get<std::string>().rfind("this is a great", 0), 0u);

  ASSERT_EQ(HttpPredict(id, {{"fill_mask", kCourseText}}, &http), 200) << http;
  EXPECT_EQ(http["step"], 4);
  EXPECT_EQ(http["result"].size(), 5u);
  EXPECT_EQ(HttpPredict(id, {{"fill_mask", "no mask here"}}, &http), 400);
  EXPECT_NE(http.value("error", "").find("no mask token [MASK] in the text"), std::string::npos)
      << http;
  EXPECT_EQ(HttpPredict(id, {{"generate", "It is"}}, &http), 400);
  EXPECT_NE(http.value("error", "").find("is not a causal LM"), std::string::npos) << http;
  EXPECT_EQ(HttpPredict(id, {{"fill_mask", kCourseText}, {"step", 3}}, &http), 404) << http;
  EXPECT_EQ(HttpPredict("999", {{"fill_mask", kCourseText}}, &http), 404) << http;
}

TEST_F(PredictEndToEnd, UnfinishedJobsAndJobsWithoutCheckpointsAreClearErrors) {
  const std::string unsaved = Submit("unsaved", MlmJob("max_steps: 2, save_strategy: 'no'"));
  ASSERT_EQ(WaitFor(unsaved), v1::SUCCEEDED);
  std::string out, err;
  EXPECT_EQ(Lmctl({"predict", unsaved, "--fill-mask", kCourseText}, &out, &err), 1);
  EXPECT_NE(err.find("job " + unsaved + " has no checkpoint"), std::string::npos) << err;

  const std::string running = Submit("long", MlmJob("max_steps: 100000"));
  EXPECT_EQ(Lmctl({"predict", running, "--fill-mask", kCourseText}, &out, &err), 1);
  EXPECT_NE(err.find("predict needs a finished job"), std::string::npos) << err;
  EXPECT_EQ(Lmctl({"cancel", running}, &out, &err), 0) << err;
  EXPECT_EQ(Lmctl({"predict", "999", "--fill-mask", kCourseText}, &out, &err), 1);
}

}  // namespace
}  // namespace lmtrain::testing
