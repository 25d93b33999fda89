// Tokenizer files as LoadTokenizer (text/tokenizers/tokenizer.h) reads them: a BERT
// vocab.txt, vocab.json + merges.txt (byte-level BPE), and tokenizer.json (BPE or WordPiece).
// The first byte picks the kind; the rest is the file, or for BPE vocab.json and merges.txt
// split at a "====" line. A tokenizer that loads encodes and decodes a fixed text.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_files.h"
#include "text/tokenizers/tokenizer.h"

namespace {

// Hard cases for tokenizers: spaces, punctuation, accents, CJK, an emoji, ill-formed UTF-8.
constexpr std::string_view kText =
    "Hello, world!  It's 3.14 -- na\xc3\xafve caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 "
    "\xf0\x9f\x98\x80 [MASK] <|endoftext|> \xff\xfe end";

std::string LoadPath(uint8_t kind, std::string_view text) {
  using lmtrain::FuzzFile;
  switch (kind % 3) {
    case 0:
      return FuzzFile("wordpiece/vocab.txt", text);
    case 1: {
      const std::vector<std::string_view> parts = lmtrain::FuzzParts(text, 2);
      FuzzFile("bpe/merges.txt", parts[1]);
      return FuzzFile("bpe/vocab.json", parts[0]);
    }
    default:
      return FuzzFile("json/tokenizer.json", text);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lmtrain;
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer = LoadTokenizer(LoadPath(data[0], text));
  if (!tokenizer.ok()) return 0;
  const std::vector<int32_t> ids = (*tokenizer)->Encode(kText);
  (void)(*tokenizer)->Decode(ids);
  (void)(*tokenizer)->EncodeWithOffsets(kText, /*add_special_tokens=*/true);
  TruncationOptions truncation;
  truncation.max_length = 8;
  truncation.stride = 2;
  (void)(*tokenizer)->EncodePair(kText, kText, truncation, /*return_overflowing=*/true);
  return 0;
}
