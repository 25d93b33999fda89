// Artifact references in job files: a path value `artifact:sha256:<64 hex>` names a blob of
// lm-server's content-addressed artifact store instead of a local path, and
// `artifact:sha256:<hex>/<relative/path>` names a file inside a folder manifest artifact
// (see artifacts/folder_manifest.h). lmctl writes them when it uploads what a job
// names; lm-worker replaces them with paths in its local cache before starting lm-train.
//
// SpecPaths() lists the job spec fields that hold local paths (data, tokenizer, model), so
// that the uploader, the worker's cache and the server's data-roots check walk the same set.
// Thread-safe: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/job_spec.h"

namespace lmtrain {

inline constexpr std::string_view kArtifactRefPrefix = "artifact:sha256:";

struct ArtifactRef {
  std::string sha256;   // 64 lower-case hex digits.
  std::string subpath;  // "" or a relative '/'-separated path inside a folder manifest.
};

// True when `value` starts with "artifact:" (well-formed or not: ParseArtifactRef says).
bool IsArtifactRef(std::string_view value);

// True for exactly 64 lower-case hex digits.
bool IsSha256Hex(std::string_view hex);

// InvalidArgument naming `value` unless it is artifact:sha256:<64 hex>[/<relative path>]
// with no empty, "." or ".." component in the path.
absl::StatusOr<ArtifactRef> ParseArtifactRef(std::string_view value);

// "artifact:sha256:<hex>" plus "/<subpath>" when set.
std::string FormatArtifactRef(const ArtifactRef& ref);

// A path-valued field of a job spec.
struct SpecPath {
  enum class Kind { kFile, kDirectory, kAny };
  std::string key;     // Dotted key, e.g. "data.train_file".
  std::string* value;  // Points into the spec; may be empty (field unset).
  Kind kind;
};

// model.name_or_path, tokenizer.path, data.train_file, data.validation_file, data.test_file,
// data.data_dir, in that order (pointers into `spec`, valid while it lives).
std::vector<SpecPath> SpecPaths(JobSpec& spec);

}  // namespace lmtrain
