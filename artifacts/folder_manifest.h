// Folder manifests: how a folder a job names (a GLUE data_dir, a pretrained model, a tokenizer
// folder) travels through the content-addressed artifact store. Each file is its own blob;
// the manifest, itself a blob, lists relative path -> size and SHA-256:
//
//   {"format": "lmtrain-folder/1",
//    "files": [{"path": "config.json", "size": 512, "sha256": "9f86d0..."}, ...]}
//
// Paths are '/'-separated, relative, sorted, without empty, "." or ".." parts. The JSON text
// is canonical (sorted keys, no spaces), so the same folder always gives the same hash.
// Thread-safe: pure functions (Build reads the folder).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace lmtrain {

inline constexpr char kFolderManifestFormat[] = "lmtrain-folder/1";

struct FolderManifest {
  struct File {
    std::string path;
    int64_t size = 0;
    std::string sha256;
  };
  std::vector<File> files;  // Sorted by path.
};

// Hashes every regular file below `dir` (following file symlinks). NotFound when `dir` is not
// a folder; DataLoss naming a file that cannot be read.
absl::StatusOr<FolderManifest> BuildFolderManifest(const std::string& dir);

// A relative path with no empty, "." or ".." part: it names a file inside the folder it is
// joined to (manifest entries, checkpoint files streamed by the server).
bool IsCleanRelative(const std::string& path);

// A manifest of the listed files of `dir` only (e.g. vocab.json + merges.txt).
absl::StatusOr<FolderManifest> BuildFileListManifest(const std::string& dir,
                                                     const std::vector<std::string>& names);

std::string FolderManifestToJson(const FolderManifest& manifest);

// InvalidArgument naming the problem when `text` is not a valid manifest.
absl::StatusOr<FolderManifest> ParseFolderManifest(const std::string& text);

}  // namespace lmtrain
