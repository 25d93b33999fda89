#include "text/tokenizers/internal/bpe_model.h"

#include <mutex>
#include <queue>
#include <shared_mutex>

#include "absl/hash/hash.h"
#include "text/tokenizers/internal/absl_view.h"

namespace lmtrain::tokenizers_internal {
namespace {

// A symbol of the word being merged, in a doubly linked list over a vector; a
// merged-away symbol gets id -1.
struct Symbol {
  int32_t id;
  int prev;
  int next;
};

// A candidate merge of the symbol at `pos` with its successor. Ordered so that
// the queue pops the lowest rank, then the leftmost position (Hugging Face's
// order).
struct Candidate {
  int32_t rank;
  int pos;
  int32_t merged;
  bool operator<(const Candidate& other) const {
    if (rank != other.rank) return rank > other.rank;
    return pos > other.pos;
  }
};

}  // namespace

BpeModel::BpeModel(const std::array<int32_t, 256>& byte_ids,
                   const std::vector<BpeMerge>& merges)
    : byte_ids_(byte_ids) {
  rules_.reserve(merges.size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const BpeMerge& m = merges[rank];
    rules_[PairKey(m.left, m.right)] =
        Rule{static_cast<int32_t>(rank), m.merged};
  }
}

const BpeModel::Rule* BpeModel::FindRule(int32_t left, int32_t right) const {
  auto it = rules_.find(PairKey(left, right));
  return it == rules_.end() ? nullptr : &it->second;
}

std::vector<int32_t> BpeModel::MergeWord(std::string_view word) const {
  std::vector<Symbol> symbols(word.size());
  const int n = static_cast<int>(word.size());
  for (int i = 0; i < n; ++i) {
    symbols[i] = {byte_ids_[static_cast<uint8_t>(word[i])], i - 1,
                  i + 1 < n ? i + 1 : -1};
  }
  std::priority_queue<Candidate> queue;
  auto push_pair = [&](int pos) {
    if (pos < 0 || symbols[pos].next < 0) return;
    if (const Rule* rule =
            FindRule(symbols[pos].id, symbols[symbols[pos].next].id)) {
      queue.push({rule->rank, pos, rule->merged});
    }
  };
  for (int i = 0; i + 1 < n; ++i) push_pair(i);
  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    Symbol& left = symbols[top.pos];
    if (left.id < 0 || left.next < 0) continue;
    // Skip entries made stale by an earlier merge of either symbol.
    const Rule* rule = FindRule(left.id, symbols[left.next].id);
    if (rule == nullptr || rule->merged != top.merged) continue;
    Symbol& right = symbols[left.next];
    left.id = top.merged;
    right.id = -1;
    left.next = right.next;
    if (left.next >= 0) symbols[left.next].prev = top.pos;
    push_pair(left.prev);
    push_pair(top.pos);
  }
  std::vector<int32_t> ids;
  for (int i = n > 0 ? 0 : -1; i >= 0; i = symbols[i].next)
    ids.push_back(symbols[i].id);
  return ids;
}

void BpeModel::EncodeWord(std::string_view word,
                          std::vector<int32_t>* ids) const {
  const bool cacheable = word.size() <= kMaxCachedWordBytes;
  CacheShard& shard = cache_[absl::HashOf(AbslView(word)) % kCacheShards];
  if (cacheable) {
    std::shared_lock<std::shared_mutex> lock(shard.mu);
    auto it = shard.words.find(AbslView(word));
    if (it != shard.words.end()) {
      ids->insert(ids->end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<int32_t> merged = MergeWord(word);
  ids->insert(ids->end(), merged.begin(), merged.end());
  if (cacheable && !shard.full.load(std::memory_order_relaxed)) {
    std::unique_lock<std::shared_mutex> lock(shard.mu);
    if (shard.words.size() < kCacheCapacity / kCacheShards) {
      shard.words.emplace(word, std::move(merged));
    } else {
      shard.full.store(true, std::memory_order_relaxed);
    }
  }
}

}  // namespace lmtrain::tokenizers_internal
