// The byte-level BPE merge loop with its per-word cache.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

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
// Thread safety: EncodeWord may be called from several threads at once (the
// cache is behind a reader/writer mutex). Not copyable.
class BpeModel {
 public:
  // Cache bounds: at most kCacheCapacity words, each at most
  // kMaxCachedWordBytes long.
  static constexpr size_t kCacheCapacity = 10000;
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

  std::array<int32_t, 256> byte_ids_;
  absl::flat_hash_map<uint64_t, Rule> rules_;
  mutable absl::Mutex cache_mu_;
  mutable absl::flat_hash_map<std::string, std::vector<int32_t>> cache_
      ABSL_GUARDED_BY(cache_mu_);
};

}  // namespace lmtrain::tokenizers_internal
