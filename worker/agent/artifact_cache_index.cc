#include "worker/agent/artifact_cache_index.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace lmtrain {

bool ArtifactCacheIndex::UseBlob(const std::string& hex) {
  auto it = blobs_.find(hex);
  if (it == blobs_.end()) return false;
  it->second.last_use = ++clock_;
  return true;
}

void ArtifactCacheIndex::AddBlob(const std::string& hex, int64_t bytes) {
  Blob& blob = blobs_[hex];
  bytes_ += bytes - blob.bytes;
  blob.bytes = bytes;
  blob.last_use = ++clock_;
}

void ArtifactCacheIndex::RemoveBlob(const std::string& hex) {
  auto it = blobs_.find(hex);
  if (it == blobs_.end()) return;
  bytes_ -= it->second.bytes;
  blobs_.erase(it);
  for (auto t = trees_.begin(); t != trees_.end();) {
    const std::vector<std::string>& uses = t->second.blobs;
    t = std::find(uses.begin(), uses.end(), hex) != uses.end() ? trees_.erase(t) : std::next(t);
  }
}

bool ArtifactCacheIndex::UseTree(const std::string& hex) {
  auto it = trees_.find(hex);
  if (it == trees_.end()) return false;
  it->second.last_use = ++clock_;
  for (const std::string& blob : it->second.blobs) UseBlob(blob);
  return true;
}

void ArtifactCacheIndex::AddTree(const std::string& hex, std::vector<std::string> blobs) {
  Tree& tree = trees_[hex];
  tree.blobs = std::move(blobs);
  tree.last_use = ++clock_;
}

void ArtifactCacheIndex::PinBlob(const std::string& hex) {
  if (auto it = blobs_.find(hex); it != blobs_.end()) ++it->second.pins;
}

void ArtifactCacheIndex::UnpinBlob(const std::string& hex) {
  if (auto it = blobs_.find(hex); it != blobs_.end() && it->second.pins > 0) --it->second.pins;
}

void ArtifactCacheIndex::PinTree(const std::string& hex) {
  if (auto it = trees_.find(hex); it != trees_.end()) ++it->second.pins;
}

void ArtifactCacheIndex::UnpinTree(const std::string& hex) {
  if (auto it = trees_.find(hex); it != trees_.end() && it->second.pins > 0) --it->second.pins;
}

bool ArtifactCacheIndex::Protected(const std::string& hex, const Blob& blob) const {
  if (blob.pins > 0) return true;
  for (const auto& [tree_hex, tree] : trees_) {
    if (tree.pins > 0 && std::find(tree.blobs.begin(), tree.blobs.end(), hex) != tree.blobs.end()) {
      return true;
    }
  }
  return false;
}

absl::StatusOr<ArtifactCacheIndex::Evictions> ArtifactCacheIndex::MakeRoom(int64_t incoming) {
  Evictions out;
  if (max_bytes_ <= 0 || bytes_ + incoming <= max_bytes_) return out;
  std::vector<std::pair<uint64_t, std::string>> candidates;  // (last use, hex)
  int64_t pinned = 0;
  for (const auto& [hex, blob] : blobs_) {
    if (Protected(hex, blob)) {
      pinned += blob.bytes;
    } else {
      candidates.emplace_back(blob.last_use, hex);
    }
  }
  if (pinned + incoming > max_bytes_) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the artifact cache cannot hold ", incoming, " more bytes: ", pinned,
        " bytes are in use by running jobs and the limit (--artifact-cache-max-bytes) is ",
        max_bytes_));
  }
  std::sort(candidates.begin(), candidates.end());
  for (const auto& [last_use, hex] : candidates) {
    if (bytes_ + incoming <= max_bytes_) break;
    for (const auto& [tree_hex, tree] : trees_) {
      if (std::find(tree.blobs.begin(), tree.blobs.end(), hex) != tree.blobs.end()) {
        out.trees.push_back(tree_hex);
      }
    }
    out.blobs.push_back(hex);
    RemoveBlob(hex);
  }
  return out;
}

}  // namespace lmtrain
