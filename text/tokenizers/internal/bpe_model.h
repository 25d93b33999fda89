// The byte-level BPE merge loop with its per-word cache.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace lmtrain::tokenizers_internal {

// One line of merges.txt, resolved to ids: `left` + `right` -> `merged`.
struct BpeMerge {
  int32_t left;
  int32_t right;
  int32_t merged;
};

// Encodes one pre-tokenized word: starts from one symbol per byte and
// repeatedly applies the lowest-ranked merge among adjacent pairs (leftmost
// first on ties), exactly as Hugging Face tokenizers' BPE model does. Results
// are cached per word.
//
// Thread safety: EncodeWord may be called from several threads at once: the
// cache is split into kCacheShards shards by the word's hash, each behind its
// own reader/writer lock, so threads tokenizing at once (preprocessing
// workers) rarely touch the same lock; a full shard is not locked for writing.
// Not copyable.
class BpeModel {
 public:
  // Cache bounds: at most kCacheCapacity words (kCacheCapacity / kCacheShards
  // per shard), each at most kMaxCachedWordBytes long.
  static constexpr size_t kCacheCapacity = 10000;
  static constexpr size_t kCacheShards = 16;
  static constexpr size_t kMaxCachedWordBytes = 256;

  // `byte_ids[b]` is the id of the single-byte symbol b; `merges` in rank order
  // (index = rank). When a pair appears twice, the later rank wins (as in
  // Hugging Face).
  BpeModel(const std::array<int32_t, 256>& byte_ids,
           const std::vector<BpeMerge>& merges);
  BpeModel(const BpeModel&) = delete;
  BpeModel& operator=(const BpeModel&) = delete;

  // Appends the ids of `word` (raw bytes, any content) to `ids`.
  void EncodeWord(std::string_view word, std::vector<int32_t>* ids) const;

 private:
  struct Rule {
    int32_t rank;
    int32_t merged;
  };
  static uint64_t PairKey(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
           static_cast<uint32_t>(right);
  }
  const Rule* FindRule(int32_t left, int32_t right) const;
  std::vector<int32_t> MergeWord(std::string_view word) const;

  // One shard of the word cache. Aligned so that shards' locks do not share a
  // cache line. A std::shared_mutex: a lookup is one atomic operation, without
  // absl::Mutex's deadlock-detection bookkeeping, which dominated a lookup.
  struct alignas(64) CacheShard {
    std::shared_mutex mu;
    absl::flat_hash_map<std::string, std::vector<int32_t>> words;  // Guarded by mu.
    std::atomic<bool> full{false};  // words.size() reached its capacity.
  };

  std::array<int32_t, 256> byte_ids_;
  absl::flat_hash_map<uint64_t, Rule> rules_;
  mutable std::array<CacheShard, kCacheShards> cache_;
};

}  // namespace lmtrain::tokenizers_internal
