// A byte-level Tokenizer for tests: one id per byte (vocabulary 256), eos = '\n' (10).
#pragma once

#include <string>
#include <vector>

#include "text/tokenizers/tokenizer.h"

namespace lmtrain {

class ByteTokenizer : public Tokenizer {
 public:
  std::vector<int32_t> Encode(std::string_view text) const override {
    std::vector<int32_t> ids;
    for (unsigned char c : text) ids.push_back(c);
    return ids;
  }
  std::string Decode(const std::vector<int32_t>& ids) const override {
    std::string text;
    for (int32_t id : ids) text.push_back(static_cast<char>(id));
    return text;
  }
  int32_t VocabSize() const override { return 256; }
  std::string IdToToken(int32_t id) const override {
    return id >= 0 && id < 256 ? std::string(1, static_cast<char>(id)) : "";
  }
  std::optional<int32_t> TokenToId(std::string_view token) const override {
    if (token.size() != 1) return std::nullopt;
    return static_cast<unsigned char>(token[0]);
  }
  std::optional<int32_t> EosId() const override { return 10; }
  std::optional<int32_t> BosId() const override { return std::nullopt; }
  std::optional<int32_t> PadId() const override { return std::nullopt; }
  absl::Status SaveTo(const std::string&) const override {
    return absl::UnimplementedError("ByteTokenizer is not saved");
  }
};

}  // namespace lmtrain
