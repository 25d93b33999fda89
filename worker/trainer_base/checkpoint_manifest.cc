#include "worker/trainer_base/checkpoint_manifest.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <system_error>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "common/atomic_file.h"
#include "common/json_integer.h"
#include "common/sha256.h"
#include "common/status_macros.h"

namespace lmtrain {
namespace {

namespace fs = std::filesystem;

constexpr int kManifestFormat = 1;

struct FileEntry {
  std::string path;  // Relative to the checkpoint folder.
  uintmax_t size = 0;
  std::string sha256;  // Lower-case hex.
};

absl::Status Corrupt(const std::string& dir, const std::string& what) {
  return absl::DataLossError("checkpoint " + dir + " is corrupt: " + what);
}

// Every regular file below `dir` except the manifest, as sorted relative paths.
absl::StatusOr<std::vector<std::string>> ListFiles(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    const std::string relative = it->path().lexically_relative(dir).generic_string();
    if (relative != kCheckpointManifestFile) files.push_back(relative);
  }
  if (ec) return absl::InternalError("cannot list " + dir + ": " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

// A manifest path must name a file inside the folder.
bool SafeRelativePath(const std::string& path) {
  const fs::path p(path);
  if (path.empty() || p.is_absolute() || path == kCheckpointManifestFile) return false;
  return std::none_of(p.begin(), p.end(), [](const fs::path& part) { return part == ".."; });
}

absl::StatusOr<nlohmann::json> ReadJson(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError("cannot open " + path);
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return absl::DataLossError("not JSON");
  return j;
}

// The manifest's step and entries; DataLoss (unprefixed) saying what is wrong.
absl::Status ParseManifest(const nlohmann::json& j, int64_t* step, std::vector<FileEntry>* files) {
  try {
    if (!j.is_object() || JsonIntegerMember<int64_t>(j, "format") != kManifestFormat) {
      return absl::DataLossError("not a format-1 manifest");
    }
    const std::optional<int64_t> listed_step = JsonIntegerMember<int64_t>(j, "step");
    if (!listed_step.has_value()) return absl::DataLossError("\"step\" is not an integer");
    *step = *listed_step;
    for (const nlohmann::json& f : j.at("files")) {
      const std::optional<uintmax_t> size = JsonIntegerMember<uintmax_t>(f, "size");
      if (!size.has_value()) {
        return absl::DataLossError("a file's \"size\" is not an integer >= 0");
      }
      FileEntry entry{f.at("path").get<std::string>(), *size, f.at("sha256").get<std::string>()};
      if (!SafeRelativePath(entry.path)) {
        return absl::DataLossError("lists \"" + entry.path + "\", not a file inside the folder");
      }
      files->push_back(std::move(entry));
    }
  } catch (const nlohmann::json::exception& e) {
    return absl::DataLossError(e.what());
  }
  return absl::OkStatus();
}

// The step in a "checkpoint-N" folder name, or -1 for another name.
int64_t StepOfFolderName(const std::string& dir) {
  const std::string name = fs::path(dir).lexically_normal().filename().string();
  int64_t step = -1;
  if (!absl::StartsWith(name, "checkpoint-") ||
      !absl::SimpleAtoi(name.substr(sizeof("checkpoint-") - 1), &step)) {
    return -1;
  }
  return step;
}

absl::Status VerifyFile(const std::string& dir, const FileEntry& entry) {
  const std::string path = (fs::path(dir) / entry.path).string();
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return Corrupt(dir, entry.path + " is missing");
  const uintmax_t size = fs::file_size(path, ec);
  if (ec) return Corrupt(dir, entry.path + " cannot be read: " + ec.message());
  if (size != entry.size) {
    return Corrupt(dir, entry.path + " has " + std::to_string(size) +
                            " bytes, manifest.json says " + std::to_string(entry.size) +
                            " (truncated or rewritten)");
  }
  absl::StatusOr<Sha256Digest> digest = Sha256OfFile(path);
  if (!digest.ok()) {
    return Corrupt(dir, entry.path + " cannot be read: " + std::string(digest.status().message()));
  }
  if (DigestHex(*digest) != entry.sha256) {
    return Corrupt(dir, entry.path + " has SHA-256 " + DigestHex(*digest) +
                            ", manifest.json says " + entry.sha256 + " (its bytes changed)");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteCheckpointManifest(const std::string& dir, int64_t step) {
  ASSIGN_OR_RETURN(const std::vector<std::string> files, ListFiles(dir));
  // Ordered: format and step first, then each file's path, size and checksum, for people.
  nlohmann::ordered_json entries = nlohmann::ordered_json::array();
  for (const std::string& relative : files) {
    const std::string path = (fs::path(dir) / relative).string();
    std::error_code ec;
    const uintmax_t size = fs::file_size(path, ec);
    if (ec) return absl::NotFoundError("cannot stat " + path + ": " + ec.message());
    ASSIGN_OR_RETURN(const Sha256Digest digest, Sha256OfFile(path));
    entries.push_back({{"path", relative}, {"size", size}, {"sha256", DigestHex(digest)}});
  }
  const nlohmann::ordered_json manifest = {
      {"format", kManifestFormat}, {"step", step}, {"files", std::move(entries)}};
  return WriteFileAtomically((fs::path(dir) / kCheckpointManifestFile).string(),
                             manifest.dump(2) + "\n");
}

absl::StatusOr<CheckpointIntegrity> VerifyCheckpoint(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return absl::NotFoundError("no checkpoint folder " + dir);
  const std::string manifest_path = (fs::path(dir) / kCheckpointManifestFile).string();
  if (!fs::exists(manifest_path, ec)) return CheckpointIntegrity::kUnverified;
  absl::StatusOr<nlohmann::json> json = ReadJson(manifest_path);
  int64_t step = 0;
  std::vector<FileEntry> files;
  absl::Status parsed = json.ok() ? ParseManifest(*json, &step, &files) : json.status();
  if (!parsed.ok()) {
    return Corrupt(dir, "manifest.json is unreadable (" + std::string(parsed.message()) + ")");
  }
  const int64_t folder_step = StepOfFolderName(dir);
  if (folder_step >= 0 && folder_step != step) {
    return Corrupt(dir, "manifest.json is for step " + std::to_string(step) +
                            ", the folder is checkpoint-" + std::to_string(folder_step));
  }
  for (const FileEntry& entry : files) RETURN_IF_ERROR(VerifyFile(dir, entry));
  return CheckpointIntegrity::kVerified;
}

}  // namespace lmtrain
