#include "worker/agent/artifact_cache.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/artifacts/folder_manifest.h"
#include "common/atomic_file.h"
#include "common/job_spec.h"
#include "common/status_macros.h"

namespace lmtrain {
namespace fs = std::filesystem;
namespace {

constexpr int64_t kMaxManifestBytes = 64 << 20;

absl::StatusOr<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Hard link (same file system), else a copy.
absl::Status LinkOrCopy(const std::string& from, const fs::path& to) {
  std::error_code ec;
  fs::create_directories(to.parent_path(), ec);
  fs::create_hard_link(from, to, ec);
  if (ec) fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  if (ec)
    return absl::InternalError(absl::StrCat("cannot place ", to.string(), ": ", ec.message()));
  return absl::OkStatus();
}

}  // namespace

std::string ArtifactCache::TempPath(const std::string& what) {
  std::error_code ec;
  fs::create_directories(dir_ + "/tmp", ec);
  return absl::StrCat(dir_, "/tmp/", what, ".", getpid(), ".", counter_.fetch_add(1));
}

absl::StatusOr<std::string> ArtifactCache::Blob(const std::string& hex) {
  if (!IsSha256Hex(hex)) return absl::InvalidArgumentError(absl::StrCat("bad hash '", hex, "'"));
  const std::string path = absl::StrCat(dir_, "/blobs/sha256/", hex.substr(0, 2), "/", hex);
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return path;
  if (fetcher_ == nullptr) {
    return absl::FailedPreconditionError("this worker has no artifact source (no server stub)");
  }
  const std::string tmp = TempPath(hex);
  RETURN_IF_ERROR(fetcher_->Fetch(hex, tmp));  // Verified against `hex`.
  RETURN_IF_ERROR(FsyncPath(tmp));
  fs::create_directories(fs::path(path).parent_path(), ec);
  RETURN_IF_ERROR(RenameDurably(tmp, path));
  return path;
}

absl::StatusOr<std::string> ArtifactCache::Tree(const std::string& hex) {
  const std::string tree = absl::StrCat(dir_, "/trees/", hex);
  std::error_code ec;
  if (fs::is_directory(tree, ec)) return tree;
  ASSIGN_OR_RETURN(std::string manifest_path, Blob(hex));
  ASSIGN_OR_RETURN(std::string text, ReadSmallFile(manifest_path));
  ASSIGN_OR_RETURN(FolderManifest manifest, ParseFolderManifest(text));
  const std::string tmp = TempPath(absl::StrCat("tree-", hex));
  fs::create_directories(tmp, ec);
  for (const FolderManifest::File& f : manifest.files) {
    ASSIGN_OR_RETURN(std::string blob, Blob(f.sha256));
    RETURN_IF_ERROR(LinkOrCopy(blob, fs::path(tmp) / f.path));
  }
  fs::create_directories(dir_ + "/trees", ec);
  fs::rename(tmp, tree, ec);
  if (ec) {  // Another runner built it first: same contents.
    fs::remove_all(tmp, ec);
    if (!fs::is_directory(tree, ec)) return absl::InternalError("cannot publish " + tree);
  }
  return tree;
}

absl::StatusOr<std::string> ArtifactCache::Resolve(const std::string& value, SpecPath::Kind kind) {
  ASSIGN_OR_RETURN(ArtifactRef ref, ParseArtifactRef(value));
  if (!ref.subpath.empty()) {
    ASSIGN_OR_RETURN(std::string tree, Tree(ref.sha256));
    const std::string path = absl::StrCat(tree, "/", ref.subpath);
    std::error_code ec;
    if (!fs::exists(path, ec)) {
      return absl::NotFoundError(
          absl::StrCat(ref.subpath, " is not in folder artifact sha256:", ref.sha256));
    }
    return path;
  }
  if (kind == SpecPath::Kind::kDirectory) return Tree(ref.sha256);
  ASSIGN_OR_RETURN(std::string blob, Blob(ref.sha256));
  if (kind == SpecPath::Kind::kAny) {  // A folder when the blob is a folder manifest.
    std::error_code ec;
    if (static_cast<int64_t>(fs::file_size(blob, ec)) <= kMaxManifestBytes) {
      ASSIGN_OR_RETURN(std::string text, ReadSmallFile(blob));
      if (absl::StrContains(text, absl::StrCat("\"format\":\"", kFolderManifestFormat, "\"")) &&
          ParseFolderManifest(text).ok()) {
        return Tree(ref.sha256);
      }
    }
  }
  return blob;
}

absl::StatusOr<std::string> ArtifactCache::LocalizeSpec(const std::string& spec_yaml) {
  if (!absl::StrContains(spec_yaml, "artifact:")) return spec_yaml;
  ParseOptions options;
  options.source_name = "job spec";
  options.base_dir = "/";
  options.check_files = false;
  ASSIGN_OR_RETURN(JobSpec spec, ParseJobSpec(spec_yaml, options));
  for (const SpecPath& p : SpecPaths(spec)) {
    if (!IsArtifactRef(*p.value)) continue;
    auto local = Resolve(*p.value, p.kind);
    if (!local.ok()) {
      return absl::Status(local.status().code(), absl::StrCat("fetching ", p.key, " (", *p.value,
                                                              "): ", local.status().message()));
    }
    *p.value = *local;
  }
  return JobSpecToYaml(spec);
}

}  // namespace lmtrain
