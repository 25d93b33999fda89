#include "client/job_explain.h"

#include <gtest/gtest.h>

namespace lmtrain {
namespace {

v1::Worker MakeWorker(const std::string& id, int slots, int used,
                      std::map<std::string, std::string> labels) {
  v1::Worker w;
  w.set_id(id);
  w.set_name("w" + id);
  w.set_slots(slots);
  w.set_used_slots(used);
  w.mutable_labels()->insert(labels.begin(), labels.end());
  return w;
}

v1::Job Queued(int workers, int slots, std::map<std::string, std::string> selector) {
  v1::Job job;
  job.set_id("7");
  job.set_state(v1::QUEUED);
  job.mutable_resources()->set_workers(workers);
  job.mutable_resources()->set_slots_per_worker(slots);
  job.mutable_resources()->mutable_selector()->insert(selector.begin(), selector.end());
  return job;
}

TEST(JobExplainTest, QueuedWithoutWorkers) {
  const nlohmann::json e = ExplainJob(Queued(1, 1, {}), {});
  EXPECT_EQ(e["state"], "QUEUED");
  EXPECT_NE(e["summary"].get<std::string>().find("no worker is registered"), std::string::npos);
  EXPECT_EQ(e["eligible_now"], 0);
}

TEST(JobExplainTest, SelectorMismatchAndBusySlots) {
  const std::vector<v1::Worker> workers = {MakeWorker("1", 2, 0, {{"gpu", "none"}}),
                                           MakeWorker("2", 2, 2, {{"gpu", "h100"}}),
                                           MakeWorker("3", 1, 0, {{"gpu", "h100"}})};
  v1::Job job = Queued(1, 2, {{"gpu", "h100"}});
  job.set_waiting_reason("no worker has 2 free slots matching gpu=h100");
  const nlohmann::json e = ExplainJob(job, workers);
  EXPECT_EQ(e["eligible_now"], 0);
  EXPECT_EQ(e["eligible_ever"], 1);  // Worker 2, once its slots free up.
  EXPECT_EQ(e["workers"][0]["labels_match"], false);
  EXPECT_EQ(e["workers"][0]["mismatched_labels"][0], "gpu=h100 (worker has none)");
  EXPECT_EQ(e["workers"][1]["fits_ever"], true);
  EXPECT_EQ(e["workers"][2]["fits_ever"], false);  // Too few slots in total.
  const std::string text = ExplanationToText(e);
  EXPECT_NE(text.find("job 7 is QUEUED: no worker has 2 free slots"), std::string::npos) << text;
  EXPECT_NE(text.find("waiting for free slots"), std::string::npos) << text;
  EXPECT_NE(text.find("asks: 1 worker(s) x 2 slot(s), selector {\"gpu\":\"h100\"}"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("worker 1 (w1): 2/2 slots free, selector gpu=h100 (worker has none) -> "
                      "cannot take it"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("worker 2 (w2): 0/2 slots free -> fits once slots free up"),
            std::string::npos)
      << text;
}

TEST(JobExplainTest, GpusCountLikeSlots) {
  std::vector<v1::Worker> workers = {MakeWorker("1", 4, 1, {}), MakeWorker("2", 4, 0, {}),
                                     MakeWorker("3", 8, 0, {})};
  for (int i = 0; i < 2; ++i) {
    for (int g = 0; g < 2; ++g) {
      v1::Device* d = workers[i].add_devices();
      d->set_type("cuda");
      d->set_index(g);
    }
  }
  workers[0].set_used_gpus(1);
  v1::Job job = Queued(1, 2, {});
  job.mutable_resources()->set_gpus_per_worker(2);
  const nlohmann::json e = ExplainJob(job, workers);
  EXPECT_EQ(e["asks"]["gpus_per_worker"], 2);
  EXPECT_EQ(e["workers"][0]["free_gpus"], 1);
  EXPECT_EQ(e["workers"][0]["fits_now"], false);
  EXPECT_EQ(e["workers"][0]["fits_ever"], true);
  EXPECT_EQ(e["workers"][1]["fits_now"], true);
  EXPECT_EQ(e["workers"][2]["fits_ever"], false);  // No GPUs.
  const std::string text = ExplanationToText(e);
  EXPECT_NE(text.find("asks: 1 worker(s) x 2 slot(s) and 2 GPU(s)"), std::string::npos) << text;
  EXPECT_NE(text.find("worker 1 (w1): 3/4 slots free, 1/2 GPUs free -> fits once slots and GPUs "
                      "free up"),
            std::string::npos)
      << text;
}

TEST(JobExplainTest, NeverFits) {
  const nlohmann::json e = ExplainJob(Queued(2, 1, {}), {MakeWorker("1", 4, 0, {})});
  EXPECT_NE(e["summary"].get<std::string>().find("can never start"), std::string::npos) << e.dump();
}

TEST(JobExplainTest, FailedShowsErrorExitCodeAndAttempts) {
  v1::Job job;
  job.set_id("9");
  job.set_state(v1::FAILED);
  job.set_error("loss is NaN at step 40");
  job.set_exit_code(2);
  job.set_retries(1);
  job.mutable_resources()->set_max_retries(3);
  v1::Attempt* a = job.add_attempts();
  a->set_number(1);
  a->add_worker_ids("4");
  a->set_outcome("worker 4 lost");
  a = job.add_attempts();
  a->set_number(2);
  a->add_worker_ids("5");
  a->set_outcome("failed: exit code 2");
  const nlohmann::json e = ExplainJob(job, {});
  EXPECT_EQ(e["exit_code"], 2);
  EXPECT_EQ(e["error"], "loss is NaN at step 40");
  EXPECT_EQ(e["attempts"].size(), 2u);
  const std::string text = ExplanationToText(e);
  EXPECT_NE(text.find("job 9 is FAILED: loss is NaN at step 40 (exit code 2)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("retries: 1 of 3"), std::string::npos) << text;
  EXPECT_NE(text.find("attempt 1 on 4: worker 4 lost"), std::string::npos) << text;
  EXPECT_NE(text.find("attempt 2 on 5: failed: exit code 2"), std::string::npos) << text;
}

}  // namespace
}  // namespace lmtrain
