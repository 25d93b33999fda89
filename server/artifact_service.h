// ArtifactServiceImpl: lmtrain.v1.ArtifactService over gRPC's sync API. A thin adapter over
// ArtifactStore (uploads, downloads, stat) and FindCheckpointFiles (checkpoint downloads of a
// job's output dir, found through JobManager). Streams hold their handler thread.
//
// Callers (for the authorization matrix): StatArtifact, UploadArtifact, DownloadCheckpoint are
// user-level; DownloadArtifact is worker-level (workers fetch what a job names) and user-level.
// The caller's user comes from the request's `user` field, as in SubmitJobRequest.
#pragma once

#include <string>

#include "lmtrain/v1/artifacts.grpc.pb.h"
#include "server/artifacts/artifact_store.h"
#include "server/job_manager.h"

namespace lmtrain {

inline constexpr size_t kMaxArtifactChunk = 1 << 20;  // 1 MiB per stream message.

class ArtifactServiceImpl final : public v1::ArtifactService::Service {
 public:
  // `artifacts_dir`: every job's output dir lies under it; checkpoints elsewhere are refused.
  ArtifactServiceImpl(ArtifactStore* store, JobManager* jobs, std::string artifacts_dir)
      : store_(store), jobs_(jobs), artifacts_dir_(std::move(artifacts_dir)) {}

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
};

}  // namespace lmtrain
