// Test tokenizers for MLM data.
//
// CharTokenizer: one token per non-space byte (id = the byte), words = whitespace-separated
// runs, and (unless constructed without) a BERT-like template [CLS]=1 ... [SEP]=2 (mask 3,
// pad 0), so grouping and word numbering can be checked with ids read straight off the text.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tests/test_paths.h"
#include "text/tokenizers/tokenizer.h"

namespace lmtrain {
namespace testing_internal {

class CharTokenizer : public Tokenizer {
 public:
  static constexpr int32_t kPad = 0, kCls = 1, kSep = 2, kMask = 3;

  explicit CharTokenizer(bool with_template = true) : with_template_(with_template) {}

  std::vector<int32_t> Encode(std::string_view text) const override {
    std::vector<int32_t> ids;
    for (unsigned char c : text) {
      if (c != ' ') ids.push_back(c);
    }
    return ids;
  }
  std::string Decode(const std::vector<int32_t>& ids) const override {
    std::string text;
    for (int32_t id : ids) text.push_back(static_cast<char>(id));
    return text;
  }
  int32_t VocabSize() const override { return 256; }
  std::string IdToToken(int32_t id) const override { return std::string(1, static_cast<char>(id)); }
  std::optional<int32_t> TokenToId(std::string_view token) const override {
    if (token.size() != 1) return std::nullopt;
    return static_cast<unsigned char>(token[0]);
  }
  std::optional<int32_t> EosId() const override { return std::nullopt; }
  std::optional<int32_t> BosId() const override { return std::nullopt; }
  std::optional<int32_t> PadId() const override { return kPad; }
  std::optional<int32_t> MaskId() const override { return kMask; }
  absl::Status SaveTo(const std::string&) const override {
    return absl::UnimplementedError("not saved");
  }

 protected:
  void PostProcess(Encoding* sequence, int /*index*/, bool /*pair*/,
                   bool add_special_tokens) const override {
    if (!add_special_tokens || !with_template_) return;
    Encoding framed;
    framed.Push(kCls, "[CLS]", {0, 0}, std::nullopt, std::nullopt, 0, true);
    framed.Append(*sequence);
    framed.Push(kSep, "[SEP]", {0, 0}, std::nullopt, std::nullopt, 0, true);
    *sequence = std::move(framed);
  }
  size_t NumTemplateTokens(bool pair) const override { return with_template_ ? (pair ? 3 : 2) : 0; }

 private:
  bool with_template_;
};

// The bert-base-uncased tokenizer: /work/shared/data/tokenizers/bert-base-uncased, else the
// repository's copy of its vocab.txt; null (the test skips) when neither is there.
inline std::unique_ptr<Tokenizer> LoadBertOrNull() {
  for (const std::string& path :
       {std::string("/work/shared/data/tokenizers/bert-base-uncased"),
        std::string(LMTRAIN_SOURCE_DIR) + "/tests/data/tokenizers/bert-base-uncased/vocab.txt"}) {
    if (!std::filesystem::exists(path)) continue;
    absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer = LoadTokenizer(path);
    if (tokenizer.ok()) return std::move(tokenizer).value();
  }
  return nullptr;
}

}  // namespace testing_internal
}  // namespace lmtrain
