// ArtifactClient: the client side of lmtrain.v1.ArtifactService, shared by lmctl (uploads,
// checkpoint downloads) and lm-worker (fetching what a job names).
//
// Uploads are resumable: UploadFile() asks StatArtifact first; a stored blob is skipped, a
// partial one continues from the byte the server has. Downloads verify the SHA-256 (blobs) or
// the checkpoint's manifest.json (checkpoints) before reporting success.
// Thread-safe: gRPC stubs are; each call uses its own context.
#pragma once

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <istream>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "lmtrain/v1/artifacts.grpc.pb.h"

namespace lmtrain {

// What the worker's artifact cache needs from the server (a seam for tests).
class ArtifactFetcher {
 public:
  virtual ~ArtifactFetcher() = default;
  // Writes blob `hex` to `dest` (created or truncated) and checks its SHA-256. NotFound when
  // the server lacks it; DataLoss (and `dest` removed) when the bytes do not match.
  virtual absl::Status Fetch(const std::string& hex, const std::string& dest) = 0;
};

struct UploadResult {
  int64_t size = 0;
  int64_t bytes_sent = 0;    // 0 when the server had it.
  int64_t resumed_from = 0;  // Offset the upload started at (partial bytes kept earlier).
  bool already_stored = false;
};

struct DownloadedCheckpoint {
  int64_t step = 0;
  int files = 0;
  int64_t bytes = 0;
  bool verified = false;  // manifest.json present and every listed file matched.
};

class ArtifactClient final : public ArtifactFetcher {
 public:
  struct Options {
    std::string user;              // Sent as the request's user (until authentication).
    int rpc_timeout_ms = 10000;    // Unary calls; streams have none.
    size_t chunk_bytes = 1 << 20;  // <= 1 MiB (the server's limit).
  };
  ArtifactClient(const std::string& target, Options options);  // Plaintext, no token.
  // Over `channel` (e.g. ClientChannelFactory::NewChannel(): TLS and bearer token).
  ArtifactClient(std::shared_ptr<grpc::Channel> channel, Options options);

  absl::StatusOr<v1::StatArtifactResponse> Stat(const std::string& hex);
  // Uploads `path` (whose SHA-256 is `hex`) unless stored, resuming a partial upload.
  absl::StatusOr<UploadResult> UploadFile(const std::string& path, const std::string& hex);
  // The same for bytes in memory (folder manifests).
  absl::StatusOr<UploadResult> UploadBytes(const std::string& bytes, const std::string& hex);
  absl::Status Fetch(const std::string& hex, const std::string& dest) override;
  // Downloads job `job_id`'s checkpoint `step` (0: latest) into `dir` (created; files
  // overwritten) and verifies it against its manifest.json: DataLoss naming the file when
  // one is missing or differs.
  absl::StatusOr<DownloadedCheckpoint> DownloadCheckpoint(const std::string& job_id, int64_t step,
                                                          const std::string& dir);

 private:
  absl::StatusOr<UploadResult> Upload(std::istream& in, const std::string& hex, int64_t size,
                                      const std::string& what);

  std::unique_ptr<v1::ArtifactService::Stub> stub_;
  const Options options_;
};

// Checks `dir` against its checkpoint manifest.json ({"format": 1, "files": [{"path", "size",
// "sha256"}]}, docs/tasks.md). Returns false when there is no manifest.json; DataLoss naming
// the file when one is missing or differs.
absl::StatusOr<bool> VerifyCheckpointFolder(const std::string& dir);

}  // namespace lmtrain
