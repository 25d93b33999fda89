#include "text/clm/text_dataset.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <utility>

#include "common/parallel_map.h"

namespace lmtrain {
namespace {

// Splits `text` at "\n", "\r\n" or "\r"; no empty line after a final break. With
// `keep_linebreaks`, each line ends with "\n" where it had a break.
std::vector<std::string> SplitLines(const std::string& text, bool keep_linebreaks) {
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\n' && text[i] != '\r') continue;
    lines.emplace_back(text, start, i - start);
    if (keep_linebreaks) lines.back() += '\n';
    if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
    start = i + 1;
  }
  if (start < text.size()) lines.emplace_back(text, start, text.size() - start);
  return lines;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ReadTextLines(const std::string& path,
                                                       bool keep_linebreaks) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError("cannot open text file " + path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return absl::DataLossError("error reading text file " + path);
  return SplitLines(text, keep_linebreaks);
}

TextSplit SplitOffValidation(std::vector<std::string> lines, int percentage) {
  const size_t n = lines.size();
  // HF: validation = train[:p%], train = train[p%:]; datasets rounds with Python's round()
  // (half to even), which nearbyint does in the default rounding mode.
  const size_t held_out =
      std::min(n, static_cast<size_t>(std::nearbyint(static_cast<double>(n) * percentage / 100.0)));
  TextSplit split;
  split.validation.assign(std::make_move_iterator(lines.begin()),
                          std::make_move_iterator(lines.begin() + held_out));
  split.train.assign(std::make_move_iterator(lines.begin() + held_out),
                     std::make_move_iterator(lines.end()));
  return split;
}

std::vector<TokenIds> TokenizeLines(const std::vector<std::string>& lines,
                                    const Tokenizer& tokenizer, int workers) {
  return ParallelMap(lines.size(), workers, [&](size_t i) { return tokenizer.Encode(lines[i]); });
}

std::vector<TokenIds> GroupTexts(absl::Span<const TokenIds> examples, int block_size) {
  TokenIds all;
  all.reserve(CountTokens(examples));
  for (const TokenIds& ids : examples) all.insert(all.end(), ids.begin(), ids.end());
  std::vector<TokenIds> blocks;
  const size_t num_blocks = block_size > 0 ? all.size() / block_size : 0;
  blocks.reserve(num_blocks);
  for (size_t b = 0; b < num_blocks; ++b) {
    auto first = all.begin() + b * block_size;
    blocks.emplace_back(first, first + block_size);
  }
  return blocks;
}

std::vector<TokenIds> GroupTextsInBatches(const std::vector<TokenIds>& examples, int block_size,
                                          size_t batch_size) {
  std::vector<TokenIds> blocks;
  for (size_t first = 0; first < examples.size(); first += batch_size) {
    const size_t end = std::min(examples.size(), first + batch_size);
    const absl::Span<const TokenIds> batch =
        absl::MakeConstSpan(examples).subspan(first, end - first);
    for (TokenIds& block : GroupTexts(batch, block_size)) blocks.push_back(std::move(block));
  }
  return blocks;
}

std::vector<TokenIds> LineByLineExamples(const std::vector<TokenIds>& examples, int block_size) {
  std::vector<TokenIds> out;
  for (const TokenIds& ids : examples) {
    const size_t keep = std::min(ids.size(), static_cast<size_t>(block_size));
    if (keep < 2) continue;
    out.emplace_back(ids.begin(), ids.begin() + keep);
  }
  return out;
}

int64_t CountTokens(absl::Span<const TokenIds> examples) {
  int64_t total = 0;
  for (const TokenIds& ids : examples) total += static_cast<int64_t>(ids.size());
  return total;
}

}  // namespace lmtrain
