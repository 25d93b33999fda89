// The authorization matrix: a real lm-server with a tokens file; EVERY method of
// EVERY lmtrain.v1 service linked into the server (found in the generated descriptor pool, so
// RPCs added later are covered without editing this file) x {anonymous, other user, owner,
// worker, admin}, called over a real channel by name with a minimal request.
//
// Expectations come from the rules, not from copying the table:
//   - a method without a policy row fails the test (and is denied to everyone at run time);
//   - a method users may call whose request has a `job_id` field must have an ownership rule;
//   - workers may call no JobService method, users and admins no WorkerService method;
//   - anonymous -> UNAUTHENTICATED; role not allowed / another user's job -> PERMISSION_DENIED;
//   - allowed -> anything but UNAUTHENTICATED and PERMISSION_DENIED (it got past auth).
#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor_database.h>
#include <google/protobuf/dynamic_message.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "client/job_client.h"
#include "server/auth/authorizer.h"
#include "tests/server/auth/secure_server.h"
#include "tests/server/server_test_util.h"

namespace lmtrain {
namespace {

using google::protobuf::DescriptorPool;
using google::protobuf::MethodDescriptor;
using testing::TempDir;

using testing::CallerCase;
using testing::kCallers;
using testing::Who;

Role RoleOf(Who who) {
  switch (who) {
    case Who::kAnonymous:
      return Role::kAnonymous;
    case Who::kOtherUser:
    case Who::kOwner:
      return Role::kUser;
    case Who::kWorker:
      return Role::kWorker;
    case Who::kAdmin:
      return Role::kAdmin;
  }
  return Role::kAnonymous;
}

// Every method of every service in package lmtrain.v1 that this binary links (the server's).
std::vector<const MethodDescriptor*> LmtrainMethods() {
  std::vector<std::string> files;
  DescriptorPool::internal_generated_database()->FindAllFileNames(&files);
  std::vector<const MethodDescriptor*> methods;
  for (const std::string& name : files) {
    const auto* file = DescriptorPool::generated_pool()->FindFileByName(name);
    if (file == nullptr || file->package() != "lmtrain.v1") continue;
    for (int s = 0; s < file->service_count(); ++s) {
      for (int m = 0; m < file->service(s)->method_count(); ++m) {
        methods.push_back(file->service(s)->method(m));
      }
    }
  }
  return methods;
}

std::string FullName(const MethodDescriptor* m) {
  return "/" + m->service()->full_name() + "/" + m->name();
}

// The code a caller must get (OK here means: anything that is not an auth denial).
grpc::StatusCode Expected(const MethodPolicy* policy, Who who) {
  if (policy == nullptr) return grpc::StatusCode::PERMISSION_DENIED;
  if (policy->is_public) return grpc::StatusCode::OK;
  if (who == Who::kAnonymous) return grpc::StatusCode::UNAUTHENTICATED;
  if (std::find(policy->roles.begin(), policy->roles.end(), RoleOf(who)) == policy->roles.end()) {
    return grpc::StatusCode::PERMISSION_DENIED;
  }
  if (!policy->job_field.empty() && who == Who::kOtherUser) {
    return grpc::StatusCode::PERMISSION_DENIED;
  }
  return grpc::StatusCode::OK;
}

// A minimal request: empty, with the policy's job field naming `job_id` when there is one.
std::string MinimalRequest(const MethodDescriptor* method, const MethodPolicy* policy,
                           const std::string& job_id) {
  google::protobuf::DynamicMessageFactory factory;
  std::unique_ptr<google::protobuf::Message> request(
      factory.GetPrototype(method->input_type())->New());
  if (policy != nullptr && !policy->job_field.empty()) {
    const auto* field = method->input_type()->FindFieldByName(policy->job_field);
    if (field != nullptr && field->type() == google::protobuf::FieldDescriptor::TYPE_STRING) {
      request->GetReflection()->SetString(request.get(), field, job_id);
    }
  }
  return request->SerializeAsString();
}

class AuthzMatrixTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Server::Options o;
    o.listen = "127.0.0.1:0";
    o.data_dir = (dir_.path() / "data").string();
    o.auth_tokens_file = dir_.Write("tokens.yaml", testing::TokensYaml());
    auto server = Server::Start(o);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    JobClient alice(testing::TokenChannel(server_->port(), testing::kAliceToken));
    auto id = alice.Submit(WriteJob(), "");
    ASSERT_TRUE(id.ok()) << id.status();
    alice_job_ = *id;
  }

  std::string WriteJob() {
    const SubmitRequest r = job_.Request();
    std::ofstream(job_.dir() / "job.yaml") << r.spec_yaml;
    return (job_.dir() / "job.yaml").string();
  }

  TempDir dir_{"authz"};
  testing::JobFolder job_;
  std::unique_ptr<Server> server_;
  std::string alice_job_;
};

TEST_F(AuthzMatrixTest, EveryMethodHasAPolicyAndOwnershipWhereItNamesAJob) {
  const Authorizer authorizer;
  const std::vector<const MethodDescriptor*> methods = LmtrainMethods();
  ASSERT_GE(methods.size(), 8u) << "lmtrain.v1 services not found in the descriptor pool";
  for (const MethodDescriptor* m : methods) {
    const std::string name = FullName(m);
    const MethodPolicy* policy = authorizer.Find(name);
    ASSERT_NE(policy, nullptr) << name << " has no row in the policy table "
                               << "(server/auth/authorizer.cc, DefaultPolicies)";
    const bool users_may_call =
        std::count(policy->roles.begin(), policy->roles.end(), Role::kUser) > 0;
    if (users_may_call && m->input_type()->FindFieldByName("job_id") != nullptr) {
      EXPECT_EQ(policy->job_field, "job_id") << name << " names a job but has no ownership rule";
    }
    EXPECT_FALSE(policy->is_public) << name << ": lmtrain.v1 methods are never public";
    const bool worker = std::count(policy->roles.begin(), policy->roles.end(), Role::kWorker) > 0;
    const bool user_or_admin =
        std::count(policy->roles.begin(), policy->roles.end(), Role::kUser) > 0 ||
        std::count(policy->roles.begin(), policy->roles.end(), Role::kAdmin) > 0;
    if (m->service()->name() == "JobService") {
      EXPECT_FALSE(worker) << "workers may not call " << name;
    }
    if (m->service()->name() == "WorkerService") {
      EXPECT_FALSE(user_or_admin) << "users and admins may not call " << name;
    }
  }
}

TEST_F(AuthzMatrixTest, EveryMethodTimesEveryCaller) {
  const Authorizer authorizer;
  int calls = 0;
  for (const MethodDescriptor* m : LmtrainMethods()) {
    const std::string name = FullName(m);
    const MethodPolicy* policy = authorizer.Find(name);
    const std::string request = MinimalRequest(m, policy, alice_job_);
    for (const CallerCase& caller : kCallers) {
      const grpc::Status got = testing::CallByName(
          testing::TokenChannel(server_->port(), caller.token), name, request, 3000);
      const grpc::StatusCode want = Expected(policy, caller.who);
      ++calls;
      if (want == grpc::StatusCode::OK) {
        EXPECT_NE(got.error_code(), grpc::StatusCode::UNAUTHENTICATED)
            << name << " as " << caller.name << ": " << got.error_message();
        EXPECT_NE(got.error_code(), grpc::StatusCode::PERMISSION_DENIED)
            << name << " as " << caller.name << ": " << got.error_message();
      } else {
        EXPECT_EQ(got.error_code(), want)
            << name << " as " << caller.name << ": " << got.error_message();
      }
    }
  }
  EXPECT_GE(calls, 40);
}

TEST_F(AuthzMatrixTest, HealthIsPublicAndUnknownMethodsAreRefused) {
  auto anonymous = testing::TokenChannel(server_->port(), "");
  EXPECT_TRUE(testing::CallByName(anonymous, "/grpc.health.v1.Health/Check", "").ok());
  const grpc::Status unknown =
      testing::CallByName(testing::TokenChannel(server_->port(), testing::kAdminToken),
                          "/lmtrain.v1.JobService/NoSuchMethod", "");
  EXPECT_TRUE(unknown.error_code() == grpc::StatusCode::PERMISSION_DENIED ||
              unknown.error_code() == grpc::StatusCode::UNIMPLEMENTED)
      << unknown.error_code() << " " << unknown.error_message();
}

}  // namespace
}  // namespace lmtrain
