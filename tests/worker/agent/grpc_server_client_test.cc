// GrpcServerClient against real gRPC servers on loopback: which replica its calls go to.
#include "worker/agent/grpc_server_client.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>

namespace lmtrain {
namespace {

// Nothing listens there: connecting is refused at once.
constexpr char kDead[] = "127.0.0.1:1";

// An active lm-server whose store is down for reports.
class ActiveServer final : public v1::WorkerService::Service {
 public:
  grpc::Status Sync(grpc::ServerContext*, const v1::SyncRequest*, v1::SyncResponse*) override {
    ++syncs;
    return grpc::Status::OK;
  }
  grpc::Status ReportJobEvents(grpc::ServerContext*, const v1::ReportJobEventsRequest*,
                               v1::ReportJobEventsResponse*) override {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "database unreachable; retry");
  }
  std::atomic<int> syncs{0};
};

class GrpcServerClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(port_, 0);
  }
  void TearDown() override { server_->Shutdown(); }
  std::string Live() const { return "127.0.0.1:" + std::to_string(port_); }
  static WorkerSync Heartbeat() {
    WorkerSync sync;
    sync.worker_id = "w1";
    sync.wait_ms = 0;
    return sync;
  }

  ActiveServer service_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

TEST_F(GrpcServerClientTest, AFailedSyncMovesTheWorkerToTheNextReplica) {
  GrpcServerClient client(ClientChannelFactory::Plaintext(std::string(kDead) + "," + Live()));
  EXPECT_EQ(client.Sync(Heartbeat()).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(client.Sync(Heartbeat()).ok());
  EXPECT_EQ(service_.syncs, 1);
}

// Reports come every flush interval from every running rank: were each UNAVAILABLE answer from
// the server the worker talks to a reason to move on, they would keep sending it to a dead
// replica in its list, away from the server its Sync (the heartbeat that re-registers it and
// re-attaches its ranks) must reach.
TEST_F(GrpcServerClientTest, AReportRefusedAsUnavailableLeavesTheWorkerOnItsServer) {
  GrpcServerClient client(ClientChannelFactory::Plaintext(Live() + "," + kDead));
  RankEventBatch batch;
  batch.worker_id = "w1";
  batch.job_id = "1";
  batch.attempt = 1;
  batch.events.push_back(RankStarted{42});
  EXPECT_EQ(client.Report(batch).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(client.Sync(Heartbeat()).ok());
  EXPECT_EQ(service_.syncs, 1);
}

}  // namespace
}  // namespace lmtrain
