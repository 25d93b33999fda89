// What authentication changes for JobService callers, over a real lm-server: the submitting
// user comes from the token, users list and touch only their own jobs, admins everything;
// the per-user quota and the spec size limit; the embedded worker's internal token; and the
// interceptor's fail-closed net for a handler that never asks.
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <gtest/gtest.h>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "client/job_client.h"
#include "server/auth/grpc_auth.h"
#include "tests/server/auth/secure_server.h"
#include "tests/server/server_test_util.h"
#include "worker/agent/local_worker.h"

namespace lmtrain {
namespace {

using testing::TempDir;

class JobAccessTest : public ::testing::Test {
 protected:
  void StartServer(Server::Options o = Server::Options()) {
    o.listen = "127.0.0.1:0";
    o.data_dir = (dir_.path() / "data").string();
    o.auth_tokens_file = dir_.Write("tokens.yaml", testing::TokensYaml());
    auto server = Server::Start(o);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }
  JobClient As(const char* token) {
    return JobClient(testing::TokenChannel(server_->port(), token));
  }
  // Follows the job's events (WatchJob from the first) until it changes to a state other than
  // QUEUED; returns that state, or QUEUED if none came within `timeout`.
  v1::JobState FirstStateAfterQueued(const char* token, const std::string& id,
                                     absl::Duration timeout) {
    auto stub = v1::JobService::NewStub(testing::TokenChannel(server_->port(), token));
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
    v1::WatchJobRequest request;
    request.set_job_id(id);
    auto reader = stub->WatchJob(&ctx, request);
    v1::JobEvent event;
    while (reader->Read(&event)) {
      if (event.has_state_changed() && event.state_changed().state() != v1::QUEUED) {
        ctx.TryCancel();
        reader->Finish();
        return event.state_changed().state();
      }
    }
    reader->Finish();
    return v1::QUEUED;
  }
  std::string JobFile() {
    std::ofstream(job_.dir() / "job.yaml") << job_.Request().spec_yaml;
    return (job_.dir() / "job.yaml").string();
  }

  // lm-server's --local-worker composition: a LocalWorker on the server's WorkerChannels().
  void StartLocalWorker(const std::string& trainer) {
    LocalWorker::Options w;
    w.work_dir = server_->options().data_dir + "/worker";
    w.trainer_path = trainer;
    auto worker = LocalWorker::Start(server_->WorkerChannels(), w);
    ASSERT_TRUE(worker.ok()) << worker.status();
    local_worker_ = *std::move(worker);
  }
  void TearDown() override {
    if (local_worker_) local_worker_->Stop();  // Before the server it reports to.
  }

  TempDir dir_{"access"};
  testing::JobFolder job_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<LocalWorker> local_worker_;
};

TEST_F(JobAccessTest, UsersSeeTheirOwnJobsAdminsSeeAll) {
  StartServer();
  JobClient alice = As(testing::kAliceToken), bob = As(testing::kBobToken),
            admin = As(testing::kAdminToken);
  auto a = alice.Submit(JobFile(), "");
  auto b = bob.Submit(JobFile(), "");
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  EXPECT_EQ(alice.Get(*a)->user(), "alice");  // From the token, not the request.
  EXPECT_EQ(bob.Get(*b)->user(), "bob");
  auto ids = [](const absl::StatusOr<std::vector<v1::Job>>& jobs) {
    std::vector<std::string> out;
    for (const v1::Job& j : jobs.value()) out.push_back(j.id());
    return out;
  };
  EXPECT_EQ(ids(alice.List(100)), std::vector<std::string>{*a});
  EXPECT_EQ(ids(bob.List(100)), std::vector<std::string>{*b});
  EXPECT_EQ(ids(admin.List(100)), (std::vector<std::string>{*b, *a}));
  EXPECT_EQ(bob.Get(*a).status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(bob.Cancel(*a).status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(alice.Get("999999").status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(admin.Cancel(*a).ok());
  EXPECT_EQ(alice.Get(*a)->state(), v1::CANCELLED);
}

TEST_F(JobAccessTest, SubmitBeyondTheQuotaIsResourceExhaustedNamingTheLimit) {
  Server::Options o;
  o.scheduler.users["alice"].max_queued_jobs = 2;
  StartServer(o);
  JobClient alice = As(testing::kAliceToken), bob = As(testing::kBobToken);
  ASSERT_TRUE(alice.Submit(JobFile(), "").ok());
  auto second = alice.Submit(JobFile(), "");
  ASSERT_TRUE(second.ok());
  auto third = alice.Submit(JobFile(), "");
  EXPECT_EQ(third.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(third.status().message().find("max_queued_jobs: 2"), std::string::npos)
      << third.status();
  EXPECT_TRUE(bob.Submit(JobFile(), "").ok());  // Bob has no quota.
  ASSERT_TRUE(alice.Cancel(*second).ok());      // A finished job frees its place.
  EXPECT_TRUE(alice.Submit(JobFile(), "").ok());
}

TEST_F(JobAccessTest, OversizedSpecAndRequestAreRefusedClearly) {
  Server::Options o;
  o.max_spec_bytes = 2000;
  o.max_receive_message_bytes = 64 << 10;
  StartServer(o);
  std::string big = job_.Request().spec_yaml + "# " + std::string(3000, 'x') + "\n";
  std::ofstream(job_.dir() / "big.yaml") << big;
  auto spec = As(testing::kAliceToken).Submit((job_.dir() / "big.yaml").string(), "");
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(spec.status().message().find("at most 2000"), std::string::npos) << spec.status();
  std::ofstream(job_.dir() / "huge.yaml") << big + "# " + std::string(100 << 10, 'y') + "\n";
  auto request = As(testing::kAliceToken).Submit((job_.dir() / "huge.yaml").string(), "");
  EXPECT_EQ(request.status().code(), absl::StatusCode::kResourceExhausted) << request.status();
}

// With auth on, the embedded worker gets an internal worker token: a submitted job leaves
// QUEUED (it is handed to the local worker; /bin/false as trainer then fails it).
TEST_F(JobAccessTest, EmbeddedWorkerAuthenticatesItself) {
  StartServer();
  StartLocalWorker("/bin/false");
  JobClient alice = As(testing::kAliceToken);
  auto id = alice.Submit(JobFile(), "");
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_NE(FirstStateAfterQueued(testing::kAliceToken, *id, absl::Seconds(20)), v1::QUEUED);
}

// One worker's token cannot sync or report as a worker another token registered.
TEST_F(JobAccessTest, WorkerIdsAreBoundToTheTokenThatRegisteredThem) {
  StartServer();
  GrpcServerClient one(testing::TokenChannelMaker(server_->port(), testing::kWorkerToken));
  GrpcServerClient two(testing::TokenChannelMaker(server_->port(), testing::kWorker2Token));
  WorkerRegistration reg;
  reg.name = "one";
  reg.slots = 1;
  auto id = one.Register(reg);
  ASSERT_TRUE(id.ok()) << id.status();
  WorkerSync sync;
  sync.worker_id = *id;
  sync.wait_ms = 0;
  EXPECT_TRUE(one.Sync(sync).ok());
  auto stolen = two.Sync(sync);
  EXPECT_EQ(stolen.status().code(), absl::StatusCode::kPermissionDenied) << stolen.status();
  RankEventBatch report;
  report.worker_id = *id;
  EXPECT_EQ(two.Report(report).status().code(), absl::StatusCode::kPermissionDenied);
}

// A handler that never asks GrpcAuth (the health service, under a table that has no row for
// it; the generated JobService base class, whose handlers just say UNIMPLEMENTED) still cannot
// answer a denied call: the interceptor empties its reply and replaces its status.
TEST(GrpcAuthTest, DeniedCallFailsClosedEvenIfTheHandlerNeverAsks) {
  TokenAuthenticator tokens({});
  Authorizer no_health({MethodPolicy{"/lmtrain.v1.JobService/GetJob", false, {Role::kUser}, ""}});
  GrpcAuth auth(&tokens, &no_health);
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  v1::JobService::Service unimplemented;
  builder.RegisterService(&unimplemented);
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> creators;
  creators.push_back(auth.NewInterceptorFactory());
  builder.experimental().SetInterceptorCreators(std::move(creators));
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(port, 0);
  const grpc::Status got =
      testing::CallByName(testing::TokenChannel(port, ""), "/grpc.health.v1.Health/Check", "");
  EXPECT_EQ(got.error_code(), grpc::StatusCode::PERMISSION_DENIED) << got.error_message();
  const grpc::Status get =
      testing::CallByName(testing::TokenChannel(port, ""), "/lmtrain.v1.JobService/GetJob", "");
  EXPECT_EQ(get.error_code(), grpc::StatusCode::UNAUTHENTICATED) << get.error_message();
  server->Shutdown();
}

}  // namespace
}  // namespace lmtrain
