#include "text/mlm/mlm_examples.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

#include "common/parallel_map.h"
#include "common/status_macros.h"
#include "text/clm/text_dataset.h"
#include "text/clm/text_file.h"

namespace lmtrain {
namespace {

// Per-line token streams of one group, concatenated by GroupTexts.
struct GroupStreams {
  std::vector<TokenIds> ids;
  std::vector<TokenIds> special;
  std::vector<TokenIds> words;  // Running word numbers (see WordNumbers).
};

// The Encoding's per-line word ids offset by a running counter, so that words of different
// lines differ; modulo 2^31 (only neighbouring words must differ: Renumber looks at changes).
TokenIds WordNumbers(const Encoding& encoding, int64_t* next_word) {
  TokenIds numbers(encoding.size(), kNoWord);
  int64_t max_word = -1;
  for (size_t t = 0; t < encoding.size(); ++t) {
    const std::optional<int>& word = encoding.word_ids[t];
    if (!word.has_value() || encoding.special_tokens_mask[t] != 0) continue;
    numbers[t] = static_cast<int32_t>((*next_word + *word) & 0x7fffffff);
    max_word = std::max<int64_t>(max_word, *word);
  }
  *next_word = (*next_word + max_word + 1) & 0x7fffffff;
  return numbers;
}

// Word numbers → 0, 1, ... in order of appearance: a new index wherever the number changes.
TokenIds Renumber(const TokenIds& numbers) {
  TokenIds local(numbers.size(), kNoWord);
  int32_t next = -1;
  int32_t previous = kNoWord;
  for (size_t t = 0; t < numbers.size(); ++t) {
    if (numbers[t] == kNoWord) {
      previous = kNoWord;
      continue;
    }
    if (numbers[t] != previous) ++next;
    local[t] = next;
    previous = numbers[t];
  }
  return local;
}

void AddLine(const Encoding& encoding, int64_t* next_word, GroupStreams* group) {
  group->ids.push_back(encoding.ids);
  group->special.push_back(encoding.special_tokens_mask);
  group->words.push_back(WordNumbers(encoding, next_word));
}

// HF group_texts on one group: blocks of max_seq_length, remainder dropped, or one short block
// when the whole group is shorter.
void AppendBlocks(const GroupStreams& group, int max_seq_length, std::vector<MlmExample>* out) {
  const int64_t total = CountTokens(group.ids);
  if (total == 0) return;
  const int block = static_cast<int>(std::min<int64_t>(total, max_seq_length));
  std::vector<TokenIds> ids = GroupTexts(group.ids, block);
  std::vector<TokenIds> special = GroupTexts(group.special, block);
  std::vector<TokenIds> words = GroupTexts(group.words, block);
  for (size_t b = 0; b < ids.size(); ++b) {
    out->push_back(MlmExample{std::move(ids[b]), std::move(special[b]), Renumber(words[b])});
  }
}

std::vector<MlmExample> GroupedExamples(const std::vector<std::string>& lines,
                                        const Tokenizer& tokenizer,
                                        const MlmExampleOptions& options) {
  const size_t group_lines = options.group_lines > 0 ? options.group_lines : lines.size();
  std::vector<MlmExample> out;
  int64_t next_word = 0;
  for (size_t first = 0; first < lines.size(); first += group_lines) {
    const size_t count = std::min(lines.size(), first + group_lines) - first;
    // One group's encodings at a time: memory stays that of one group.
    const std::vector<Encoding> encodings = ParallelMap(count, options.workers, [&](size_t i) {
      return tokenizer.EncodeWithOffsets(lines[first + i], /*add_special_tokens=*/true);
    });
    GroupStreams group;
    for (const Encoding& encoding : encodings) AddLine(encoding, &next_word, &group);
    AppendBlocks(group, options.max_seq_length, &out);
  }
  return out;
}

absl::StatusOr<std::vector<MlmExample>> LineByLineExamples(const std::vector<std::string>& lines,
                                                           const Tokenizer& tokenizer,
                                                           const MlmExampleOptions& options) {
  TruncationOptions truncation;
  truncation.max_length = static_cast<size_t>(options.max_seq_length);
  std::vector<std::string_view> kept;  // HF drops empty and whitespace-only lines.
  for (const std::string& line : lines) {
    if (!line.empty() && !IsPythonSpace(line)) kept.push_back(line);
  }
  std::vector<absl::StatusOr<std::vector<Encoding>>> encoded =
      ParallelMap(kept.size(), options.workers, [&](size_t i) {
        return tokenizer.EncodeTruncated(kept[i], truncation,
                                         /*return_overflowing=*/false);
      });
  std::vector<MlmExample> out;
  out.reserve(encoded.size());
  for (absl::StatusOr<std::vector<Encoding>>& encodings : encoded) {
    if (!encodings.ok()) return encodings.status();
    int64_t next_word = 0;
    const Encoding& encoding = encodings->front();
    out.push_back(MlmExample{encoding.ids, encoding.special_tokens_mask,
                             Renumber(WordNumbers(encoding, &next_word))});
  }
  return out;
}

// The code point of the UTF-8 sequence at text[*i] (advancing *i), or -1 when ill-formed.
int32_t NextCodePoint(std::string_view text, size_t* i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(*i);
  const int length = lead < 0x80         ? 1
                     : (lead >> 5) == 6  ? 2
                     : (lead >> 4) == 14 ? 3
                     : (lead >> 3) == 30 ? 4
                                         : 0;
  if (length == 0 || *i + length > text.size()) return -1;
  int32_t code = length == 1 ? lead : lead & (0x7f >> length);
  for (int k = 1; k < length; ++k) {
    if ((byte(*i + k) & 0xc0) != 0x80) return -1;
    code = (code << 6) | (byte(*i + k) & 0x3f);
  }
  *i += length;
  return code;
}

// Python's whitespace: Unicode White_Space-like set that str.isspace() accepts (bidirectional
// class WS, B or S, or category Zs).
bool IsPythonSpaceCodePoint(int32_t c) {
  return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f ||
         c == 0x205f || c == 0x3000;
}

}  // namespace

MlmExampleView ViewOf(const MlmExample& example) {
  return MlmExampleView{example.input_ids, example.special_tokens_mask, example.word_ids};
}

bool IsPythonSpace(std::string_view text) {
  if (text.empty()) return false;
  for (size_t i = 0; i < text.size();) {
    if (!IsPythonSpaceCodePoint(NextCodePoint(text, &i))) return false;
  }
  return true;
}

absl::StatusOr<std::vector<MlmExample>> BuildMlmExamples(const std::vector<std::string>& lines,
                                                         const Tokenizer& tokenizer,
                                                         const MlmExampleOptions& options) {
  if (options.max_seq_length <= 0) {
    return absl::InvalidArgumentError("max_seq_length must be > 0 (got " +
                                      std::to_string(options.max_seq_length) + ")");
  }
  if (options.group_lines < 0) {
    return absl::InvalidArgumentError("group_lines must be >= 0 (got " +
                                      std::to_string(options.group_lines) + ")");
  }
  if (options.line_by_line) return LineByLineExamples(lines, tokenizer, options);
  return GroupedExamples(lines, tokenizer, options);
}

absl::StatusOr<MlmExampleSets> BuildMlmExampleSets(const MlmTextFiles& files,
                                                   const Tokenizer& tokenizer,
                                                   const MlmExampleOptions& options) {
  ASSIGN_OR_RETURN(const TextSplit split,
                   ReadTextSplit(files.train_file, files.validation_file,
                                 files.validation_split_percentage, files.text_column_name));
  MlmExampleSets sets;
  ASSIGN_OR_RETURN(sets.train, BuildMlmExamples(split.train, tokenizer, options));
  if (sets.train.empty()) {
    return absl::FailedPreconditionError("train file " + files.train_file +
                                         " yields no MLM example");
  }
  ASSIGN_OR_RETURN(sets.eval, BuildMlmExamples(split.validation, tokenizer, options));
  return sets;
}

}  // namespace lmtrain
