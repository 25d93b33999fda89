// Shared helpers for the tokenizer tests: data paths, temporary folders, tokref
// files.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tests/test_paths.h"
#include "text/tokenizers/tokenizer.h"

namespace lmtrain::tokenizer_testing {

// LMTRAIN_SOURCE_DIR/`relative`.
std::string SourcePath(std::string_view relative);

// The GPT-2 vocab.json + merges.txt shipped in tests/data/tokenizers/gpt2.
std::string Gpt2TestDir();

// The shared Hugging Face reference folder: $LMTRAIN_TOKREF_DIR, else
// LMTRAIN_SOURCE_DIR/../shared/data/tokref.
std::string TokrefDir();

// A new empty folder under the test temp dir, deleted with everything in it on
// destruction.
class ScopedTempDir {
 public:
  ScopedTempDir();
  ~ScopedTempDir();
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;
  const std::string& path() const { return path_; }
  // path()/name.
  std::string File(std::string_view name) const;

 private:
  std::string path_;
};

// Writes `contents` to `path` (test failure on error).
void WriteTextFile(const std::string& path, std::string_view contents);
std::string ReadTextFile(const std::string& path);

// One line of a tokref .jsonl file.
struct TokrefLine {
  int line_number;
  std::string text;
  std::vector<int32_t> ids;
  std::vector<std::string> tokens;
};
std::vector<TokrefLine> ReadTokref(const std::string& path);

// Adds a test failure for each line (of `source`) whose ids or tokens differ
// from `tokenizer`'s, or whose ids do not decode back to the text, with both
// sides printed (the first 10 only).
void ExpectTokrefParity(const Tokenizer& tokenizer, const std::vector<TokrefLine>& lines,
                        const std::string& source);

// Copies the shipped GPT-2 files into `dir`.
void CopyGpt2Files(const std::string& dir);

}  // namespace lmtrain::tokenizer_testing
