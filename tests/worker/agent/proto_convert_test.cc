// The worker's message mappings (worker/agent/proto_convert.h): every field reaches its proto
// field, and every proto field the server sends reaches the worker's message.
#include "worker/agent/proto_convert.h"

#include <gtest/gtest.h>

#include "proto/proto_convert.h"

namespace lmtrain {
namespace {

TEST(WorkerProtoConvertTest, RegistrationCarriesEveryField) {
  WorkerRegistration r;
  r.name = "n";
  r.hostname = "h";
  r.slots = 3;
  r.devices = {{"cuda", 2, "H100", 80, "GPU-x"}};
  r.labels = {{"gpu", "h100"}};
  r.advertise_address = "10.0.0.1";
  r.rendezvous_port_base = 30000;
  r.rendezvous_port_count = 7;
  r.running = {{"9", 1, 4, {2}}};
  v1::RegisterWorkerRequest p;
  ToProto(r, &p);
  EXPECT_EQ(p.name(), "n");
  EXPECT_EQ(p.hostname(), "h");
  EXPECT_EQ(p.slots(), 3);
  ASSERT_EQ(p.devices_size(), 1);
  EXPECT_EQ(p.devices(0).type(), "cuda");
  EXPECT_EQ(p.devices(0).index(), 2);
  EXPECT_EQ(p.devices(0).name(), "H100");
  EXPECT_EQ(p.devices(0).memory_bytes(), 80);
  EXPECT_EQ(p.devices(0).uuid(), "GPU-x");
  EXPECT_EQ(p.labels().at("gpu"), "h100");
  EXPECT_EQ(p.advertise_address(), "10.0.0.1");
  EXPECT_EQ(p.rendezvous_port_base(), 30000);
  EXPECT_EQ(p.rendezvous_port_count(), 7);
  ASSERT_EQ(p.running_size(), 1);
  const RunningRank back = FromProto(p.running(0));
  EXPECT_EQ(back.job_id, "9");
  EXPECT_EQ(back.rank, 1);
  EXPECT_EQ(back.attempt, 4);
  EXPECT_EQ(back.gpus, std::vector<int>{2});
}

TEST(WorkerProtoConvertTest, SyncAndOrdersRoundTrip) {
  WorkerSync s{"w3", {{"9", 0, 1, {}}}, 2, 750};
  v1::SyncRequest req;
  ToProto(s, &req);
  EXPECT_EQ(req.worker_id(), "w3");
  EXPECT_EQ(req.running_size(), 1);
  EXPECT_EQ(req.free_slots(), 2);
  EXPECT_EQ(req.wait_ms(), 750);

  v1::SyncResponse resp;
  v1::Assignment* a = resp.add_assignments();
  a->set_job_id("9");
  a->set_spec_yaml("name: x\n");
  a->set_output_dir("/out");
  a->set_attempt(2);
  a->set_rank(1);
  a->set_world_size(4);
  a->set_local_rank(1);
  a->set_master_addr("10.0.0.2");
  a->set_master_port(29500);
  a->set_resume(true);
  a->add_gpus(0);
  a->add_gpus(3);
  ToProto(RunningRank{"8", 0, 5, {}}, resp.add_stop());
  resp.set_reregister(true);
  const SyncOrders orders = FromProto(resp);
  ASSERT_EQ(orders.assignments.size(), 1u);
  const RankAssignment& got = orders.assignments[0];
  EXPECT_EQ(got.job_id, "9");
  EXPECT_EQ(got.spec_yaml, "name: x\n");
  EXPECT_EQ(got.output_dir, "/out");
  EXPECT_EQ(got.attempt, 2);
  EXPECT_EQ(got.rank, 1);
  EXPECT_EQ(got.world_size, 4);
  EXPECT_EQ(got.local_rank, 1);
  EXPECT_EQ(got.master_addr, "10.0.0.2");
  EXPECT_EQ(got.master_port, 29500);
  EXPECT_TRUE(got.resume);
  EXPECT_EQ(got.gpus, (std::vector<int>{0, 3}));
  ASSERT_EQ(orders.stop.size(), 1u);
  EXPECT_EQ(orders.stop[0].job_id, "8");
  EXPECT_EQ(orders.stop[0].attempt, 5);
  EXPECT_TRUE(orders.reregister);
}

TEST(WorkerProtoConvertTest, EveryEventKindReachesItsField) {
  TrainingMetrics m;
  m.step = 3;
  m.loss = 0.5;
  RankEventBatch batch{"w1", "9", 1, 2, {}};
  batch.events = {RankStarted{42}, m, RankCheckpoint{3, "/c", 1700000000123},
                  RankLog{"stderr", "oops"}, RankExited{-1, 9, "killed", true}};
  v1::ReportJobEventsRequest p;
  ToProto(batch, &p);
  EXPECT_EQ(p.worker_id(), "w1");
  EXPECT_EQ(p.job_id(), "9");
  EXPECT_EQ(p.rank(), 1);
  EXPECT_EQ(p.attempt(), 2);
  ASSERT_EQ(p.events_size(), 5);
  EXPECT_EQ(p.events(0).started().pid(), 42);
  EXPECT_EQ(p.events(1).metrics().step(), 3);
  EXPECT_EQ(p.events(1).metrics().loss(), 0.5);
  EXPECT_FALSE(p.events(1).metrics().has_eval_loss());
  EXPECT_EQ(p.events(2).checkpoint().step(), 3);
  EXPECT_EQ(p.events(2).checkpoint().path(), "/c");
  EXPECT_EQ(FromProtoTime(p.events(2).checkpoint().created_at()), 1700000000123);
  EXPECT_EQ(p.events(3).log().stream(), "stderr");
  EXPECT_EQ(p.events(3).log().text(), "oops");
  const v1::JobExited& x = p.events(4).exited();
  EXPECT_EQ(x.exit_code(), -1);
  EXPECT_EQ(x.signal(), 9);
  EXPECT_EQ(x.error(), "killed");
  EXPECT_TRUE(x.cancelled());
}

}  // namespace
}  // namespace lmtrain
