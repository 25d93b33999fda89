// ArtifactServiceImpl: lmtrain.v1.ArtifactService over gRPC's sync API. A thin adapter over
// ArtifactStore (uploads, downloads, stat) and FindCheckpointFiles (checkpoint downloads of a
// job's output dir, found through JobManager). Streams hold their handler thread.
//
// Callers (server/auth/authorizer.cc): StatArtifact and UploadArtifact are user-level;
// DownloadCheckpoint is user-level on the caller's own jobs (admins: all); DownloadArtifact is
// for workers (they fetch what a job names) and users. With authentication on, uploads are
// charged to the token's user; off, to the request's `user` field.
#pragma once

#include <string>

#include "lmtrain/v1/artifacts.grpc.pb.h"
#include "server/artifacts/artifact_store.h"
#include "server/auth/grpc_auth.h"
#include "server/job_manager.h"

namespace lmtrain {

inline constexpr size_t kMaxArtifactChunk = 1 << 20;  // 1 MiB per stream message.

class ArtifactServiceImpl final : public v1::ArtifactService::Service {
 public:
  // `artifacts_dir`: every job's output dir lies under it; checkpoints elsewhere are refused.
  // `auth` null: authentication off (tests of the store alone).
  ArtifactServiceImpl(ArtifactStore* store, JobManager* jobs, std::string artifacts_dir,
                      const GrpcAuth* auth = nullptr)
      : store_(store), jobs_(jobs), artifacts_dir_(std::move(artifacts_dir)), auth_(auth) {}

  grpc::Status StatArtifact(grpc::ServerContext*, const v1::StatArtifactRequest* req,
                            v1::StatArtifactResponse* resp) override;
  grpc::Status UploadArtifact(grpc::ServerContext* ctx,
                              grpc::ServerReader<v1::UploadArtifactRequest>* reader,
                              v1::UploadArtifactResponse* resp) override;
  grpc::Status DownloadArtifact(grpc::ServerContext* ctx, const v1::DownloadArtifactRequest* req,
                                grpc::ServerWriter<v1::ArtifactChunk>* writer) override;
  grpc::Status DownloadCheckpoint(grpc::ServerContext* ctx,
                                  const v1::DownloadCheckpointRequest* req,
                                  grpc::ServerWriter<v1::CheckpointFileChunk>* writer) override;

 private:
  ArtifactStore* const store_;
  JobManager* const jobs_;
  const std::string artifacts_dir_;
  const GrpcAuth* const auth_;
  absl::StatusOr<Principal> Caller(const grpc::ServerContext* ctx) const;
};

}  // namespace lmtrain
