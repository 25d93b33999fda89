#include "worker/trainer/checkpoint_writer.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "common/status_macros.h"
#include "common/atomic_file.h"

namespace lmtrain {
namespace {

namespace fs = std::filesystem;

constexpr char kPrefix[] = "checkpoint-";

std::string Pid() { return std::to_string(::getpid()); }

absl::Status FsError(const std::string& what, const std::string& path, const std::error_code& ec) {
  return absl::InternalError(what + " " + path + ": " + ec.message());
}

// Creates `path` as an empty folder, removing a leftover of the same name.
absl::Status MakeEmptyFolder(const std::string& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (!ec) fs::create_directory(path, ec);
  if (ec) return FsError("cannot create folder", path, ec);
  return absl::OkStatus();
}

// Fills `temp` and fsyncs it; removes it on failure.
absl::Status FillTemp(const std::string& temp, const FillFolderFn& fill) {
  RETURN_IF_ERROR(MakeEmptyFolder(temp));
  absl::Status status = fill(temp);
  if (status.ok()) status = FsyncTree(temp);
  if (!status.ok()) {
    std::error_code ignored;
    fs::remove_all(temp, ignored);
  }
  return status;
}

// Renames `path` to a hidden name, then deletes it: a half-deleted folder is never visible
// under its checkpoint name.
absl::Status RemoveFolderAtomically(const std::string& path) {
  const fs::path p(path);
  const std::string doomed =
      (p.parent_path() / (".deleting-" + p.filename().string() + "-" + Pid())).string();
  RETURN_IF_ERROR(RenameDurably(path, doomed));
  std::error_code ec;
  fs::remove_all(doomed, ec);
  if (ec) return FsError("cannot remove", doomed, ec);
  return absl::OkStatus();
}

}  // namespace

CheckpointWriter::CheckpointWriter(Options options) : options_(std::move(options)) {
  options_.output_dir = fs::absolute(options_.output_dir).lexically_normal().string();
}

std::string CheckpointWriter::PathFor(int64_t step) const {
  return (fs::path(options_.output_dir) / (kPrefix + std::to_string(step))).string();
}

absl::StatusOr<std::string> CheckpointWriter::Save(int64_t step, const FillFolderFn& fill) {
  const fs::path dir(options_.output_dir);
  const std::string name = kPrefix + std::to_string(step);
  const std::string temp = (dir / (".tmp-" + name + "-" + Pid())).string();
  const std::string final_path = (dir / name).string();
  RETURN_IF_ERROR(FillTemp(temp, fill));
  absl::Status published = Publish(temp, final_path);
  if (!published.ok()) {
    std::error_code ignored;
    fs::remove_all(temp, ignored);
    return published;
  }
  RETURN_IF_ERROR(ApplyRetention());
  return final_path;
}

absl::Status CheckpointWriter::Publish(const std::string& temp, const std::string& final_path) {
  std::error_code ec;
  if (!fs::exists(final_path, ec)) return RenameDurably(temp, final_path);
  const std::string old = final_path + ".old-" + Pid();
  RETURN_IF_ERROR(RenameDurably(final_path, old));
  RETURN_IF_ERROR(RenameDurably(temp, final_path));
  fs::remove_all(old, ec);
  if (ec) return FsError("cannot remove", old, ec);
  return absl::OkStatus();
}

absl::Status CheckpointWriter::ApplyRetention() {
  if (options_.save_total_limit <= 0) return absl::OkStatus();
  auto checkpoints = List(options_.output_dir);
  const size_t limit = static_cast<size_t>(options_.save_total_limit);
  size_t remaining = checkpoints.size();
  // Oldest first; never the protected (best) one, never the newest.
  for (size_t i = 0; i + 1 < checkpoints.size() && remaining > limit; ++i) {
    if (checkpoints[i].second == protected_path_) continue;
    RETURN_IF_ERROR(RemoveFolderAtomically(checkpoints[i].second));
    --remaining;
  }
  return absl::OkStatus();
}

std::vector<std::pair<int64_t, std::string>> CheckpointWriter::List(const std::string& output_dir) {
  std::vector<std::pair<int64_t, std::string>> found;
  std::error_code ec;
  for (fs::directory_iterator it(output_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    int64_t step = 0;
    if (!it->is_directory() || !absl::StartsWith(name, kPrefix)) continue;
    if (!absl::SimpleAtoi(name.substr(sizeof(kPrefix) - 1), &step)) continue;
    found.emplace_back(step, fs::absolute(it->path()).lexically_normal().string());
  }
  std::sort(found.begin(), found.end());
  return found;
}

absl::Status PublishFilesInto(const std::string& dir, const FillFolderFn& fill) {
  const fs::path target(dir);
  const std::string temp = (target / (".tmp-publish-" + Pid())).string();
  RETURN_IF_ERROR(FillTemp(temp, fill));
  absl::Status status;
  std::error_code ec;
  for (fs::directory_iterator it(temp, ec), end; !ec && it != end; it.increment(ec)) {
    status = RenameDurably(it->path().string(), (target / it->path().filename()).string());
    if (!status.ok()) break;
  }
  if (ec && status.ok()) status = FsError("cannot list", temp, ec);
  fs::remove_all(temp, ec);
  return status;
}

}  // namespace lmtrain
