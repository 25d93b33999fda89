// DatasetCache: tokenised datasets cached on disk, one file per cache key, memory-mapped on
// lookup, so that a rerun or a resume never re-tokenises. Torch-free.
//
// Layout: <dir>/<key>.lmtds, key = ComputeCacheKey(...) (64 lower-case hex characters), in the
// format of dataset_file.h. A file is published by writing "<key>.lmtds.tmp-<pid>-<n>",
// fsyncing it, renaming it over "<key>.lmtds" and fsyncing the folder: readers see either no
// file or a whole one.
//
//   Lookup(key) ──hit──► MappedDataset
//        │ miss (absent, or invalid: deleted, on_discard told)
//        ▼
//   build the columns (the caller) ─► Store(key, columns) ─► MappedDataset
//   (GetOrBuild does both.)
//
// Concurrency: the object holds no mutable state; any number of threads and processes may use
// the same folder at once. Two processes building the same key both write their own temporary
// file and rename it into place; the last rename wins, both files are complete and (for a
// deterministic build) identical, and each process keeps the mapping of the file it wrote.
// A reader that finds an invalid file deletes it only when the path still names the file it
// validated (same device and inode), so it does not delete a good file renamed in meanwhile
// (a race in that narrow window costs one extra rebuild, never wrong data).
// Temporary files of a writer that crashed stay behind; RemoveTemporaryFiles clears them.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "text/dataset_cache/dataset_columns.h"
#include "text/dataset_cache/mapped_dataset.h"

namespace lmtrain {

struct DatasetCacheOptions {
  // Verify each file's payload SHA-256 when it is looked up or stored (see mapped_dataset.h).
  // Default true.
  bool verify_payload_checksum = true;
  // Told, with the DataLoss status naming the file and the problem, about every invalid file
  // that a lookup discards (for logging). Default: nobody. Called on the looking-up thread.
  std::function<void(const absl::Status&)> on_discard;
};

class DatasetCache {
 public:
  // Creates `dir` (and its parents) when missing. Internal naming the folder when it cannot be
  // created; FailedPrecondition when `dir` exists and is not a folder.
  static absl::StatusOr<std::unique_ptr<DatasetCache>> Open(const std::string& dir,
                                                            DatasetCacheOptions options = {});

  DatasetCache(const DatasetCache&) = delete;
  DatasetCache& operator=(const DatasetCache&) = delete;

  // The cached dataset for `key`, or nullopt when there is none. A file that fails validation
  // (truncated, corrupt, other key or version) is a miss: it is deleted and reported to
  // on_discard. Errors: InvalidArgument for a malformed key (IsValidCacheKey); PermissionDenied
  // / Internal when an existing file cannot be opened or mapped.
  absl::StatusOr<std::optional<MappedDataset>> Lookup(std::string_view key) const;

  // Writes `columns` as the dataset for `key` (replacing any file there) and returns it mapped.
  // Errors: InvalidArgument for a malformed key or column name; Internal naming the file when
  // writing, syncing or renaming fails (the temporary file is removed).
  absl::StatusOr<MappedDataset> Store(std::string_view key, const DatasetColumns& columns) const;

  // Lookup, and on a miss `build` then Store. Errors: those of Lookup, `build` and Store.
  absl::StatusOr<MappedDataset> GetOrBuild(
      std::string_view key, const std::function<absl::StatusOr<DatasetColumns>()>& build) const;

  // Deletes the temporary files that writers which died left in the folder: those whose
  // writer pid is not a live process (on this host's pid namespace) and that were last
  // modified at least `min_age` ago. Returns how many were deleted; Internal naming the folder
  // when it cannot be listed.
  absl::StatusOr<int> RemoveTemporaryFiles(std::chrono::seconds min_age) const;

  // Where the dataset for `key` lives (whether or not it exists).
  std::string PathFor(std::string_view key) const;
  const std::string& dir() const { return dir_; }

 private:
  DatasetCache(std::string dir, DatasetCacheOptions options)
      : dir_(std::move(dir)), options_(std::move(options)) {}
  MappedDatasetOptions MapOptions() const;
  void Discard(const std::string& path, int fd, const absl::Status& why) const;

  const std::string dir_;
  const DatasetCacheOptions options_;
};

}  // namespace lmtrain
