#include "worker/agent/artifact_cache.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "artifacts/folder_manifest.h"
#include "common/atomic_file.h"
#include "common/job_spec.h"
#include "common/sha256.h"
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

absl::StatusOr<FolderManifest> ReadManifest(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path));
  return ParseFolderManifest(text);
}

// The blobs a tree is built from: its manifest and every file the manifest lists.
std::vector<std::string> TreeBlobs(const std::string& manifest_hex,
                                   const FolderManifest& manifest) {
  std::vector<std::string> blobs = {manifest_hex};
  for (const FolderManifest::File& f : manifest.files) blobs.push_back(f.sha256);
  return blobs;
}

// Checks a downloaded blob against what it must be (its size when known, its SHA-256 always)
// and fsyncs it; returns its size. DataLoss when it is partial or corrupted.
absl::StatusOr<int64_t> CheckDownload(const std::string& tmp, const std::string& hex,
                                      int64_t expected_size) {
  std::error_code ec;
  const auto size = static_cast<int64_t>(fs::file_size(tmp, ec));
  if (ec) return absl::InternalError(absl::StrCat("cannot stat ", tmp, ": ", ec.message()));
  if (expected_size >= 0 && size != expected_size) {
    return absl::DataLossError(absl::StrCat("downloaded artifact sha256:", hex, " is ", size,
                                            " bytes, expected ", expected_size,
                                            ": a partial download; it was discarded"));
  }
  ASSIGN_OR_RETURN(Sha256Digest digest, Sha256OfFile(tmp));
  if (DigestHex(digest) != hex) {
    return absl::DataLossError(absl::StrCat("downloaded artifact sha256:", hex, " has SHA-256 ",
                                            DigestHex(digest), " (", size,
                                            " bytes): a partial or corrupted download; it was "
                                            "discarded"));
  }
  RETURN_IF_ERROR(FsyncPath(tmp));
  return size;
}

// Marks a blob used now, so that the use order survives a restart (LoadLocked reads it).
void Touch(const std::string& path) {
  std::error_code ignored;
  fs::last_write_time(path, fs::file_time_type::clock::now(), ignored);
}

}  // namespace

ArtifactCache::Pins& ArtifactCache::Pins::operator=(Pins&& other) noexcept {
  if (this == &other) return *this;
  Release();
  cache_ = std::exchange(other.cache_, nullptr);
  blobs_ = std::move(other.blobs_);
  trees_ = std::move(other.trees_);
  return *this;
}

void ArtifactCache::Pins::Release() {
  if (cache_ != nullptr) {
    absl::MutexLock lock(&cache_->mu_);
    for (const std::string& hex : blobs_) cache_->index_.UnpinBlob(hex);
    for (const std::string& hex : trees_) cache_->index_.UnpinTree(hex);
  }
  cache_ = nullptr;
  blobs_.clear();
  trees_.clear();
}

std::string ArtifactCache::TempPath(const std::string& what) {
  std::error_code ec;
  fs::create_directories(dir_ + "/tmp", ec);
  return absl::StrCat(dir_, "/tmp/", what, ".", getpid(), ".", counter_.fetch_add(1));
}

std::string ArtifactCache::BlobPath(const std::string& hex) const {
  return absl::StrCat(dir_, "/blobs/sha256/", hex.substr(0, 2), "/", hex);
}

int64_t ArtifactCache::bytes() const {
  absl::MutexLock lock(&mu_);
  return index_.bytes();
}

void ArtifactCache::LoadLocked() {
  if (loaded_) return;
  loaded_ = true;
  std::error_code ec;
  fs::remove_all(dir_ + "/tmp", ec);  // Downloads a crash interrupted.
  std::vector<std::tuple<fs::file_time_type, std::string, int64_t>> blobs;
  for (fs::recursive_directory_iterator it(dir_ + "/blobs/sha256", ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string hex = it->path().filename().string();
    std::error_code stat_ec;
    if (!IsSha256Hex(hex) || !it->is_regular_file(stat_ec)) continue;
    const fs::file_time_type used = it->last_write_time(stat_ec);
    const auto size = static_cast<int64_t>(it->file_size(stat_ec));
    if (!stat_ec) blobs.emplace_back(used, hex, size);
  }
  std::sort(blobs.begin(), blobs.end());  // Oldest use first.
  for (const auto& [time, hex, size] : blobs) index_.AddBlob(hex, size);
  std::vector<std::string> trees;
  for (fs::directory_iterator it(dir_ + "/trees", ec), end; !ec && it != end; it.increment(ec)) {
    trees.push_back(it->path().filename().string());
  }
  for (const std::string& hex : trees) {
    absl::StatusOr<FolderManifest> manifest =
        IsSha256Hex(hex) ? ReadManifest(BlobPath(hex)) : absl::NotFoundError(hex);
    if (manifest.ok()) {
      index_.AddTree(hex, TreeBlobs(hex, *manifest));
    } else {
      RemoveTreeLocked(hex);  // Its manifest is gone: it cannot be accounted for.
    }
  }
}

void ArtifactCache::RemoveTreeLocked(const std::string& hex) {
  // Renamed away first: a half-deleted folder is never seen under its final name.
  const std::string doomed = TempPath(absl::StrCat("evicted-tree-", hex));
  std::error_code ec;
  fs::rename(absl::StrCat(dir_, "/trees/", hex), doomed, ec);
  fs::remove_all(doomed, ec);
}

void ArtifactCache::PinBlobLocked(const std::string& hex, Pins* pins) {
  if (pins == nullptr) return;
  index_.PinBlob(hex);
  pins->cache_ = this;
  pins->blobs_.push_back(hex);
}

void ArtifactCache::PinTreeLocked(const std::string& hex, Pins* pins) {
  if (pins == nullptr) return;
  index_.PinTree(hex);
  pins->cache_ = this;
  pins->trees_.push_back(hex);
}

absl::StatusOr<std::pair<std::string, int64_t>> ArtifactCache::Download(const std::string& hex,
                                                                         int64_t expected_size) {
  const std::string tmp = TempPath(hex);
  const absl::Status fetched = fetcher_->Fetch(hex, tmp);
  absl::StatusOr<int64_t> size =
      fetched.ok() ? CheckDownload(tmp, hex, expected_size) : absl::StatusOr<int64_t>(fetched);
  if (!size.ok()) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    return size.status();
  }
  return std::make_pair(tmp, *size);
}

absl::Status ArtifactCache::Admit(const std::string& hex, const std::string& tmp, int64_t bytes,
                                  Pins* pins) {
  ASSIGN_OR_RETURN(ArtifactCacheIndex::Evictions evicted, index_.MakeRoom(bytes));
  std::error_code ec;
  for (const std::string& tree : evicted.trees) RemoveTreeLocked(tree);
  for (const std::string& blob : evicted.blobs) fs::remove(BlobPath(blob), ec);
  const std::string path = BlobPath(hex);
  fs::create_directories(fs::path(path).parent_path(), ec);
  RETURN_IF_ERROR(RenameDurably(tmp, path));
  index_.AddBlob(hex, bytes);
  PinBlobLocked(hex, pins);
  return absl::OkStatus();
}

absl::StatusOr<std::string> ArtifactCache::Blob(const std::string& hex, Pins* pins) {
  return FetchBlob(hex, /*expected_size=*/-1, pins);
}

absl::StatusOr<std::string> ArtifactCache::FetchBlob(const std::string& hex, int64_t expected_size,
                                                     Pins* pins) {
  if (!IsSha256Hex(hex)) return absl::InvalidArgumentError(absl::StrCat("bad hash '", hex, "'"));
  const std::string path = BlobPath(hex);
  // Cached already (perhaps fetched meanwhile by another runner): use it.
  auto cached = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    std::error_code ec;
    if (!index_.UseBlob(hex)) return false;
    if (!fs::is_regular_file(path, ec)) {
      index_.RemoveBlob(hex);  // Deleted behind our back: fetch it again.
      return false;
    }
    Touch(path);
    PinBlobLocked(hex, pins);
    return true;
  };
  {
    absl::MutexLock lock(&mu_);
    LoadLocked();
    if (cached()) return path;
  }
  if (fetcher_ == nullptr) {
    return absl::FailedPreconditionError("this worker has no artifact source (no server stub)");
  }
  ASSIGN_OR_RETURN(auto downloaded, Download(hex, expected_size));
  absl::MutexLock lock(&mu_);
  std::error_code ec;
  if (cached()) {
    fs::remove(downloaded.first, ec);
    return path;
  }
  absl::Status admitted = Admit(hex, downloaded.first, downloaded.second, pins);
  if (!admitted.ok()) {
    fs::remove(downloaded.first, ec);
    return absl::Status(admitted.code(),
                        absl::StrCat("artifact sha256:", hex, ": ", admitted.message()));
  }
  return path;
}

absl::StatusOr<std::string> ArtifactCache::Tree(const std::string& hex, Pins* pins) {
  const std::string tree = absl::StrCat(dir_, "/trees/", hex);
  {
    absl::MutexLock lock(&mu_);
    LoadLocked();
    std::error_code ec;
    if (index_.UseTree(hex) && fs::is_directory(tree, ec)) {
      PinTreeLocked(hex, pins);
      return tree;
    }
  }
  Pins building;  // Keeps its blobs until the tree is indexed (and pinned for the caller).
  ASSIGN_OR_RETURN(std::string manifest_path, Blob(hex, &building));
  ASSIGN_OR_RETURN(FolderManifest manifest, ReadManifest(manifest_path));
  const std::string tmp = TempPath(absl::StrCat("tree-", hex));
  std::error_code ec;
  fs::create_directories(tmp, ec);
  for (const FolderManifest::File& f : manifest.files) {
    ASSIGN_OR_RETURN(std::string blob, FetchBlob(f.sha256, f.size, &building));
    RETURN_IF_ERROR(LinkOrCopy(blob, fs::path(tmp) / f.path));
  }
  absl::MutexLock lock(&mu_);
  fs::create_directories(dir_ + "/trees", ec);
  fs::rename(tmp, tree, ec);
  if (ec) {  // Another runner built it first: same contents.
    fs::remove_all(tmp, ec);
    if (!fs::is_directory(tree, ec)) return absl::InternalError("cannot publish " + tree);
  }
  index_.AddTree(hex, TreeBlobs(hex, manifest));
  PinTreeLocked(hex, pins);
  return tree;
}
absl::StatusOr<std::string> ArtifactCache::Resolve(const std::string& value, SpecPath::Kind kind,
                                                   Pins* pins) {
  ASSIGN_OR_RETURN(ArtifactRef ref, ParseArtifactRef(value));
  if (!ref.subpath.empty()) {
    ASSIGN_OR_RETURN(std::string tree, Tree(ref.sha256, pins));
    const std::string path = absl::StrCat(tree, "/", ref.subpath);
    std::error_code ec;
    if (!fs::exists(path, ec)) {
      return absl::NotFoundError(
          absl::StrCat(ref.subpath, " is not in folder artifact sha256:", ref.sha256));
    }
    return path;
  }
  if (kind == SpecPath::Kind::kDirectory) return Tree(ref.sha256, pins);
  ASSIGN_OR_RETURN(std::string blob, Blob(ref.sha256, pins));
  if (kind == SpecPath::Kind::kAny) {  // A folder when the blob is a folder manifest.
    std::error_code ec;
    if (static_cast<int64_t>(fs::file_size(blob, ec)) <= kMaxManifestBytes) {
      ASSIGN_OR_RETURN(std::string text, ReadSmallFile(blob));
      if (absl::StrContains(text, absl::StrCat("\"format\":\"", kFolderManifestFormat, "\"")) &&
          ParseFolderManifest(text).ok()) {
        return Tree(ref.sha256, pins);
      }
    }
  }
  return blob;
}

absl::StatusOr<std::string> ArtifactCache::LocalizeSpec(const std::string& spec_yaml, Pins* pins) {
  if (!absl::StrContains(spec_yaml, "artifact:")) return spec_yaml;
  ParseOptions options;
  options.source_name = "job spec";
  options.base_dir = "/";
  options.check_files = false;
  ASSIGN_OR_RETURN(JobSpec spec, ParseJobSpec(spec_yaml, options));
  for (const SpecPath& p : SpecPaths(spec)) {
    if (!IsArtifactRef(*p.value)) continue;
    auto local = Resolve(*p.value, p.kind, pins);
    if (!local.ok()) {
      return absl::Status(local.status().code(), absl::StrCat("fetching ", p.key, " (", *p.value,
                                                              "): ", local.status().message()));
    }
    *p.value = *local;
  }
  return JobSpecToYaml(spec);
}

}  // namespace lmtrain
