// ArtifactCache: the worker's local, content-addressed copy of the artifacts jobs name
// (common/artifact_ref.h). Before lm-train starts, LocalizeSpec() fetches what is missing
// from lm-server (ArtifactFetcher: DownloadArtifact), materialises folder manifests
// (artifacts/folder_manifest.h) and rewrites the references to local paths.
//
// Layout under `dir`:
//   blobs/sha256/<ab>/<hex>   verified blobs
//   trees/<manifest hex>/     folders built from a manifest (files hard-linked from blobs/)
//   tmp/                      downloads and folders in progress (emptied when first used)
// A reference without a path inside it names a file, except for model.name_or_path and
// data.data_dir (always folders) and tokenizer.path, which is a folder when the blob is a
// folder manifest.
//
// Downloads: a blob is downloaded to a temp name under tmp/, its size checked against the
// folder manifest that lists it (when it comes from one), its SHA-256 recomputed here and
// compared with its name, fsync'ed, and only then renamed to blobs/: a partial or corrupted
// download never appears under its final name (DataLoss, the temp file removed).
//
// Size limit (Options::max_bytes, lm-worker --artifact-cache-max-bytes): blob bytes are
// counted (trees are hard links to them). Before a new blob is renamed into place, the least
// recently used blobs are deleted, with the trees built from them, until it fits; a blob or
// tree held by Pins (a running job's) is never deleted. When the pinned bytes alone leave no
// room, the fetch fails with ResourceExhausted (the job's attempt fails with that reason).
// Use order survives restarts through the blobs' modification times.
//
// Thread-safe: several job runners may resolve the same artifacts at once; downloads run
// outside the lock, each to its own temp name, and the first rename wins (same contents).
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "artifacts/artifact_client.h"
#include "common/artifact_ref.h"
#include "worker/agent/artifact_cache_index.h"

namespace lmtrain {

class ArtifactCache {
 public:
  struct Options {
    // Most bytes of blobs kept; <= 0: no limit. Default 50 GiB.
    int64_t max_bytes = kDefaultMaxBytes;
  };
  static constexpr int64_t kDefaultMaxBytes = int64_t{50} << 30;

  // What one job holds: nothing it uses is evicted until this is destroyed (or reset by
  // assigning a default-constructed one). Move-only; must not outlive the cache.
  class Pins {
   public:
    Pins() = default;
    ~Pins() { Release(); }
    Pins(Pins&& other) noexcept { *this = std::move(other); }
    Pins& operator=(Pins&& other) noexcept;
    Pins(const Pins&) = delete;
    Pins& operator=(const Pins&) = delete;

   private:
    friend class ArtifactCache;
    void Release();
    ArtifactCache* cache_ = nullptr;
    std::vector<std::string> blobs_;
    std::vector<std::string> trees_;
  };

  // `fetcher` is not owned and must outlive the cache. `dir` is created on first use.
  ArtifactCache(ArtifactFetcher* fetcher, std::string dir, const Options& options)
      : fetcher_(fetcher), dir_(std::move(dir)), index_(options.max_bytes) {}
  // With the default Options.
  ArtifactCache(ArtifactFetcher* fetcher, std::string dir)
      : ArtifactCache(fetcher, std::move(dir), Options()) {}
  ArtifactCache(const ArtifactCache&) = delete;
  ArtifactCache& operator=(const ArtifactCache&) = delete;

  // Local path of blob `hex`, fetched first if missing; pinned into `pins` when given.
  absl::StatusOr<std::string> Blob(const std::string& hex, Pins* pins = nullptr);
  // Local folder built from the folder manifest blob `hex`; pinned into `pins` when given.
  absl::StatusOr<std::string> Tree(const std::string& hex, Pins* pins = nullptr);
  // Local path for the reference held by a spec field of kind `kind`.
  absl::StatusOr<std::string> Resolve(const std::string& ref, SpecPath::Kind kind,
                                      Pins* pins = nullptr);
  // `spec_yaml` with every artifact reference replaced by a local path (the text unchanged
  // when it has none); what it resolved is pinned into `pins` when given. Errors name the
  // field and the artifact.
  absl::StatusOr<std::string> LocalizeSpec(const std::string& spec_yaml, Pins* pins = nullptr);

  // Bytes of blobs indexed so far (after the first call that touched the cache).
  int64_t bytes() const;

 private:
  std::string TempPath(const std::string& what);
  std::string BlobPath(const std::string& hex) const;
  // Blob(), checking the download's size too when `expected_size` >= 0 (a manifest's file).
  absl::StatusOr<std::string> FetchBlob(const std::string& hex, int64_t expected_size,
                                        Pins* pins);
  // Downloads blob `hex` into tmp/ and checks it (size when known, SHA-256); returns the
  // temp path and size. The temp file is removed on failure.
  absl::StatusOr<std::pair<std::string, int64_t>> Download(const std::string& hex,
                                                           int64_t expected_size);
  // Makes room for `bytes`, then renames `tmp` to blob `hex` and indexes it.
  absl::Status Admit(const std::string& hex, const std::string& tmp, int64_t bytes, Pins* pins)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Reads blobs/ and trees/ into the index once; empties tmp/.
  void LoadLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RemoveTreeLocked(const std::string& hex) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void PinBlobLocked(const std::string& hex, Pins* pins) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void PinTreeLocked(const std::string& hex, Pins* pins) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  ArtifactFetcher* const fetcher_;
  const std::string dir_;
  std::atomic<int64_t> counter_{0};
  mutable absl::Mutex mu_;
  bool loaded_ ABSL_GUARDED_BY(mu_) = false;
  ArtifactCacheIndex index_ ABSL_GUARDED_BY(mu_);
};

}  // namespace lmtrain
