// ArtifactCache: the worker's local, content-addressed copy of the artifacts jobs name
// (common/artifact_ref.h). Before lm-train starts, LocalizeSpec() fetches what is missing
// from lm-server (ArtifactFetcher: DownloadArtifact, SHA-256 verified), materialises folder
// manifests (client/artifacts/folder_manifest.h) and rewrites the references to local paths.
//
// Layout under `dir`:
//   blobs/sha256/<ab>/<hex>   verified blobs (written to tmp/, then renamed: never torn)
//   trees/<manifest hex>/     folders built from a manifest (files hard-linked from blobs/)
//   tmp/                      downloads and folders in progress
// A reference without a path inside it names a file, except for model.name_or_path and
// data.data_dir (always folders) and tokenizer.path, which is a folder when the blob is a
// folder manifest.
//
// Thread-safe: several job runners may resolve the same artifacts at once; each download and
// folder goes to its own temp name and the first rename wins (the contents are identical).
#pragma once

#include <atomic>
#include <string>

#include "absl/status/statusor.h"
#include "client/artifacts/artifact_client.h"
#include "common/artifact_ref.h"

namespace lmtrain {

class ArtifactCache {
 public:
  // `fetcher` is not owned and must outlive the cache. `dir` is created on first use.
  ArtifactCache(ArtifactFetcher* fetcher, std::string dir)
      : fetcher_(fetcher), dir_(std::move(dir)) {}
  ArtifactCache(const ArtifactCache&) = delete;
  ArtifactCache& operator=(const ArtifactCache&) = delete;

  // Local path of blob `hex`, fetched first if missing.
  absl::StatusOr<std::string> Blob(const std::string& hex);
  // Local folder built from the folder manifest blob `hex`.
  absl::StatusOr<std::string> Tree(const std::string& hex);
  // Local path for the reference held by a spec field of kind `kind`.
  absl::StatusOr<std::string> Resolve(const std::string& ref, SpecPath::Kind kind);
  // `spec_yaml` with every artifact reference replaced by a local path (the text unchanged
  // when it has none). Errors name the field and the artifact.
  absl::StatusOr<std::string> LocalizeSpec(const std::string& spec_yaml);

 private:
  std::string TempPath(const std::string& what);

  ArtifactFetcher* const fetcher_;
  const std::string dir_;
  std::atomic<int64_t> counter_{0};
};

}  // namespace lmtrain
