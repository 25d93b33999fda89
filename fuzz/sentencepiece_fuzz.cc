// Sentencepiece .model files, loaded through the dlopen()ed shim (text/spm) as
// SentencePieceTokenizer::FromSerialized does. A model that loads encodes and decodes a text.
#include <cstdint>
#include <string>

#include "text/tokenizers/sentencepiece_tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lmtrain;
  std::string bytes(reinterpret_cast<const char*>(data), size);
  auto tokenizer = SentencePieceTokenizer::FromSerialized(std::move(bytes), "spiece.model");
  if (!tokenizer.ok()) return 0;
  const std::vector<int32_t> ids = (*tokenizer)->Encode("Hello, world! na\xc3\xafve <mask> \xff");
  (void)(*tokenizer)->Decode(ids);
  (void)(*tokenizer)->EncodeWithOffsets("Hello, world!", /*add_special_tokens=*/true);
  return 0;
}
