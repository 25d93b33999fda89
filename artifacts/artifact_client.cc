#include "artifacts/artifact_client.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "artifacts/folder_manifest.h"
#include "common/sha256.h"
#include "common/status_macros.h"
#include "proto/grpc_status.h"

namespace lmtrain {
namespace fs = std::filesystem;
namespace {

absl::Status CheckFile(const std::string& dir, const nlohmann::json& entry) {
  if (!entry.is_object() || !entry.contains("path") || !entry["path"].is_string() ||
      !entry.contains("size") || !entry.contains("sha256")) {
    return absl::DataLossError(absl::StrCat(dir, "/manifest.json is unreadable"));
  }
  const std::string rel = entry["path"].get<std::string>();
  if (!IsCleanRelative(rel)) {
    return absl::DataLossError(absl::StrCat(dir, "/manifest.json lists a bad path '", rel, "'"));
  }
  const std::string path = absl::StrCat(dir, "/", rel);
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec) return absl::DataLossError(absl::StrCat(path, ": missing"));
  if (static_cast<int64_t>(size) != entry["size"].get<int64_t>()) {
    return absl::DataLossError(absl::StrCat(path, ": has ", size, " bytes, manifest.json says ",
                                            entry["size"].get<int64_t>()));
  }
  ASSIGN_OR_RETURN(Sha256Digest digest, Sha256OfFile(path));
  if (DigestHex(digest) != entry["sha256"].get<std::string>()) {
    return absl::DataLossError(absl::StrCat(path, ": has SHA-256 ", DigestHex(digest),
                                            ", manifest.json says ",
                                            entry["sha256"].get<std::string>()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> VerifyCheckpointFolder(const std::string& dir) {
  std::ifstream in(dir + "/manifest.json");
  if (!in) return false;
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false);
  if (!j.is_object() || !j.contains("files") || !j["files"].is_array()) {
    return absl::DataLossError(absl::StrCat(dir, "/manifest.json is unreadable"));
  }
  for (const nlohmann::json& entry : j["files"]) RETURN_IF_ERROR(CheckFile(dir, entry));
  return true;
}

ArtifactClient::ArtifactClient(const std::string& target, Options options)
    : ArtifactClient(grpc::CreateChannel(target, grpc::InsecureChannelCredentials()),
                     std::move(options)) {}

ArtifactClient::ArtifactClient(std::shared_ptr<grpc::Channel> channel, Options options)
    : stub_(v1::ArtifactService::NewStub(std::move(channel))), options_(std::move(options)) {}

absl::StatusOr<v1::StatArtifactResponse> ArtifactClient::Stat(const std::string& hex) {
  v1::StatArtifactRequest req;
  req.set_sha256(hex);
  req.set_user(options_.user);
  v1::StatArtifactResponse resp;
  grpc::ClientContext ctx;
  SetDeadlineMs(&ctx, options_.rpc_timeout_ms);
  RETURN_IF_ERROR(FromGrpcStatus(stub_->StatArtifact(&ctx, req, &resp), "stat artifact"));
  return resp;
}

absl::StatusOr<UploadResult> ArtifactClient::UploadFile(const std::string& path,
                                                        const std::string& hex) {
  std::ifstream in(path, std::ios::binary);
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (!in || ec) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  return Upload(in, hex, static_cast<int64_t>(size), path);
}

absl::StatusOr<UploadResult> ArtifactClient::UploadBytes(const std::string& bytes,
                                                         const std::string& hex) {
  std::istringstream in(bytes);
  return Upload(in, hex, static_cast<int64_t>(bytes.size()), "folder manifest");
}

absl::StatusOr<UploadResult> ArtifactClient::Upload(std::istream& in, const std::string& hex,
                                                    int64_t size, const std::string& what) {
  ASSIGN_OR_RETURN(v1::StatArtifactResponse stat, Stat(hex));
  UploadResult result;
  result.size = size;
  if (stat.exists()) {
    result.already_stored = true;
    return result;
  }
  result.resumed_from = std::min(stat.bytes_received_for_partial(), size);
  in.seekg(result.resumed_from);
  grpc::ClientContext ctx;
  v1::UploadArtifactResponse resp;
  auto writer = stub_->UploadArtifact(&ctx, &resp);
  v1::UploadArtifactRequest msg;
  v1::UploadArtifactHeader* h = msg.mutable_header();
  h->set_sha256(hex);
  h->set_size(size);
  h->set_offset(result.resumed_from);
  h->set_user(options_.user);
  bool ok = writer->Write(msg);
  std::string buf(std::min<size_t>(options_.chunk_bytes, 1 << 20), '\0');
  while (ok && in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const std::streamsize n = in.gcount();
    if (n <= 0) break;
    msg.set_chunk(buf.data(), static_cast<size_t>(n));
    ok = writer->Write(msg);
    if (ok) result.bytes_sent += n;
  }
  writer->WritesDone();
  RETURN_IF_ERROR(FromGrpcStatus(writer->Finish(), absl::StrCat("upload ", what)));
  result.already_stored = resp.already_existed();
  return result;
}

absl::Status ArtifactClient::Fetch(const std::string& hex, const std::string& dest) {
  v1::DownloadArtifactRequest req;
  req.set_sha256(hex);
  req.set_user(options_.user);
  grpc::ClientContext ctx;
  auto reader = stub_->DownloadArtifact(&ctx, req);
  std::ofstream out(dest, std::ios::binary | std::ios::trunc);
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", dest));
  Sha256 hash;
  v1::ArtifactChunk chunk;
  while (reader->Read(&chunk)) {
    hash.Update(chunk.data());
    out.write(chunk.data().data(), static_cast<std::streamsize>(chunk.data().size()));
  }
  out.close();
  absl::Status status = FromGrpcStatus(reader->Finish(), absl::StrCat("download sha256:", hex));
  if (status.ok() && !out) status = absl::InternalError(absl::StrCat("cannot write ", dest));
  if (status.ok()) {
    ASSIGN_OR_RETURN(Sha256Digest digest, hash.Finish());
    if (DigestHex(digest) != hex) {
      status = absl::DataLossError(
          absl::StrCat("downloaded artifact has SHA-256 ", DigestHex(digest), ", expected ", hex));
    }
  }
  if (!status.ok()) {
    std::error_code ec;
    fs::remove(dest, ec);
  }
  return status;
}

absl::StatusOr<DownloadedCheckpoint> ArtifactClient::DownloadCheckpoint(const std::string& job_id,
                                                                        int64_t step,
                                                                        const std::string& dir) {
  v1::DownloadCheckpointRequest req;
  req.set_job_id(job_id);
  req.set_step(step);
  req.set_user(options_.user);
  grpc::ClientContext ctx;
  auto reader = stub_->DownloadCheckpoint(&ctx, req);
  DownloadedCheckpoint result;
  std::ofstream out;
  v1::CheckpointFileChunk chunk;
  absl::Status local;
  while (local.ok() && reader->Read(&chunk)) {
    if (chunk.step() > 0) result.step = chunk.step();
    if (!chunk.path().empty()) {
      if (!IsCleanRelative(chunk.path())) {
        local = absl::DataLossError(absl::StrCat("server sent a bad path '", chunk.path(), "'"));
        break;
      }
      const fs::path path = fs::path(dir) / chunk.path();
      std::error_code ec;
      fs::create_directories(path.parent_path(), ec);
      out = std::ofstream(path, std::ios::binary | std::ios::trunc);
      if (!out) local = absl::InternalError(absl::StrCat("cannot write ", path.string()));
      ++result.files;
    }
    out.write(chunk.data().data(), static_cast<std::streamsize>(chunk.data().size()));
    result.bytes += static_cast<int64_t>(chunk.data().size());
  }
  out.close();
  if (!local.ok()) ctx.TryCancel();
  absl::Status status = FromGrpcStatus(reader->Finish(), absl::StrCat("download job ", job_id));
  RETURN_IF_ERROR(local);
  RETURN_IF_ERROR(status);
  ASSIGN_OR_RETURN(result.verified, VerifyCheckpointFolder(dir));
  return result;
}

}  // namespace lmtrain
