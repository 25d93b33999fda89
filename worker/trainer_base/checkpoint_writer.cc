#include "worker/trainer_base/checkpoint_writer.h"

#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/atomic_file.h"
#include "common/status_macros.h"

namespace lmtrain {
namespace {

// Marks DescribeNoSpace's status (IsOutOfDiskSpace).
constexpr char kOutOfDiskSpaceUrl[] = "type.lmtrain.dev/checkpoint.OutOfDiskSpace";

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

// True when `status` or the file system holding `dir` says the space ran out. Writers that
// lose errno (LibTorch's archive writer, iostreams) are caught by the free-space check.
bool OutOfSpace(const absl::Status& status, const std::string& dir) {
  if (absl::StrContains(status.message(), std::strerror(ENOSPC))) return true;
  struct statvfs st;
  return ::statvfs(dir.c_str(), &st) == 0 && st.f_bavail == 0;
}

// The file below `dir` that `status` names (a writer that reports errno names its file,
// perhaps as "FILE.tmp-PID"), else the one modified last (the larger on a tie: the partial
// file that filled the disk); relative, "" when there is none.
std::string FileBeingWritten(const absl::Status& status, const std::string& dir) {
  const std::string prefix = dir + "/";
  const absl::string_view message = status.message();
  if (const size_t at = message.find(prefix); at != absl::string_view::npos) {
    absl::string_view rest = message.substr(at + prefix.size());
    rest = rest.substr(0, rest.find_first_of(": "));
    return std::string(rest.substr(0, rest.find(".tmp-")));
  }
  std::error_code ec;
  fs::path newest;
  std::pair<fs::file_time_type, uintmax_t> newest_key{fs::file_time_type::min(), 0};
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    const std::pair<fs::file_time_type, uintmax_t> key{it->last_write_time(ec),
                                                       it->file_size(ec)};
    if (!ec && key >= newest_key) newest = it->path(), newest_key = key;
  }
  return newest.empty() ? std::string() : newest.lexically_relative(dir).string();
}

// A failure to fill `temp` (to be published as `published_as`) rewritten as
// ResourceExhausted naming the file when the disk is full; otherwise unchanged.
absl::Status DescribeNoSpace(const absl::Status& status, const std::string& temp,
                             const std::string& published_as) {
  if (status.ok() || !OutOfSpace(status, temp)) return status;
  const std::string file = FileBeingWritten(status, temp);
  absl::Status no_space = absl::ResourceExhaustedError(absl::StrCat(
      "no space left on device writing ", file.empty() ? "" : file + " of ", published_as,
      " (", status.message(), "); nothing was published and what was published before (earlier "
      "checkpoints included) is intact: free space in ", fs::path(temp).parent_path().string(),
      ", or keep fewer checkpoints (save_total_limit)"));
  no_space.SetPayload(kOutOfDiskSpaceUrl, absl::Cord("ENOSPC"));
  return no_space;
}

// Fills `temp` and fsyncs it; removes it on failure.
absl::Status FillTemp(const std::string& temp, const std::string& published_as,
                      const FillFolderFn& fill) {
  RETURN_IF_ERROR(MakeEmptyFolder(temp));
  absl::Status status = fill(temp);
  if (status.ok()) status = FsyncTree(temp);
  if (!status.ok()) {
    status = DescribeNoSpace(status, temp, published_as);
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
  if (!options_.verify) options_.verify = VerifyCheckpoint;
}

absl::StatusOr<std::vector<std::string>> CheckpointWriter::RecoverFromCrash() {
  std::vector<std::string> done;
  std::error_code ec;
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(options_.output_dir, ec)) {
    if (e.is_directory()) entries.push_back(e.path());
  }
  if (ec) return FsError("cannot list", options_.output_dir, ec);
  for (const fs::path& path : entries) {
    const std::string name = path.filename().string();
    const size_t old = name.find(".old-");
    if (name.rfind(".tmp-", 0) == 0 || name.rfind(".deleting-", 0) == 0) {
      fs::remove_all(path, ec);
      if (ec) return FsError("cannot remove", path.string(), ec);
      done.push_back("removed " + name + ", left by an interrupted save");
    } else if (name.rfind(kPrefix, 0) == 0 && old != std::string::npos) {
      const fs::path current = path.parent_path() / name.substr(0, old);
      if (fs::exists(current)) {
        fs::remove_all(path, ec);
        if (ec) return FsError("cannot remove", path.string(), ec);
        done.push_back("removed " + name + ", replaced by " + current.filename().string());
      } else {
        RETURN_IF_ERROR(RenameDurably(path.string(), current.string()));
        done.push_back("restored " + current.filename().string() + " from " + name);
      }
    }
  }
  return done;
}

std::string CheckpointWriter::PathFor(int64_t step) const {
  return (fs::path(options_.output_dir) / (kPrefix + std::to_string(step))).string();
}

absl::StatusOr<std::string> CheckpointWriter::Save(int64_t step, const FillFolderFn& fill) {
  const fs::path dir(options_.output_dir);
  const std::string name = kPrefix + std::to_string(step);
  const std::string temp = (dir / (".tmp-" + name + "-" + Pid())).string();
  const std::string final_path = (dir / name).string();
  RETURN_IF_ERROR(FillTemp(temp, final_path, [&](const std::string& folder) {
    RETURN_IF_ERROR(fill(folder));
    return WriteCheckpointManifest(folder, step);  // Last: it hashes what fill wrote.
  }));
  absl::StatusOr<std::string> replaced = Publish(temp, final_path);
  if (!replaced.ok()) {
    std::error_code ignored;
    fs::remove_all(temp, ignored);
    return replaced.status();
  }
  RETURN_IF_ERROR(VerifyPublished(final_path));
  if (!replaced->empty()) RETURN_IF_ERROR(RemoveFolderAtomically(*replaced));
  RETURN_IF_ERROR(ApplyRetention(final_path));
  return final_path;
}

// Renames `temp` to `final_path`. An existing `final_path` is renamed away first (and put
// back if the second rename fails); returns where it went, or "" when there was none.
absl::StatusOr<std::string> CheckpointWriter::Publish(const std::string& temp,
                                                      const std::string& final_path) {
  std::error_code ec;
  if (!fs::exists(final_path, ec)) {
    RETURN_IF_ERROR(RenameDurably(temp, final_path));
    return std::string();
  }
  const std::string old = final_path + ".old-" + Pid();
  RETURN_IF_ERROR(RenameDurably(final_path, old));
  absl::Status status = RenameDurably(temp, final_path);
  if (!status.ok()) {
    RenameDurably(old, final_path).IgnoreError();
    return status;
  }
  return old;
}

absl::Status CheckpointWriter::VerifyPublished(const std::string& path) const {
  absl::StatusOr<CheckpointIntegrity> integrity = options_.verify(path);
  if (integrity.ok() && *integrity == CheckpointIntegrity::kVerified) return absl::OkStatus();
  const std::string why =
      integrity.ok() ? "its manifest.json is gone" : std::string(integrity.status().message());
  return absl::DataLossError("the checkpoint just published does not read back as written (" + why +
                             "); no older checkpoint was deleted");
}

absl::Status CheckpointWriter::ApplyRetention(const std::string& just_saved) {
  if (options_.save_total_limit <= 0) return absl::OkStatus();
  const auto checkpoints = List(options_.output_dir);
  const size_t keep_newest = static_cast<size_t>(options_.save_total_limit);
  // Oldest first, up to the newest `keep_newest`; never the best nor the one just saved
  // (after a resume from an older checkpoint, newer stale ones may still sort above it).
  for (size_t i = 0; i + keep_newest < checkpoints.size(); ++i) {
    const std::string& path = checkpoints[i].second;
    if (path == protected_path_ || path == just_saved) continue;
    RETURN_IF_ERROR(RemoveFolderAtomically(path));
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

bool IsOutOfDiskSpace(const absl::Status& status) {
  return absl::IsResourceExhausted(status) && status.GetPayload(kOutOfDiskSpaceUrl).has_value();
}

absl::Status PublishFilesInto(const std::string& dir, const FillFolderFn& fill) {
  const fs::path target(dir);
  const std::string temp = (target / (".tmp-publish-" + Pid())).string();
  RETURN_IF_ERROR(FillTemp(temp, dir, fill));
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
