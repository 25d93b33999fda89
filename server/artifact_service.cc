#include "server/artifact_service.h"

#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>

#include "absl/strings/str_cat.h"
#include "proto/grpc_status.h"
#include "server/artifacts/checkpoint_files.h"
#include "server/artifacts/data_roots.h"

namespace lmtrain {
namespace {

// Streams `path` from `offset` in chunks; `emit(data, first)` returns false when the client
// is gone.
absl::Status StreamFile(const std::string& path, int64_t offset,
                        const std::function<bool(std::string, bool)>& emit) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  in.seekg(offset);
  std::string buf(kMaxArtifactChunk, '\0');
  bool first = true;
  while (true) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const std::streamsize n = in.gcount();
    if (n <= 0 && !first) break;
    if (!emit(buf.substr(0, static_cast<size_t>(n)), first)) {
      return absl::CancelledError("client went away");
    }
    first = false;
    if (n < static_cast<std::streamsize>(buf.size())) break;
  }
  if (in.bad()) return absl::DataLossError(absl::StrCat("cannot read ", path));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Principal> ArtifactServiceImpl::Caller(const grpc::ServerContext* ctx) const {
  return auth_ == nullptr ? Principal::AuthDisabled() : auth_->Caller(ctx);
}

grpc::Status ArtifactServiceImpl::StatArtifact(grpc::ServerContext* ctx,
                                               const v1::StatArtifactRequest* req,
                                               v1::StatArtifactResponse* resp) {
  if (auto caller = Caller(ctx); !caller.ok()) return ToGrpcStatus(caller.status());
  auto stat = store_->Stat(req->sha256());
  if (!stat.ok()) return ToGrpcStatus(stat.status());
  resp->set_exists(stat->exists);
  resp->set_size(stat->size);
  resp->set_bytes_received_for_partial(stat->partial_bytes);
  return grpc::Status::OK;
}

grpc::Status ArtifactServiceImpl::UploadArtifact(
    grpc::ServerContext* ctx, grpc::ServerReader<v1::UploadArtifactRequest>* reader,
    v1::UploadArtifactResponse* resp) {
  absl::StatusOr<Principal> caller = Caller(ctx);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  v1::UploadArtifactRequest msg;
  if (!reader->Read(&msg) || !msg.has_header()) {
    return ToGrpcStatus(absl::InvalidArgumentError("upload: the first message must be a header"));
  }
  const v1::UploadArtifactHeader h = msg.header();
  resp->set_size(h.size());
  const std::string user = caller->authenticated ? caller->user : h.user();
  auto upload = store_->BeginUpload(user, h.sha256(), h.size(), h.offset());
  if (absl::IsAlreadyExists(upload.status())) {
    resp->set_already_existed(true);
    return grpc::Status::OK;
  }
  if (!upload.ok()) return ToGrpcStatus(upload.status());
  while (reader->Read(&msg)) {
    if (!msg.has_chunk() || msg.chunk().size() > kMaxArtifactChunk) {
      return ToGrpcStatus(absl::InvalidArgumentError(absl::StrCat(
          "upload: after the header only chunks of at most ", kMaxArtifactChunk, " bytes")));
    }
    absl::Status s = (*upload)->Append(msg.chunk());
    if (!s.ok()) return ToGrpcStatus(s);
  }
  // The stream ended: complete (verify + publish) or cut short (bytes kept for a resume).
  return ToGrpcStatus((*upload)->Finish());
}

grpc::Status ArtifactServiceImpl::DownloadArtifact(grpc::ServerContext* ctx,
                                                   const v1::DownloadArtifactRequest* req,
                                                   grpc::ServerWriter<v1::ArtifactChunk>* writer) {
  if (auto caller = Caller(ctx); !caller.ok()) return ToGrpcStatus(caller.status());
  auto path = store_->BlobPath(req->sha256());
  if (!path.ok()) return ToGrpcStatus(path.status());
  auto stat = store_->Stat(req->sha256());
  if (!stat.ok()) return ToGrpcStatus(stat.status());
  if (req->offset() < 0 || req->offset() > stat->size) {
    return ToGrpcStatus(absl::OutOfRangeError(
        absl::StrCat("offset ", req->offset(), " outside artifact of ", stat->size, " bytes")));
  }
  return ToGrpcStatus(StreamFile(*path, req->offset(), [&](std::string data, bool first) {
    v1::ArtifactChunk chunk;
    if (first) chunk.set_size(stat->size);
    *chunk.mutable_data() = std::move(data);
    return !ctx->IsCancelled() && writer->Write(chunk);
  }));
}

grpc::Status ArtifactServiceImpl::DownloadCheckpoint(
    grpc::ServerContext* ctx, const v1::DownloadCheckpointRequest* req,
    grpc::ServerWriter<v1::CheckpointFileChunk>* writer) {
  absl::StatusOr<Principal> caller = Caller(ctx);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (absl::Status access = jobs_->CheckAccess(*caller, req->job_id()); !access.ok()) {
    return ToGrpcStatus(access);
  }
  auto job = jobs_->Get(req->job_id());
  if (!job.ok()) return ToGrpcStatus(job.status());
  if (job->output_dir.empty() || !IsUnderRoot(job->output_dir, artifacts_dir_)) {
    return ToGrpcStatus(absl::FailedPreconditionError(
        absl::StrCat("job ", req->job_id(), " has no output folder under the artifacts dir yet")));
  }
  std::optional<int64_t> step;
  if (req->step() > 0) step = req->step();
  auto files = FindCheckpointFiles(job->output_dir, step);
  if (!files.ok()) return ToGrpcStatus(files.status());
  bool first_message = true;
  for (const std::string& rel : files->files) {
    const std::string path = absl::StrCat(files->dir, "/", rel);
    absl::Status s = StreamFile(path, 0, [&](std::string data, bool first) {
      v1::CheckpointFileChunk chunk;
      if (first_message) chunk.set_step(files->step);
      first_message = false;
      if (first) {
        chunk.set_path(rel);
        std::error_code ec;
        chunk.set_size(static_cast<int64_t>(std::filesystem::file_size(path, ec)));
      }
      *chunk.mutable_data() = std::move(data);
      return !ctx->IsCancelled() && writer->Write(chunk);
    });
    if (!s.ok()) return ToGrpcStatus(s);
  }
  return grpc::Status::OK;
}

}  // namespace lmtrain
