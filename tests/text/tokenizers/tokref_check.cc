#include "tests/text/tokenizers/tokref_check.h"

#include <filesystem>
#include <fstream>
#include <vector>

#include "gtest/gtest.h"
#include "tests/text/tokenizers/tokenizer_test_util.h"
#include "text/tokenizers/internal/unicode_text.h"

namespace lmtrain::tokenizer_testing {
namespace {

using Json = nlohmann::json;
namespace ti = tokenizers_internal;

constexpr int kMaxReported = 5;

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

template <typename T>
Json OptionalList(const std::vector<std::optional<T>>& values) {
  Json out = Json::array();
  for (const auto& v : values) out.push_back(v ? Json(*v) : Json(nullptr));
  return out;
}

// Fields of `want` that `got` does not reproduce ("" when all match).
std::string Differences(const Json& want, const Json& got) {
  std::string out;
  for (const auto& [key, value] : want.items()) {
    if (!got.contains(key)) continue;  // Inputs (text, question, ...).
    if (got[key] != value) {
      out += "\n  " + key + "\n    want " + value.dump() + "\n    got  " + got[key].dump();
    }
  }
  return out;
}

TruncationStrategy StrategyNamed(const std::string& name) {
  if (name == "only_first") return TruncationStrategy::kOnlyFirst;
  if (name == "only_second") return TruncationStrategy::kOnlySecond;
  return TruncationStrategy::kLongestFirst;
}

std::string CheckSingle(const Tokenizer& tokenizer, const Json& want) {
  const std::string text = want.at("text").get<std::string>();
  return Differences(want, EncodingToTokrefJson(tokenizer.EncodeWithOffsets(text, true), text));
}

std::string CheckPair(const Tokenizer& tokenizer, const Json& want) {
  const std::string question = want.at("question").get<std::string>();
  const std::string context = want.at("context").get<std::string>();
  TruncationOptions options;
  options.max_length = want.at("max_length").get<size_t>();
  options.stride = want.at("stride").get<size_t>();
  options.strategy = StrategyNamed(want.at("truncation").get<std::string>());
  auto windows = tokenizer.EncodePair(question, context, options, true);
  if (!windows.ok()) return "\n  " + windows.status().ToString();
  const Json& want_windows = want.at("windows");
  std::string out;
  if (windows->size() != want_windows.size()) {
    out += "\n  " + std::to_string(windows->size()) + " windows, want " +
           std::to_string(want_windows.size());
  }
  for (size_t i = 0; i < windows->size() && i < want_windows.size(); ++i) {
    const std::string diff =
        Differences(want_windows[i], EncodingToTokrefJson((*windows)[i], question, context));
    if (!diff.empty()) out += "\n  window " + std::to_string(i) + ":" + diff;
  }
  return out;
}

}  // namespace

size_t TokrefByteOffset(std::string_view text, size_t byte_offset) {
  size_t chars = 0;  // Characters before byte_offset: HF's char offset.
  for (size_t pos = 0; pos < byte_offset && pos < text.size();) {
    pos += ti::DecodeUtf8At(text, pos).length;
    ++chars;
  }
  size_t units = 0;  // Read as UTF-16 units: the character holding unit `chars`.
  for (size_t pos = 0; pos < text.size();) {
    const ti::DecodedChar c = ti::DecodeUtf8At(text, pos);
    const size_t width = c.code_point > 0xFFFF ? 2 : 1;
    if (chars < units + width) return pos;
    units += width;
    pos += c.length;
  }
  return text.size();
}

Json EncodingToTokrefJson(const Encoding& encoding, std::string_view text,
                          std::string_view second_text) {
  Json offsets = Json::array();
  for (size_t i = 0; i < encoding.size(); ++i) {
    const auto [begin, end] = encoding.offsets[i];
    const std::string_view source = encoding.sequence_ids[i] == 1 ? second_text : text;
    if (begin == 0 && end == 0) {
      offsets.push_back({0, 0});
    } else {
      offsets.push_back({TokrefByteOffset(source, begin), TokrefByteOffset(source, end)});
    }
  }
  return {{"ids", encoding.ids},
          {"tokens", encoding.tokens},
          {"offsets", offsets},
          {"type_ids", encoding.type_ids},
          {"special_tokens_mask", encoding.special_tokens_mask},
          {"word_ids", OptionalList(encoding.word_ids)},
          {"sequence_ids", OptionalList(encoding.sequence_ids)}};
}

TokrefStats CheckTokrefFile(const Tokenizer& tokenizer, const std::string& path) {
  const bool pairs = EndsWith(path, ".pairs.jsonl");
  std::ifstream in(path);
  if (!in) ADD_FAILURE() << "cannot read " << path;
  TokrefStats stats;
  std::string raw;
  for (int number = 1; std::getline(in, raw); ++number) {
    if (raw.empty()) continue;
    const Json want = Json::parse(raw);
    const std::string diff = pairs ? CheckPair(tokenizer, want) : CheckSingle(tokenizer, want);
    ++stats.total;
    if (diff.empty()) {
      ++stats.matched;
    } else if (stats.total - stats.matched <= kMaxReported) {
      ADD_FAILURE() << path << ":" << number << ": " << raw.substr(0, 200) << diff;
    }
  }
  return stats;
}

std::optional<std::string> TokenizerDirForStem(const std::string& stem) {
  for (const std::string& dir :
       {SourcePath("tests/data/tokenizers/" + stem), TokrefDir() + "/../tokenizers/" + stem}) {
    if (std::filesystem::is_directory(dir)) return dir;
  }
  return std::nullopt;
}

}  // namespace lmtrain::tokenizer_testing
