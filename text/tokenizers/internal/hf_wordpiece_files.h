// Readers for WordPiece (BERT) tokenizer files: a vocab.txt (with the
// tokenizer_config.json that may sit beside it) or an HF tokenizer.json whose
// model is WordPiece.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "text/tokenizers/internal/bert_normalizer.h"

namespace lmtrain::tokenizers_internal {

// A special token of the post-processing template.
struct TemplateToken {
  std::string token;
  int32_t type_id = 0;
};

// Everything a WordPieceTokenizer is built from. Defaults are BERT's.
struct WordPieceFiles {
  std::vector<std::string> id_to_token;  // By id; "" for unused ids.
  std::string unk_token = "[UNK]";
  std::string prefix = "##";  // continuing_subword_prefix
  size_t max_input_chars_per_word = 100;
  BertNormalizerOptions normalizer;
  // Added tokens, matched in the raw text before normalization.
  std::vector<std::string> added_tokens;
  // Roles ("" when absent).
  std::string cls_token = "[CLS]";
  std::string sep_token = "[SEP]";
  std::string pad_token = "[PAD]";
  std::string mask_token = "[MASK]";
  // Template: single input = single_before A single_after; pair =
  // pair_before A pair_between B pair_after.
  std::vector<TemplateToken> single_before{{"[CLS]", 0}};
  std::vector<TemplateToken> single_after{{"[SEP]", 0}};
  std::vector<TemplateToken> pair_before{{"[CLS]", 0}};
  std::vector<TemplateToken> pair_between{{"[SEP]", 0}};
  std::vector<TemplateToken> pair_after{{"[SEP]", 1}};
  std::string source;  // File named in errors.
};

// vocab.txt: one token per line (trailing whitespace trimmed), id = line
// number - 1. A tokenizer_config.json beside it may set do_lower_case,
// strip_accents, tokenize_chinese_chars and the unk/cls/sep/pad/mask tokens.
// NotFound when missing; InvalidArgument naming the file for bad content.
absl::StatusOr<WordPieceFiles> ReadVocabTxt(const std::string& path);

// tokenizer.json with model.type "WordPiece", a BertNormalizer (or none), a
// BertPreTokenizer and a BertProcessing or
// TemplateProcessing post-processor (or none: no template). Added tokens are
// all matched in the raw text. Unimplemented naming the file for other
// pipelines; InvalidArgument for malformed content.
absl::StatusOr<WordPieceFiles> ReadWordPieceTokenizerJson(const std::string& path);

// model.type of a tokenizer.json ("BPE", "WordPiece", ...). NotFound /
// InvalidArgument naming the file.
absl::StatusOr<std::string> ReadTokenizerJsonModelType(const std::string& path);

}  // namespace lmtrain::tokenizers_internal
