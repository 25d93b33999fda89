#include "client/job_format.h"

#include <gtest/gtest.h>

#include "absl/strings/str_split.h"
#include "proto_convert.h"

namespace lmtrain {
namespace {

constexpr int64_t kT0 = 1700000000123;  // 2023-11-14T22:13:20.123Z

v1::Job JobWithAttempts() {
  v1::Job job;
  job.set_id("7");
  job.set_name("tiny");
  job.set_task("clm");
  job.set_state(v1::RUNNING);
  job.set_user("ada");
  job.set_retries(1);
  job.set_waiting_reason("");
  v1::Resources* r = job.mutable_resources();
  r->set_workers(2);
  r->set_slots_per_worker(1);
  (*r->mutable_selector())["gpu"] = "a100";
  r->set_max_retries(3);
  v1::Attempt* first = job.add_attempts();
  first->set_number(1);
  first->add_worker_ids("w1");
  first->add_worker_ids("w2");
  ToProtoTime(kT0, first->mutable_scheduled_at());
  ToProtoTime(kT0 + 1000, first->mutable_ended_at());
  first->set_outcome("failed: exit 1");
  v1::Attempt* second = job.add_attempts();
  second->set_number(2);
  second->add_worker_ids("w3");
  ToProtoTime(kT0 + 2000, second->mutable_scheduled_at());
  return job;
}

TEST(JobToJsonTest, NewJobFields) {
  const nlohmann::json j = JobToJson(JobWithAttempts());
  EXPECT_EQ(j["user"], "ada");
  EXPECT_EQ(j["retries"], 1);
  EXPECT_TRUE(j["waiting_reason"].is_null());
  EXPECT_EQ(j["resources"]["workers"], 2);
  EXPECT_EQ(j["resources"]["slots_per_worker"], 1);
  EXPECT_EQ(j["resources"]["selector"]["gpu"], "a100");
  EXPECT_EQ(j["resources"]["max_retries"], 3);
  ASSERT_EQ(j["attempts"].size(), 2u);
  EXPECT_EQ(j["attempts"][0]["number"], 1);
  EXPECT_EQ(j["attempts"][0]["worker_ids"], nlohmann::json({"w1", "w2"}));
  EXPECT_EQ(j["attempts"][0]["scheduled_at"], "2023-11-14T22:13:20.123Z");
  EXPECT_EQ(j["attempts"][0]["ended_at"], "2023-11-14T22:13:21.123Z");
  EXPECT_EQ(j["attempts"][0]["outcome"], "failed: exit 1");
  EXPECT_TRUE(j["attempts"][1]["ended_at"].is_null());
}

TEST(JobToJsonTest, AnonymousQueuedJob) {
  v1::Job job;
  job.set_id("1");
  job.set_state(v1::QUEUED);
  job.set_waiting_reason("no worker has 2 free slots");
  const nlohmann::json j = JobToJson(job);
  EXPECT_TRUE(j["user"].is_null());
  EXPECT_EQ(j["waiting_reason"], "no worker has 2 free slots");
  EXPECT_EQ(j["attempts"], nlohmann::json::array());
  EXPECT_EQ(j["resources"]["selector"], nlohmann::json::object());
}

TEST(JobToJsonTest, EveryFieldOfTheOneShapeIsAlwaysThere) {
  v1::Job job = JobWithAttempts();
  job.set_spec_yaml("name: tiny\n");
  job.set_error("left over from attempt 1");
  ToProtoTime(kT0, job.mutable_created_at());
  v1::Checkpoint* c = job.add_checkpoints();
  c->set_step(30);
  c->set_path("/out/checkpoint-30");
  ToProtoTime(kT0 + 500, c->mutable_created_at());
  const nlohmann::json j = JobToJson(job);
  std::vector<std::string> keys;
  for (const auto& [key, value] : j.items()) keys.push_back(key);
  EXPECT_EQ(keys, std::vector<std::string>(
                      {"attempts", "checkpoints", "created_at", "error", "exit_code", "finished_at",
                       "id", "metrics", "name", "output_dir", "priority", "resources", "retries",
                       "started_at", "state", "task", "user", "waiting_reason", "worker_id"}));
  EXPECT_EQ(j["created_at"], "2023-11-14T22:13:20.123Z");
  EXPECT_TRUE(j["metrics"].is_null());
  EXPECT_TRUE(j["error"].is_null()) << "only a FAILED job has an error";
  EXPECT_EQ(j["checkpoints"], nlohmann::json::parse(R"([{"step": 30, "path": "/out/checkpoint-30",
                                                        "created_at": "2023-11-14T22:13:20.623Z"}])"));
  EXPECT_EQ(j["resources"]["gpus_per_worker"], 0);
  EXPECT_EQ(j["attempts"][0]["rank_gpus"], nlohmann::json::array());
  EXPECT_EQ(JobToJson(job, /*with_spec=*/true)["spec_yaml"], "name: tiny\n");
  job.set_state(v1::FAILED);
  EXPECT_EQ(JobToJson(job)["error"], "left over from attempt 1");
  EXPECT_EQ(JobToText(job).find("spec_yaml"), std::string::npos);
}

TEST(JobToTextTest, ShowsUserResourcesAndAttempts) {
  const std::string text = JobToText(JobWithAttempts());
  EXPECT_NE(text.find("user: ada\n"), std::string::npos) << text;
  EXPECT_NE(text.find("retries: 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("resources: {"), std::string::npos) << text;
  EXPECT_NE(text.find("attempt 1: workers w1,w2, scheduled 2023-11-14T22:13:20.123Z, ended "
                      "2023-11-14T22:13:21.123Z, failed: exit 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("attempt 2: workers w3, scheduled 2023-11-14T22:13:22.123Z\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("waiting_reason"), std::string::npos) << text;
}

TEST(JobsToTableTest, HasRetriesColumn) {
  const std::string table = JobsToTable({JobWithAttempts()});
  const std::vector<std::string> lines = absl::StrSplit(table, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("RETRIES"), std::string::npos);
  EXPECT_NE(lines[1].find("RUNNING"), std::string::npos);
}

v1::JobEvent StateEvent(int64_t seq, v1::JobState state, const std::string& reason) {
  v1::JobEvent e;
  e.set_seq(seq);
  e.set_job_id("7");
  ToProtoTime(kT0, e.mutable_time());
  e.mutable_state_changed()->set_state(state);
  e.mutable_state_changed()->set_reason(reason);
  return e;
}

TEST(EventToRowTest, StateChange) {
  const std::string row = EventToRow(StateEvent(3, v1::RUNNING, "lm-train started on w1"));
  EXPECT_EQ(row,
            "    3  2023-11-14T22:13:20.123Z  state       RUNNING     lm-train started on w1\n");
  const std::string header = EventsTableHeader();
  EXPECT_EQ(header, "  SEQ  TIME                      TYPE        STATE       DETAIL\n");
  // Columns line up.
  EXPECT_EQ(header.find("TYPE"), row.find("state"));
  EXPECT_EQ(header.find("DETAIL"), row.find("lm-train"));
}

TEST(EventToRowTest, OtherKinds) {
  v1::JobEvent metrics;
  metrics.set_seq(4);
  metrics.mutable_metrics()->set_step(10);
  metrics.mutable_metrics()->set_max_steps(100);
  metrics.mutable_metrics()->set_loss(2.5);
  const std::string m = EventToRow(metrics);
  EXPECT_NE(m.find("metrics"), std::string::npos) << m;
  EXPECT_NE(m.find("step 10/100  loss 2.5000"), std::string::npos) << m;
  metrics.mutable_metrics()->set_num_input_tokens_seen(40960);
  EXPECT_NE(EventToRow(metrics).find("loss 2.5000  40960 tokens seen"), std::string::npos)
      << EventToRow(metrics);

  v1::JobEvent checkpoint;
  checkpoint.set_seq(5);
  checkpoint.mutable_checkpoint()->set_step(100);
  checkpoint.mutable_checkpoint()->set_path("/out/checkpoint-100");
  EXPECT_NE(EventToRow(checkpoint).find("checkpoint  -           step 100 -> /out/checkpoint-100"),
            std::string::npos)
      << EventToRow(checkpoint);

  v1::JobEvent log;
  log.set_seq(6);
  log.mutable_log()->set_stream("stderr");
  log.mutable_log()->set_text("oops");
  EXPECT_NE(EventToRow(log).find("log         -           [stderr] oops"), std::string::npos)
      << EventToRow(log);
}

TEST(EventToJsonTest, EachKind) {
  const nlohmann::json s = EventToJson(StateEvent(1, v1::QUEUED, "submitted"));
  EXPECT_EQ(s, nlohmann::json({{"seq", 1},
                               {"job_id", "7"},
                               {"time", "2023-11-14T22:13:20.123Z"},
                               {"type", "state"},
                               {"state", "QUEUED"},
                               {"reason", "submitted"}}));

  v1::JobEvent metrics;
  metrics.set_seq(2);
  metrics.mutable_metrics()->set_step(3);
  const nlohmann::json m = EventToJson(metrics);
  EXPECT_EQ(m["type"], "metrics");
  EXPECT_EQ(m["metrics"]["step"], 3);
  EXPECT_TRUE(m["time"].is_null());

  v1::JobEvent checkpoint;
  checkpoint.mutable_checkpoint()->set_step(9);
  checkpoint.mutable_checkpoint()->set_path("/c");
  EXPECT_EQ(EventToJson(checkpoint)["checkpoint"], nlohmann::json({{"step", 9}, {"path", "/c"}}));

  v1::JobEvent log;
  log.mutable_log()->set_stream("stdout");
  log.mutable_log()->set_text("hi");
  EXPECT_EQ(EventToJson(log)["log"], nlohmann::json({{"stream", "stdout"}, {"text", "hi"}}));
}

}  // namespace
}  // namespace lmtrain
