// POST /api/v1/jobs/ID/predict (PredictApi) against the real Dispatcher and JobManager on an
// in-memory store, with a stand-in trainer: a shell script in place of lm-train that prints
// its arguments as a JSON list, run as a real child by the real CheckpointPredictor. The body's
// keys, ownership, and the error statuses are checked here; lm-train predict itself on a
// trained checkpoint runs in tests/integration/predict_end_to_end_test.cc.
#include "server/http/predict_api.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/stat.h>

#include <filesystem>

#include "server/http/http_server.h"
#include "tests/server/dispatcher_fixture.h"
#include "tests/text/dataset_cache/temp_dir.h"

namespace lmtrain::testing {
namespace {
using nlohmann::json;
using ::testing::HasSubstr;

const Principal kAlice{"alice", Role::kUser, true};
const Principal kBob{"bob", Role::kUser, true};
const Principal kWorker{"w1", Role::kWorker, true};

class PredictApiTest : public DispatcherFixture {
 protected:
  void SetUp() override {
    UseOptions(Dispatcher::Options{dir_.File("artifacts"), kLeaseMs});
    // Prints its arguments as a JSON list of strings (none of them hold quotes here).
    trainer_ = dir_.Write("lm-train.sh",
                          "#!/bin/sh\nprintf '['; sep=''; for a in \"$@\"; do "
                          "printf '%s\"%s\"' \"$sep\" \"$a\"; sep=','; done; printf ']\\n'\n");
    chmod(trainer_.c_str(), 0755);
    predictor_ = std::make_unique<CheckpointPredictor>(
        CheckpointPredictor::Options{trainer_, dir_.File("artifacts")}, &launcher_);
    api_ = std::make_unique<PredictApi>(manager_.get(), predictor_.get());
  }

  // A job of `user` run to success on a worker, with the checkpoints of `steps` published.
  std::string FinishedJob(const std::string& user, const std::vector<int>& steps) {
    const std::string id = Submit("job", 0, "", user);
    if (worker_.empty()) worker_ = Worker("box", 1);
    const std::string& w = worker_;
    SyncResult r = Sync(w);
    EXPECT_EQ(r.assignments.size(), 1u);
    if (r.assignments.empty()) return id;
    Start(w, r.assignments[0]);
    EXPECT_TRUE(Exit(w, r.assignments[0], 0).ok());
    EXPECT_EQ(State(id), JobState::kSucceeded);
    for (int step : steps) {
      std::filesystem::create_directories(
          absl::StrCat(Job(id).output_dir, "/checkpoint-", step));
    }
    return id;
  }

  lmtrain::testing_internal::TempDir dir_;
  std::string trainer_, worker_;
  PosixProcessLauncher launcher_;
  std::unique_ptr<CheckpointPredictor> predictor_;
  std::unique_ptr<PredictApi> api_;
};

TEST_F(PredictApiTest, RunsTheTrainerOnTheCheckpointWithTheBodysOptions) {
  const std::string id = FinishedJob("alice", {2, 4});
  ApiResponse r = api_->Predict(kAlice, id, R"({"fill_mask": "a [MASK]"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body["job_id"], id);
  EXPECT_EQ(r.body["step"], 4);
  const std::string model = absl::StrCat(Job(id).output_dir, "/checkpoint-4");
  EXPECT_EQ(r.body["result"], json({"predict", "--model", model, "--fill-mask",
                                     "a [MASK]"}));

  r = api_->Predict(kAlice, id,
                    R"({"generate": "It is", "step": 2, "top_k": 3, "max_new_tokens": 7,
                        "temperature": 0.5, "seed": -9})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body["step"], 2);
  EXPECT_EQ(r.body["result"],
            json({"predict", "--model", absl::StrCat(Job(id).output_dir, "/checkpoint-2"),
                  "--generate", "It is", "--top-k", "3", "--max-new-tokens", "7",
                  "--temperature", "0.5", "--seed", "-9"}));
}

TEST_F(PredictApiTest, OnlyAdminsAndTheOwnerMayPredict) {
  const std::string id = FinishedJob("alice", {1});
  const std::string body = R"({"fill_mask": "a [MASK]"})";
  EXPECT_EQ(api_->Predict(kBob, id, body).status, 403);
  EXPECT_EQ(api_->Predict(kWorker, id, body).status, 403);
  EXPECT_EQ(api_->Predict(Principal{"", Role::kAnonymous, false}, id, body).status, 403);
  EXPECT_EQ(api_->Predict(Principal::AuthDisabled(), id, body).status, 200);
  EXPECT_EQ(api_->Predict(kAlice, id, body).status, 200);
}

TEST_F(PredictApiTest, MalformedBodiesAre400AndNameTheKey) {
  const std::string id = FinishedJob("alice", {1});
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "must be a JSON object"},
      {"[1]", "must be a JSON object"},
      {R"({"fill_mask": 3})", "\"fill_mask\" must be a string"},
      {R"({"fill_mask": "a [MASK]", "topk": 3})", "unknown key \"topk\""},
      {R"({"fill_mask": "a [MASK]", "top_k": 2.5})", "\"top_k\" must be an integer"},
      {R"({"fill_mask": "a [MASK]", "top_k": -1})", "\"top_k\" must be an integer in [0,"},
      {R"({"fill_mask": "a [MASK]", "step": 0})", "\"step\" must be an integer in [1,"},
      {R"({"generate": "a", "temperature": "hot"})", "\"temperature\" must be a number"},
      {R"({"generate": "a", "seed": 18446744073709551615})", "\"seed\" must be an integer"},
      {R"({})", "give one of fill_mask"},
      {R"({"fill_mask": "a [MASK]", "generate": "a"})", "give one of fill_mask"},
  };
  for (const auto& [body, message] : cases) {
    ApiResponse r = api_->Predict(kAlice, id, body);
    EXPECT_EQ(r.status, 400) << body;
    EXPECT_THAT(r.body.value("error", ""), HasSubstr(message)) << body;
  }
}

TEST_F(PredictApiTest, JobStatesAndMissingThingsHaveTheirStatuses) {
  const std::string body = R"({"fill_mask": "a [MASK]"})";
  EXPECT_EQ(api_->Predict(kAlice, "999", body).status, 404);
  const std::string unsaved = FinishedJob("alice", {});
  const std::string saved = FinishedJob("alice", {3});
  const std::string queued = Submit("queued", 0, "", "alice");
  ApiResponse r = api_->Predict(kAlice, queued, body);
  EXPECT_EQ(r.status, 409);
  EXPECT_THAT(r.body.value("error", ""), HasSubstr("predict needs a finished job"));
  r = api_->Predict(kAlice, unsaved, body);
  EXPECT_EQ(r.status, 404);
  EXPECT_THAT(r.body.value("error", ""), HasSubstr("has no checkpoint"));
  EXPECT_EQ(api_->Predict(kAlice, saved, R"({"fill_mask": "a [MASK]", "step": 5})").status, 404);

  PredictApi without(manager_.get(), nullptr);
  EXPECT_EQ(without.Predict(kAlice, saved, body).status, 501);
  CheckpointPredictor broken({dir_.File("no-such-lm-train"), dir_.File("artifacts")}, &launcher_);
  EXPECT_EQ(PredictApi(manager_.get(), &broken).Predict(kAlice, saved, body).status, 503);
}

// The route over a real socket: authentication, the JSON content type, the adapter.
TEST_F(PredictApiTest, TheRouteAuthenticatesAndNeedsAJsonBody) {
  const std::string id = FinishedJob("alice", {1});
  HttpServer::Options o;
  o.listen = "127.0.0.1:0";
  o.authenticate = [](const std::string& header) -> absl::StatusOr<Principal> {
    if (header == "Bearer alice") return kAlice;
    return absl::UnauthenticatedError("unknown token");
  };
  o.predictor = predictor_.get();
  auto server = HttpServer::Start(o, manager_.get(), dispatcher_.get(), nullptr);
  ASSERT_TRUE(server.ok()) << server.status();
  httplib::Client client("127.0.0.1", (*server)->port());
  const std::string path = "/api/v1/jobs/" + id + "/predict";
  const std::string body = R"({"fill_mask": "a [MASK]"})";
  auto res = client.Post(path, {{"Authorization", "Bearer alice"}}, body, "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(json::parse(res->body)["step"], 1);
  res = client.Post(path, {{"Authorization", "Bearer eve"}}, body, "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  res = client.Post(path, {{"Authorization", "Bearer alice"}}, body, "text/plain");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 415);
  res = client.Get(path, {{"Authorization", "Bearer alice"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);  // POST only.
}

}  // namespace
}  // namespace lmtrain::testing
