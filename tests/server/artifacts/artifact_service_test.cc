// ArtifactService over real gRPC on loopback: ArtifactClient uploads (skip, resume), chunk
// limits, verified downloads, and the worker's ArtifactCache materialising a spec.
#include "server/artifact_service.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "artifacts/artifact_client.h"
#include "artifacts/folder_manifest.h"
#include "client/spec_uploader.h"
#include "common/sha256.h"
#include "worker/agent/artifact_cache.h"

namespace lmtrain {
namespace {
namespace fs = std::filesystem;

std::string Hex(const std::string& bytes) { return DigestHex(*Sha256Of(bytes)); }

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

class ArtifactServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lmtrain-artifact-service-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    store_ = std::move(*ArtifactStore::Open({(dir_ / "server").string(), 64 << 20, 0}));
    service_ =
        std::make_unique<ArtifactServiceImpl>(store_.get(), nullptr, (dir_ / "server").string());
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(service_.get());
    builder.SetMaxReceiveMessageSize(16 << 20);
    server_ = builder.BuildAndStart();
    ASSERT_NE(port_, 0);
  }
  void TearDown() override {
    server_->Shutdown();
    fs::remove_all(dir_);
  }
  std::string Target() const { return "127.0.0.1:" + std::to_string(port_); }

  fs::path dir_;
  std::unique_ptr<ArtifactStore> store_;
  std::unique_ptr<ArtifactServiceImpl> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

TEST_F(ArtifactServiceTest, UploadSkipsStoredBlobsAndResumesAnInterruptedOne) {
  std::string data;
  for (int i = 0; i < 200000; ++i) data += "token " + std::to_string(i) + "\n";  // ~2.3 MB
  const std::string hex = Hex(data);
  WriteFile(dir_ / "client/big.txt", data);

  // A stream cut after the header and 1 MiB (the client went away): the server keeps it.
  auto stub = v1::ArtifactService::NewStub(
      grpc::CreateChannel(Target(), grpc::InsecureChannelCredentials()));
  {
    grpc::ClientContext ctx;
    v1::UploadArtifactResponse resp;
    auto writer = stub->UploadArtifact(&ctx, &resp);
    v1::UploadArtifactRequest msg;
    msg.mutable_header()->set_sha256(hex);
    msg.mutable_header()->set_size(static_cast<int64_t>(data.size()));
    ASSERT_TRUE(writer->Write(msg));
    msg.set_chunk(data.substr(0, 1 << 20));
    ASSERT_TRUE(writer->Write(msg));
    writer->WritesDone();
    grpc::Status s = writer->Finish();
    EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  }
  ArtifactClient client(Target(), {});
  auto stat = client.Stat(hex);
  ASSERT_TRUE(stat.ok());
  EXPECT_FALSE(stat->exists());
  EXPECT_EQ(stat->bytes_received_for_partial(), 1 << 20);

  auto resumed = client.UploadFile((dir_ / "client/big.txt").string(), hex);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(resumed->resumed_from, 1 << 20);
  EXPECT_EQ(resumed->bytes_sent, static_cast<int64_t>(data.size()) - (1 << 20));
  EXPECT_EQ(ReadFile(*store_->BlobPath(hex)), data);

  auto again = client.UploadFile((dir_ / "client/big.txt").string(), hex);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->already_stored);
  EXPECT_EQ(again->bytes_sent, 0);

  ASSERT_TRUE(client.Fetch(hex, (dir_ / "fetched").string()).ok());
  EXPECT_EQ(ReadFile(dir_ / "fetched"), data);
  EXPECT_TRUE(absl::IsNotFound(client.Fetch(Hex("absent"), (dir_ / "x").string())));
}

TEST_F(ArtifactServiceTest, WrongHashAndOversizedChunksAreRefused) {
  WriteFile(dir_ / "client/a.txt", "real content");
  ArtifactClient client(Target(), {});
  auto wrong = client.UploadFile((dir_ / "client/a.txt").string(), Hex("claimed content"));
  EXPECT_TRUE(absl::IsDataLoss(wrong.status())) << wrong.status();
  EXPECT_FALSE(store_->Stat(Hex("claimed content"))->exists);

  const std::string big((1 << 20) + 1, 'b');
  auto stub = v1::ArtifactService::NewStub(
      grpc::CreateChannel(Target(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  v1::UploadArtifactResponse resp;
  auto writer = stub->UploadArtifact(&ctx, &resp);
  v1::UploadArtifactRequest msg;
  msg.mutable_header()->set_sha256(Hex(big));
  msg.mutable_header()->set_size(static_cast<int64_t>(big.size()));
  writer->Write(msg);
  msg.set_chunk(big);
  writer->Write(msg);
  writer->WritesDone();
  EXPECT_EQ(writer->Finish().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(ArtifactServiceTest, SpecInputsTravelToTheWorkerCache) {
  // A job whose data file, GLUE-style folder and GPT-2 tokenizer files live on the client.
  const fs::path local = dir_ / "laptop";
  WriteFile(local / "train.txt", "hello world\n");
  WriteFile(local / "glue/train.tsv", "a\tb\n");
  WriteFile(local / "glue/sub/dev.tsv", "c\td\n");
  WriteFile(local / "tok/vocab.json", "{\"a\": 0}");
  WriteFile(local / "tok/merges.txt", "#version: 0.2\n");
  ParseOptions parse;
  parse.base_dir = local.string();
  auto spec = ParseJobSpec(
      "name: t\ntask: glue\n"
      "model:\n  config: {model_type: gpt2, n_layer: 1, n_head: 2, n_embd: 8, n_positions: 32}\n"
      "tokenizer: {path: tok/vocab.json}\n"
      "data: {task_name: mrpc, data_dir: glue, train_file: train.txt}\n",
      parse);
  ASSERT_TRUE(spec.ok()) << spec.status();
  ArtifactClient client(Target(), {});
  std::ostringstream log;
  auto uploaded = UploadJobInputs(*spec, client, log);
  ASSERT_TRUE(uploaded.ok()) << uploaded.status();
  EXPECT_EQ(uploaded->data.train_file, "artifact:sha256:" + Hex("hello world\n"));
  EXPECT_EQ(uploaded->data.data_dir.rfind("artifact:sha256:", 0), 0u);
  EXPECT_EQ(uploaded->tokenizer.path.substr(80), "/vocab.json");
  // A second submit sends nothing new.
  std::ostringstream log2;
  auto twice = UploadJobInputs(*spec, client, log2);
  ASSERT_TRUE(twice.ok());
  EXPECT_EQ(twice->data.data_dir, uploaded->data.data_dir);
  EXPECT_EQ(log2.str().find(", sent "), std::string::npos) << log2.str();

  // The client's files are gone; the worker only has the server.
  fs::remove_all(local);
  ArtifactCache cache(&client, (dir_ / "worker-cache").string());
  auto local_spec = cache.LocalizeSpec(JobSpecToYaml(*uploaded));
  ASSERT_TRUE(local_spec.ok()) << local_spec.status();
  ParseOptions options;
  options.base_dir = "/";
  auto parsed = ParseJobSpec(*local_spec, options);  // check_files: the paths exist now.
  ASSERT_TRUE(parsed.ok()) << parsed.status() << "\n" << *local_spec;
  EXPECT_EQ(ReadFile(parsed->data.train_file), "hello world\n");
  EXPECT_EQ(ReadFile(fs::path(parsed->data.data_dir) / "sub/dev.tsv"), "c\td\n");
  EXPECT_EQ(ReadFile(fs::path(parsed->tokenizer.path).parent_path() / "merges.txt"),
            "#version: 0.2\n");
  EXPECT_EQ(parsed->data.train_file.rfind((dir_ / "worker-cache/blobs/sha256").string(), 0), 0u);
  // Resolving again uses the cache (the server is not asked: it is gone).
  server_->Shutdown();
  EXPECT_EQ(*cache.LocalizeSpec(JobSpecToYaml(*uploaded)), *local_spec);
}

TEST_F(ArtifactServiceTest, CacheRefusesABlobWhoseBytesDoNotMatch) {
  class LyingFetcher : public ArtifactFetcher {
   public:
    absl::Status Fetch(const std::string& hex, const std::string& dest) override {
      std::ofstream(dest) << "not it";
      return absl::DataLossError("downloaded artifact has SHA-256 ..., expected " + hex);
    }
  } fetcher;
  ArtifactCache cache(&fetcher, (dir_ / "cache").string());
  auto blob = cache.Blob(Hex("x"));
  EXPECT_TRUE(absl::IsDataLoss(blob.status()));
  EXPECT_FALSE(fs::exists(dir_ / "cache/blobs/sha256" / Hex("x").substr(0, 2) / Hex("x")));
}

}  // namespace
}  // namespace lmtrain

namespace lmtrain {
namespace {

TEST(UploadMode, AutoUploadsUnlessTheServerIsLoopback) {
  for (const char* local : {"127.0.0.1:50051", "localhost:50051", "[::1]:50051", "127.1.2.3:1",
                            "unix:/run/lm.sock", "dns:///localhost:50051"}) {
    EXPECT_TRUE(IsLoopbackTarget(local)) << local;
  }
  for (const char* remote : {"10.0.0.5:50051", "lm-server.cluster:50051", "[2001:db8::1]:50051",
                             "dns:///lm-server:50051"}) {
    EXPECT_FALSE(IsLoopbackTarget(remote)) << remote;
  }
  EXPECT_EQ(*ParseUploadMode("always"), UploadMode::kAlways);
  EXPECT_TRUE(absl::IsInvalidArgument(ParseUploadMode("sometimes").status()));
}

}  // namespace
}  // namespace lmtrain
