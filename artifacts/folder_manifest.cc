#include "artifacts/folder_manifest.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/artifact_ref.h"
#include "common/sha256.h"
#include "common/status_macros.h"

namespace lmtrain {
namespace fs = std::filesystem;
namespace {

absl::StatusOr<FolderManifest::File> HashFile(const fs::path& dir, const std::string& rel) {
  const std::string path = (dir / rel).string();
  ASSIGN_OR_RETURN(Sha256Digest digest, Sha256OfFile(path));
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec) return absl::DataLossError(absl::StrCat("cannot stat ", path, ": ", ec.message()));
  return FolderManifest::File{rel, static_cast<int64_t>(size), DigestHex(digest)};
}

}  // namespace

bool IsCleanRelative(const std::string& path) {
  if (path.empty() || path.front() == '/') return false;
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part.empty() || part == "." || part == "..") return false;
  }
  return true;
}

absl::StatusOr<FolderManifest> BuildFolderManifest(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return absl::NotFoundError(absl::StrCat("not a folder: ", dir));
  std::vector<std::string> names;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec)) {
      names.push_back(it->path().lexically_relative(dir).generic_string());
    }
  }
  if (ec) return absl::DataLossError(absl::StrCat("cannot list ", dir, ": ", ec.message()));
  return BuildFileListManifest(dir, names);
}

absl::StatusOr<FolderManifest> BuildFileListManifest(const std::string& dir,
                                                     const std::vector<std::string>& names) {
  FolderManifest manifest;
  for (const std::string& name : names) {
    ASSIGN_OR_RETURN(FolderManifest::File file, HashFile(dir, name));
    manifest.files.push_back(std::move(file));
  }
  std::sort(manifest.files.begin(), manifest.files.end(),
            [](const auto& a, const auto& b) { return a.path < b.path; });
  return manifest;
}

std::string FolderManifestToJson(const FolderManifest& manifest) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : manifest.files) {
    files.push_back({{"path", f.path}, {"size", f.size}, {"sha256", f.sha256}});
  }
  return nlohmann::json{{"format", kFolderManifestFormat}, {"files", files}}.dump();
}

absl::StatusOr<FolderManifest> ParseFolderManifest(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  auto bad = [](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat("folder manifest: ", why));
  };
  if (!j.is_object() || j.value("format", "") != kFolderManifestFormat) {
    return bad(absl::StrCat("not JSON with \"format\": \"", kFolderManifestFormat, "\""));
  }
  if (!j.contains("files") || !j["files"].is_array()) return bad("no \"files\" array");
  FolderManifest manifest;
  for (const nlohmann::json& f : j["files"]) {
    if (!f.is_object() || !f.contains("path") || !f["path"].is_string() || !f.contains("size") ||
        !f["size"].is_number_integer() || !f.contains("sha256") || !f["sha256"].is_string()) {
      return bad("each file needs path (string), size (integer) and sha256 (string)");
    }
    FolderManifest::File file{f["path"].get<std::string>(), f["size"].get<int64_t>(),
                              f["sha256"].get<std::string>()};
    if (!IsCleanRelative(file.path)) return bad(absl::StrCat("bad path '", file.path, "'"));
    if (!IsSha256Hex(file.sha256) || file.size < 0) {
      return bad(absl::StrCat("bad size or sha256 for '", file.path, "'"));
    }
    manifest.files.push_back(std::move(file));
  }
  return manifest;
}

}  // namespace lmtrain
