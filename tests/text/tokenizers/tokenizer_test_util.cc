#include "tests/text/tokenizers/tokenizer_test_util.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/test_paths.h"

namespace lmtrain::tokenizer_testing {

std::string SourcePath(std::string_view relative) {
  return std::string(LMTRAIN_SOURCE_DIR) + "/" + std::string(relative);
}

std::string Gpt2TestDir() { return SourcePath("tests/data/tokenizers/gpt2"); }

std::string TokrefDir() {
  const char* env = std::getenv("LMTRAIN_TOKREF_DIR");
  if (env != nullptr && env[0] != '\0') return env;
  return SourcePath("../shared/data/tokref");
}

ScopedTempDir::ScopedTempDir() {
  std::string pattern = ::testing::TempDir() + "lmtrain_tok_XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed for " << pattern;
  path_ = pattern;
}

ScopedTempDir::~ScopedTempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string ScopedTempDir::File(std::string_view name) const {
  return path_ + "/" + std::string(name);
}

void WriteTextFile(const std::string& path, std::string_view contents) {
  std::ofstream out(path, std::ios::binary);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  if (!out) ADD_FAILURE() << "cannot write " << path;
}

std::string ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) ADD_FAILURE() << "cannot read " << path;
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

std::vector<TokrefLine> ReadTokref(const std::string& path) {
  std::ifstream in(path);
  if (!in) ADD_FAILURE() << "cannot read " << path;
  std::vector<TokrefLine> lines;
  std::string raw;
  for (int number = 1; std::getline(in, raw); ++number) {
    if (raw.empty()) continue;
    const nlohmann::json json = nlohmann::json::parse(raw);
    lines.push_back({number, json.at("text").get<std::string>(),
                     json.at("ids").get<std::vector<int32_t>>(),
                     json.at("tokens").get<std::vector<std::string>>()});
  }
  return lines;
}

namespace {

template <typename T>
std::string Join(const std::vector<T>& items) {
  std::ostringstream out;
  for (size_t i = 0; i < items.size(); ++i) out << (i ? " " : "") << items[i];
  return out.str();
}

}  // namespace

void ExpectTokrefParity(const Tokenizer& tokenizer, const std::vector<TokrefLine>& lines,
                        const std::string& source) {
  int failures = 0;
  for (const TokrefLine& line : lines) {
    const std::vector<int32_t> ids = tokenizer.Encode(line.text);
    std::vector<std::string> tokens;
    for (int32_t id : ids) tokens.push_back(tokenizer.IdToToken(id));
    const bool same =
        ids == line.ids && tokens == line.tokens && tokenizer.Decode(line.ids) == line.text;
    if (!same && ++failures <= 10) {
      ADD_FAILURE() << source << ":" << line.line_number << ": text \"" << line.text << "\"\n"
                    << "  want ids " << Join(line.ids) << "\n  got  ids " << Join(ids)
                    << "\n  want tokens " << Join(line.tokens) << "\n  got  tokens " << Join(tokens)
                    << "\n  decoded \"" << tokenizer.Decode(line.ids) << "\"";
    }
  }
  EXPECT_EQ(failures, 0) << "of " << lines.size() << " lines in " << source;
}

void CopyGpt2Files(const std::string& dir) {
  for (const char* name : {"vocab.json", "merges.txt"}) {
    std::filesystem::copy_file(Gpt2TestDir() + "/" + name, dir + "/" + name);
  }
}

}  // namespace lmtrain::tokenizer_testing
