#include "text/dataset_cache/cache_key.h"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <utility>

#include "common/sha256.h"
#include "common/status_macros.h"
#include "text/dataset_cache/dataset_file.h"

namespace lmtrain {
namespace {

namespace fs = std::filesystem;

constexpr const char* kTokenizerFileNames[] = {"tokenizer.json",
                                               "vocab.txt",
                                               "vocab.json",
                                               "merges.txt",
                                               "spiece.model",
                                               "tokenizer.model",
                                               "tokenizer_config.json",
                                               "special_tokens_map.json",
                                               "added_tokens.json"};

// "<tag> <length>:<bytes>\n": a length prefix makes the serialisation unambiguous.
void AddField(Sha256* hash, std::string_view tag, std::string_view bytes) {
  hash->Update(tag);
  hash->Update(" " + std::to_string(bytes.size()) + ":");
  hash->Update(bytes);
  hash->Update("\n");
}

absl::Status AddFiles(Sha256* hash, std::string_view tag, std::vector<std::string> paths,
                      bool with_names) {
  std::vector<std::pair<std::string, std::string>> entries;  // (name, content digest)
  for (const std::string& path : paths) {
    ASSIGN_OR_RETURN(const Sha256Digest digest, Sha256OfFile(path));
    entries.emplace_back(with_names ? fs::path(path).filename().string() : "", DigestHex(digest));
  }
  if (with_names) std::sort(entries.begin(), entries.end());
  AddField(hash, tag, std::to_string(entries.size()));
  for (const auto& [name, digest] : entries) AddField(hash, tag, name + " " + digest);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> ComputeCacheKey(const CacheKeyInputs& inputs) {
  Sha256 hash;
  AddField(&hash, "lmtrain-dataset-cache-key", "1");
  AddField(&hash, "file-format", std::to_string(kDatasetFileVersion));
  AddField(&hash, "preprocessing", inputs.preprocessing_version);
  RETURN_IF_ERROR(AddFiles(&hash, "data", inputs.data_files, /*with_names=*/false));
  RETURN_IF_ERROR(AddFiles(&hash, "tokenizer", inputs.tokenizer_files, /*with_names=*/true));
  AddField(&hash, "options", inputs.options.dump());
  ASSIGN_OR_RETURN(const Sha256Digest digest, hash.Finish());
  return DigestHex(digest);
}

absl::StatusOr<std::vector<std::string>> TokenizerFilesIn(const std::string& path) {
  std::error_code ec;
  std::vector<std::string> files;
  if (fs::is_directory(path, ec)) {
    for (const char* name : kTokenizerFileNames) {
      const fs::path candidate = fs::path(path) / name;
      if (fs::is_regular_file(candidate, ec)) files.push_back(candidate.string());
    }
    if (files.empty()) return absl::NotFoundError("no tokenizer file in folder " + path);
  } else if (fs::is_regular_file(path, ec)) {
    files.push_back(path);
    const fs::path merges = fs::path(path).parent_path() / "merges.txt";
    if (fs::path(path).filename() == "vocab.json" && fs::is_regular_file(merges, ec)) {
      files.push_back(merges.string());
    }
  } else {
    return absl::NotFoundError("tokenizer path " + path + " does not exist");
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool IsValidCacheKey(std::string_view key) {
  return key.size() == 64 && std::all_of(key.begin(), key.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

}  // namespace lmtrain
