#include "client/spec_uploader.h"

#include <filesystem>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "artifacts/folder_manifest.h"
#include "common/artifact_ref.h"
#include "common/job_file.h"
#include "common/sha256.h"
#include "common/status_macros.h"

namespace lmtrain {
namespace fs = std::filesystem;
namespace {

void LogUpload(std::ostream& log, const std::string& what, const UploadResult& r) {
  log << "  " << what << ": " << r.size << " bytes, ";
  if (r.already_stored) {
    log << "already on the server\n";
  } else if (r.resumed_from > 0) {
    log << "resumed at byte " << r.resumed_from << ", sent " << r.bytes_sent << "\n";
  } else {
    log << "sent " << r.bytes_sent << "\n";
  }
}

absl::StatusOr<std::string> UploadOneFile(const std::string& path, ArtifactClient& client,
                                          std::ostream& log) {
  ASSIGN_OR_RETURN(Sha256Digest digest, Sha256OfFile(path));
  const std::string hex = DigestHex(digest);
  ASSIGN_OR_RETURN(UploadResult r, client.UploadFile(path, hex));
  LogUpload(log, path, r);
  return hex;
}

// Uploads the manifest's files (read from `dir`), then the manifest; returns its hash.
absl::StatusOr<std::string> UploadManifest(const std::string& dir, const FolderManifest& manifest,
                                           ArtifactClient& client, std::ostream& log) {
  for (const FolderManifest::File& f : manifest.files) {
    const std::string path = absl::StrCat(dir, "/", f.path);
    ASSIGN_OR_RETURN(UploadResult r, client.UploadFile(path, f.sha256));
    LogUpload(log, path, r);
  }
  const std::string text = FolderManifestToJson(manifest);
  ASSIGN_OR_RETURN(Sha256Digest digest, Sha256Of(text));
  const std::string hex = DigestHex(digest);
  ASSIGN_OR_RETURN(UploadResult r, client.UploadBytes(text, hex));
  LogUpload(log, absl::StrCat("manifest of ", dir), r);
  return hex;
}

// The artifact reference that replaces `path` (the value of `key`).
absl::StatusOr<std::string> UploadPath(const std::string& key, const std::string& path,
                                       ArtifactClient& client, std::ostream& log) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    ASSIGN_OR_RETURN(FolderManifest manifest, BuildFolderManifest(path));
    ASSIGN_OR_RETURN(std::string hex, UploadManifest(path, manifest, client, log));
    return FormatArtifactRef({hex, ""});
  }
  const fs::path p(path);
  if (key == "tokenizer.path" && p.filename() == "vocab.json") {
    // GPT-2 style: merges.txt lives beside vocab.json and travels with it.
    std::vector<std::string> names = {"vocab.json"};
    if (fs::is_regular_file(p.parent_path() / "merges.txt", ec)) names.push_back("merges.txt");
    const std::string dir = p.parent_path().string();
    ASSIGN_OR_RETURN(FolderManifest manifest, BuildFileListManifest(dir, names));
    ASSIGN_OR_RETURN(std::string hex, UploadManifest(dir, manifest, client, log));
    return FormatArtifactRef({hex, "vocab.json"});
  }
  ASSIGN_OR_RETURN(std::string hex, UploadOneFile(path, client, log));
  return FormatArtifactRef({hex, ""});
}

}  // namespace

absl::StatusOr<UploadMode> ParseUploadMode(const std::string& text) {
  if (text == "auto") return UploadMode::kAuto;
  if (text == "always") return UploadMode::kAlways;
  if (text == "never") return UploadMode::kNever;
  return absl::InvalidArgumentError(
      absl::StrCat("--upload must be auto, always or never (got '", text, "')"));
}

bool IsLoopbackTarget(const std::string& target) {
  std::string host = target;
  if (absl::StartsWith(host, "unix:")) return true;
  if (absl::StartsWith(host, "dns:///")) host = host.substr(7);
  if (absl::StartsWith(host, "ipv4:")) host = host.substr(5);
  if (absl::StartsWith(host, "[")) return absl::StartsWith(host, "[::1]");
  host = host.substr(0, host.rfind(':'));
  return host == "localhost" || host == "::1" || absl::StartsWith(host, "127.");
}

absl::StatusOr<JobSpec> UploadJobInputs(JobSpec spec, ArtifactClient& client, std::ostream& log) {
  for (const SpecPath& p : SpecPaths(spec)) {
    if (p.value->empty() || IsArtifactRef(*p.value)) continue;
    log << "uploading " << p.key << " " << *p.value << "\n";
    auto ref = UploadPath(p.key, *p.value, client, log);
    if (!ref.ok()) {
      return absl::Status(ref.status().code(),
                          absl::StrCat(p.key, ": ", ref.status().message(),
                                       " (submit again to resume the upload)"));
    }
    *p.value = *ref;
  }
  return spec;
}

absl::StatusOr<std::string> SubmitJobFile(JobClient& jobs, const std::string& target,
                                          std::shared_ptr<grpc::Channel> channel,
                                          const std::string& job_file,
                                          const std::string& request_id, UploadMode mode,
                                          std::ostream& log) {
  const bool upload =
      mode == UploadMode::kAlways || (mode == UploadMode::kAuto && !IsLoopbackTarget(target));
  if (!upload) return jobs.Submit(job_file, request_id);
  LoadJobFileOptions options;
  options.scheduled = true;  // As lm-server checks it at submit.
  ASSIGN_OR_RETURN(JobFile file, LoadJobFile(job_file, options));
  ArtifactClient artifacts(std::move(channel), {});
  ASSIGN_OR_RETURN(JobSpec uploaded, UploadJobInputs(std::move(file.spec), artifacts, log));
  return jobs.SubmitText(JobSpecToYaml(uploaded), file.source_name, file.base_dir, request_id);
}

}  // namespace lmtrain
