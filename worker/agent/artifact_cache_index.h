// ArtifactCacheIndex: the bookkeeping behind ArtifactCache's size limit, without any I/O.
// It knows each cached blob's size and when it was last used, which folders (trees) were
// built from which blobs, and which of them running jobs hold (pins); MakeRoom() picks what
// to evict, least recently used first, never anything pinned.
//
// Entries: blobs (sha256 hex -> bytes) and trees (manifest hex -> the blobs hard-linked into
// it, the manifest blob included). Only blobs count towards bytes(): a tree's files are hard
// links to its blobs. A blob is protected while it is pinned or a pinned tree uses it; a tree
// goes with the first of its blobs to be evicted.
//
// Not thread-safe: ArtifactCache calls it under its mutex.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace lmtrain {

class ArtifactCacheIndex {
 public:
  // `max_bytes` <= 0: no limit.
  explicit ArtifactCacheIndex(int64_t max_bytes) : max_bytes_(max_bytes) {}

  // True if the blob is indexed; it becomes the most recently used.
  bool UseBlob(const std::string& hex);
  // Indexes a blob (or updates its size) as the most recently used.
  void AddBlob(const std::string& hex, int64_t bytes);
  // Forgets a blob (its file is gone) and every tree built from it.
  void RemoveBlob(const std::string& hex);
  // True if the tree is indexed; it and its blobs become the most recently used.
  bool UseTree(const std::string& hex);
  void AddTree(const std::string& hex, std::vector<std::string> blobs);

  // Pins nest: each Pin needs one Unpin. Pinning what is not indexed is ignored.
  void PinBlob(const std::string& hex);
  void UnpinBlob(const std::string& hex);
  void PinTree(const std::string& hex);
  void UnpinTree(const std::string& hex);

  struct Evictions {
    std::vector<std::string> blobs;  // Least recently used first.
    std::vector<std::string> trees;  // Built from those blobs.
  };
  // Makes bytes() + incoming <= max_bytes by removing unprotected blobs from the index, least
  // recently used first, with the trees built from them; returns what the caller must delete.
  // ResourceExhausted (nothing removed) when even evicting every unprotected blob would not
  // do, saying how many bytes are pinned by running jobs.
  absl::StatusOr<Evictions> MakeRoom(int64_t incoming);

  int64_t bytes() const { return bytes_; }
  int64_t max_bytes() const { return max_bytes_; }
  bool HasTree(const std::string& hex) const { return trees_.count(hex) > 0; }

 private:
  struct Blob {
    int64_t bytes = 0;
    uint64_t last_use = 0;
    int pins = 0;
  };
  struct Tree {
    std::vector<std::string> blobs;
    uint64_t last_use = 0;
    int pins = 0;
  };
  bool Protected(const std::string& hex, const Blob& blob) const;

  const int64_t max_bytes_;
  int64_t bytes_ = 0;
  uint64_t clock_ = 0;  // Ticks once per use: the LRU order.
  std::map<std::string, Blob> blobs_;
  std::map<std::string, Tree> trees_;
};

}  // namespace lmtrain
