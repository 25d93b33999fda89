// Cache keys for tokenised datasets: a SHA-256 over everything that shapes a dataset's
// contents, so that a changed input, tokenizer or option gives a new key (and a rebuild) and
// an unchanged one finds the cached file. Torch-free.
//
// What is hashed, each part length-prefixed so that no two different inputs serialise alike:
//   - the dataset file format version (kDatasetFileVersion in dataset_file.h);
//   - `preprocessing_version`, a caller-chosen string to bump when the preprocessing code's
//     output changes for the same inputs (e.g. "mlm-examples-1");
//   - the contents of every data file, in the order given (names and paths are not hashed:
//     moving a file keeps its key);
//   - the contents of every tokenizer file with its base name, sorted by base name;
//   - `options.dump()`: nlohmann::json orders object keys, so the string is canonical.
// Thread-safe: pure functions (they read files).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace lmtrain {

struct CacheKeyInputs {
  std::vector<std::string> data_files;       // Default none. Hashed by content, in order.
  std::vector<std::string> tokenizer_files;  // Default none. See TokenizerFilesIn.
  std::string preprocessing_version;         // Default "".
  // The options that shape preprocessing (max_seq_length, line_by_line, ...). Default null.
  nlohmann::json options;
};

// The key: 64 lower-case hex characters. NotFound / DataLoss (naming the file) when a file
// cannot be read.
absl::StatusOr<std::string> ComputeCacheKey(const CacheKeyInputs& inputs);

// The files a tokenizer at `path` is read from, for CacheKeyInputs::tokenizer_files:
//   - a folder: those present of tokenizer.json, vocab.txt, vocab.json, merges.txt,
//     spiece.model, tokenizer.model, tokenizer_config.json, special_tokens_map.json,
//     added_tokens.json (not the model weights that often share the folder);
//   - a file: the file, plus merges.txt beside it when the file is a vocab.json.
// Sorted by path. NotFound when `path` does not exist or a folder holds none of those files.
absl::StatusOr<std::vector<std::string>> TokenizerFilesIn(const std::string& path);

// True for 64 lower-case hex characters (what ComputeCacheKey returns).
bool IsValidCacheKey(std::string_view key);

}  // namespace lmtrain
