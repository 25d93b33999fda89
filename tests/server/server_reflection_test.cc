// gRPC server reflection on a real lm-server process: what grpcurl and generic clients use
// to discover lmtrain.v1.JobService. The reflection messages are built and read with
// protobuf's schema-less UnknownFieldSet, by the field numbers of the public
// grpc.reflection.v1alpha reflection.proto (the .proto itself is not installed by Debian):
//   ServerReflectionRequest  4: file_containing_symbol (string)  7: list_services (string)
//   ServerReflectionResponse 4: file_descriptor_response { 1: repeated bytes file_descriptor_proto
//   }
//                            6: list_services_response { 1: repeated ServiceResponse { 1: name } }
//                            7: error_response { 1: error_code, 2: error_message }
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/unknown_field_set.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <set>

#include "absl/status/status.h"
#include "tests/integration/cluster.h"

namespace lmtrain::testing {
namespace {

using google::protobuf::UnknownField;
using google::protobuf::UnknownFieldSet;

constexpr char kMethod[] = "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo";

// One request, one response on the bidirectional reflection stream (async generic stub).
absl::Status Ask(grpc::Channel* channel, const UnknownFieldSet& request, UnknownFieldSet* fields) {
  std::string bytes;
  request.SerializeToString(&bytes);
  grpc::GenericStub stub(std::shared_ptr<grpc::Channel>(channel, [](grpc::Channel*) {}));
  grpc::CompletionQueue cq;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  auto call = stub.PrepareCall(&ctx, kMethod, &cq);
  void* tag;
  bool ok;
  auto step = [&](intptr_t want) { return cq.Next(&tag, &ok) && ok && tag == (void*)want; };
  call->StartCall((void*)1);
  if (!step(1)) return absl::UnavailableError("reflection call did not start");
  grpc::Slice slice(bytes);
  grpc::ByteBuffer out(&slice, 1);
  call->Write(out, (void*)2);
  if (!step(2)) return absl::UnavailableError("reflection write failed");
  grpc::ByteBuffer in;
  call->Read(&in, (void*)3);
  if (!step(3)) return absl::UnavailableError("reflection read failed");
  call->WritesDone((void*)4);
  step(4);
  grpc::Status status;
  call->Finish(&status, (void*)5);
  step(5);
  std::vector<grpc::Slice> slices;
  if (!in.Dump(&slices).ok()) return absl::InternalError("cannot read the response");
  std::string response;
  for (const grpc::Slice& s : slices)
    response.append(reinterpret_cast<const char*>(s.begin()), s.size());
  if (!fields->ParseFromString(response)) return absl::InternalError("unparsable response");
  return absl::OkStatus();
}

const UnknownField* FieldOf(const UnknownFieldSet& set, int number) {
  for (int i = 0; i < set.field_count(); ++i) {
    if (set.field(i).number() == number) return &set.field(i);
  }
  return nullptr;
}

// For failure messages: the response's top-level field numbers and any error_message.
std::string Describe(const UnknownFieldSet& set) {
  std::string out;
  for (int i = 0; i < set.field_count(); ++i) {
    out += "field " + std::to_string(set.field(i).number()) + " ";
    if (set.field(i).number() == 7) {
      UnknownFieldSet error;
      error.ParseFromString(set.field(i).length_delimited());
      if (const UnknownField* m = FieldOf(error, 2)) out += "'" + m->length_delimited() + "' ";
    }
  }
  return out;
}

TEST(ServerReflectionTest, ListsJobServiceAndItsMethods) {
  auto cluster = Cluster::Start(/*worker_slots=*/0);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  auto channel = grpc::CreateChannel((*cluster)->address(), grpc::InsecureChannelCredentials());

  UnknownFieldSet list;
  list.AddLengthDelimited(7, "*");
  UnknownFieldSet listed;
  ASSERT_TRUE(Ask(channel.get(), list, &listed).ok());
  const UnknownField* services = FieldOf(listed, 6);
  ASSERT_NE(services, nullptr) << "no list_services_response";
  UnknownFieldSet service_list;
  ASSERT_TRUE(service_list.ParseFromString(services->length_delimited()));
  std::set<std::string> names;
  for (int i = 0; i < service_list.field_count(); ++i) {
    UnknownFieldSet service;
    ASSERT_TRUE(service.ParseFromString(service_list.field(i).length_delimited()));
    names.insert(FieldOf(service, 1)->length_delimited());
  }
  EXPECT_TRUE(names.count("lmtrain.v1.JobService")) << names.size();
  EXPECT_TRUE(names.count("lmtrain.v1.WorkerService"));
  EXPECT_TRUE(names.count("grpc.health.v1.Health"));

  UnknownFieldSet file_request;
  file_request.AddLengthDelimited(4, "lmtrain.v1.JobService");
  UnknownFieldSet file;
  ASSERT_TRUE(Ask(channel.get(), file_request, &file).ok());
  const UnknownField* descriptors = FieldOf(file, 4);
  ASSERT_NE(descriptors, nullptr) << "no file_descriptor_response: " << Describe(file);
  UnknownFieldSet protos;
  ASSERT_TRUE(protos.ParseFromString(descriptors->length_delimited()));
  std::set<std::string> methods;
  for (int i = 0; i < protos.field_count(); ++i) {
    google::protobuf::FileDescriptorProto proto;
    ASSERT_TRUE(proto.ParseFromString(protos.field(i).length_delimited()));
    for (const auto& service : proto.service()) {
      if (service.name() != "JobService") continue;
      EXPECT_EQ(proto.package(), "lmtrain.v1");
      for (const auto& method : service.method()) methods.insert(method.name());
    }
  }
  for (const char* m :
       {"SubmitJob", "GetJob", "ListJobs", "CancelJob", "WatchJob", "RetryJob", "ListWorkers",
        "Predict"}) {
    EXPECT_TRUE(methods.count(m)) << m;
  }

  UnknownFieldSet unknown;
  unknown.AddLengthDelimited(4, "lmtrain.v1.NoSuchService");
  UnknownFieldSet error;
  ASSERT_TRUE(Ask(channel.get(), unknown, &error).ok());
  EXPECT_NE(FieldOf(error, 7), nullptr) << "an unknown symbol must give error_response";
}

}  // namespace
}  // namespace lmtrain::testing
