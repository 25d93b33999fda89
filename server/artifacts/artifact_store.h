// ArtifactStore: lm-server's content-addressed store for the files jobs name (data,
// tokenizers, pretrained models), uploaded by lmctl and fetched by workers. No gRPC here:
// server/artifact_service.h adapts it.
//
// Layout under `root` (the server's artifacts dir):
//   blobs/sha256/<ab>/<hex>     a complete, verified blob (ab = the hash's first 2 digits)
//   uploads/<hex>.partial       bytes received so far of an unfinished upload (resumable)
//   owners/<user>/<hex>         text: the blob's size; charges it to the user who uploaded it
//
// Upload lifecycle (one per hash at a time):
//   BeginUpload(user, hex, size, offset) ──► Append(chunk)* ──► Finish()
//        │ offset = bytes the server has            │ stream broken: the partial file stays
//        │ (StatArtifact), 0 = start over           ▼  (fsync'ed), a later BeginUpload resumes
//        ▼                                   Finish: SHA-256 of the whole file == hex?
//   exists already: AlreadyExists              yes: fsync + rename into blobs/ (visible)
//                                              no:  partial deleted, DataLoss; nothing kept
// Deduplicated: a hash is stored once whoever uploads it; only the first uploader is charged.
// Limits: a blob may not exceed max_file_bytes; a user's charged bytes plus their uploads in
// progress may not exceed user_quota_bytes (ResourceExhausted, checked before any byte lands).
//
// Thread-safe: one mutex guards the in-progress set and the usage table; file I/O of an upload
// happens outside it (one writer per hash is guaranteed by the in-progress set).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace lmtrain {

class ArtifactUpload;

class ArtifactStore {
 public:
  struct Options {
    std::string root;                            // Required; created if missing.
    int64_t max_file_bytes = int64_t{16} << 30;  // 16 GiB per blob; > 0.
    int64_t user_quota_bytes = 0;                // Per user; 0 = unlimited.
  };
  struct BlobStat {
    bool exists = false;
    int64_t size = 0;           // When it exists.
    int64_t partial_bytes = 0;  // Bytes of an unfinished upload kept for resuming.
  };

  // Creates the folders and reads the usage table. Internal naming the folder on failure.
  static absl::StatusOr<std::unique_ptr<ArtifactStore>> Open(Options options);
  ArtifactStore(const ArtifactStore&) = delete;
  ArtifactStore& operator=(const ArtifactStore&) = delete;

  // InvalidArgument when `hex` is not 64 lower-case hex digits.
  absl::StatusOr<BlobStat> Stat(const std::string& hex) const;

  // Starts (offset 0) or resumes (offset = Stat().partial_bytes) an upload. Errors:
  // InvalidArgument (bad hash, size < 0, offset outside [0, partial bytes]); AlreadyExists
  // (the blob is stored: nothing to send); ResourceExhausted (size over max_file_bytes, or
  // the user's quota); Aborted (another upload of the same hash is in progress).
  absl::StatusOr<std::unique_ptr<ArtifactUpload>> BeginUpload(const std::string& user,
                                                              const std::string& hex, int64_t size,
                                                              int64_t offset);

  // Path of a stored blob to read; NotFound naming the hash otherwise.
  absl::StatusOr<std::string> BlobPath(const std::string& hex) const;

  // Bytes charged to `user` (blobs they were the first to upload).
  int64_t UsageBytes(const std::string& user) const;

  const Options& options() const { return options_; }

 private:
  friend class ArtifactUpload;
  explicit ArtifactStore(Options options) : options_(std::move(options)) {}
  absl::Status LoadUsage();
  std::string FinalPath(const std::string& hex) const;
  std::string PartialPath(const std::string& hex) const;
  // Called by ArtifactUpload: publish (after verification) and release.
  absl::Status Commit(const std::string& user, const std::string& hex, int64_t size);
  void Release(const std::string& user, const std::string& hex, int64_t size);

  const Options options_;
  mutable absl::Mutex mu_;
  std::set<std::string> in_progress_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int64_t> usage_ ABSL_GUARDED_BY(mu_);     // user -> charged bytes
  std::map<std::string, int64_t> reserved_ ABSL_GUARDED_BY(mu_);  // user -> uploads running
};

// One upload in progress. Destroying it without Finish() keeps the received bytes for a later
// resume. Not thread-safe (one stream's handler owns it).
class ArtifactUpload {
 public:
  ~ArtifactUpload();
  ArtifactUpload(const ArtifactUpload&) = delete;
  ArtifactUpload& operator=(const ArtifactUpload&) = delete;

  // Appends bytes. InvalidArgument (and the partial file deleted) when they go past the
  // declared size; Internal on a write error.
  absl::Status Append(std::string_view bytes);
  // Verifies and publishes. FailedPrecondition when bytes are missing (they stay for a
  // resume); DataLoss when the content's SHA-256 differs from the claimed one (nothing kept).
  absl::Status Finish();
  int64_t received() const { return received_; }

 private:
  friend class ArtifactStore;
  ArtifactUpload(ArtifactStore* store, std::string user, std::string hex, int64_t size,
                 int64_t received, int fd)
      : store_(store),
        user_(std::move(user)),
        hex_(std::move(hex)),
        size_(size),
        received_(received),
        fd_(fd) {}
  void Discard();

  ArtifactStore* const store_;
  const std::string user_;
  const std::string hex_;
  const int64_t size_;
  int64_t received_;
  int fd_;  // -1 once closed.
  bool finished_ = false;
};

// "user" as a file name: [A-Za-z0-9._-] kept, anything else %XX; "" is "_anonymous".
std::string UserDirName(const std::string& user);

}  // namespace lmtrain
