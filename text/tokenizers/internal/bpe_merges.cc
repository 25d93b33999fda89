#include "text/tokenizers/internal/bpe_merges.h"

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "text/tokenizers/internal/absl_view.h"

namespace lmtrain::tokenizers_internal {
namespace {

absl::StatusOr<int32_t> Lookup(std::string_view token, const TokenIdMap& vocab,
                               std::string_view where, std::string_view role) {
  auto it = vocab.find(AbslView(token));
  if (it == vocab.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(AbslView(where), ": ", AbslView(role), " \"",
                     AbslView(token), "\" is not in the vocabulary"));
  }
  return it->second;
}

}  // namespace

absl::StatusOr<BpeMerge> ResolveMerge(std::string_view left,
                                      std::string_view right,
                                      const TokenIdMap& vocab,
                                      std::string_view where) {
  BpeMerge merge;
  ASSIGN_OR_RETURN(merge.left, Lookup(left, vocab, where, "merge token"));
  ASSIGN_OR_RETURN(merge.right, Lookup(right, vocab, where, "merge token"));
  ASSIGN_OR_RETURN(merge.merged,
                   Lookup(absl::StrCat(AbslView(left), AbslView(right)), vocab,
                          where, "merged token"));
  return merge;
}

absl::StatusOr<std::vector<BpeMerge>> ParseMergesTxt(std::string_view text,
                                                     std::string_view file_name,
                                                     const TokenIdMap& vocab) {
  std::vector<BpeMerge> merges;
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  if (text.empty()) return merges;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(AbslView(text), '\n')) {
    ++line_number;
    if (absl::EndsWith(line, "\r")) line.remove_suffix(1);
    if (absl::StartsWith(line, "#version")) continue;
    const std::string where =
        absl::StrCat(AbslView(file_name), ":", line_number);
    std::vector<absl::string_view> parts = absl::StrSplit(line, ' ');
    if (parts.size() != 2 || parts[0].empty() || parts[1].empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": expected two tokens separated by one space, got \"", line,
          "\""));
    }
    ASSIGN_OR_RETURN(
        BpeMerge merge,
        ResolveMerge(std::string_view(parts[0].data(), parts[0].size()),
                     std::string_view(parts[1].data(), parts[1].size()), vocab,
                     where));
    merges.push_back(merge);
  }
  return merges;
}

}  // namespace lmtrain::tokenizers_internal
