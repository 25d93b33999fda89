#include "common/artifact_ref.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace lmtrain {

bool IsArtifactRef(std::string_view value) { return value.substr(0, 9) == "artifact:"; }

bool IsSha256Hex(std::string_view hex) {
  if (hex.size() != 64) return false;
  for (char c : hex) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

absl::StatusOr<ArtifactRef> ParseArtifactRef(std::string_view value) {
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad artifact reference '", std::string(value), "': ", std::string(why),
                     " (expected artifact:sha256:<64 hex digits>[/relative/path])"));
  };
  if (value.substr(0, kArtifactRefPrefix.size()) != kArtifactRefPrefix) {
    return bad("unknown scheme");
  }
  std::string_view rest = value.substr(kArtifactRefPrefix.size());
  ArtifactRef ref;
  const size_t slash = rest.find('/');
  ref.sha256 = std::string(rest.substr(0, slash));
  if (!IsSha256Hex(ref.sha256)) return bad("the hash is not 64 lower-case hex digits");
  if (slash == std::string_view::npos) return ref;
  ref.subpath = std::string(rest.substr(slash + 1));
  for (absl::string_view part : absl::StrSplit(ref.subpath, '/')) {
    if (part.empty() || part == "." || part == "..") {
      return bad("the path inside the folder must be relative, without empty, . or .. parts");
    }
  }
  return ref;
}

std::string FormatArtifactRef(const ArtifactRef& ref) {
  std::string out = std::string(kArtifactRefPrefix) + ref.sha256;
  if (!ref.subpath.empty()) absl::StrAppend(&out, "/", ref.subpath);
  return out;
}

std::vector<SpecPath> SpecPaths(JobSpec& spec) {
  using K = SpecPath::Kind;
  return {{"model.name_or_path", &spec.model.name_or_path, K::kDirectory},
          {"tokenizer.path", &spec.tokenizer.path, K::kAny},
          {"data.train_file", &spec.data.train_file, K::kFile},
          {"data.validation_file", &spec.data.validation_file, K::kFile},
          {"data.test_file", &spec.data.test_file, K::kFile},
          {"data.data_dir", &spec.data.data_dir, K::kDirectory}};
}

}  // namespace lmtrain
