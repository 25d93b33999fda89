#include "server/artifacts/data_roots.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/artifact_ref.h"

namespace lmtrain {
namespace fs = std::filesystem;
namespace {

// Symlinks resolved for the part of the path that exists; the rest normalised lexically.
fs::path Resolve(const std::string& path) {
  std::error_code ec;
  fs::path resolved = fs::weakly_canonical(fs::path(path), ec);
  if (ec) resolved = fs::path(path).lexically_normal();
  return resolved.lexically_normal();
}

fs::path WithoutTrailingSlash(fs::path p) {
  std::string s = p.string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

// Both resolved: `path` is `root` or below it ("/a/bc" is not below "/a/b").
bool IsUnderResolved(const fs::path& path, const fs::path& root) {
  const fs::path rel = WithoutTrailingSlash(path).lexically_relative(WithoutTrailingSlash(root));
  return !rel.empty() && *rel.begin() != "..";
}

}  // namespace

bool IsUnderRoot(const std::string& path, const std::string& root) {
  if (!fs::path(path).is_absolute()) return false;
  return IsUnderResolved(Resolve(path), Resolve(root));
}

absl::Status CheckJobPaths(const JobSpec& spec, const std::string& output_dir,
                           const std::vector<std::string>& roots,
                           const std::string& artifacts_dir) {
  if (roots.empty()) return absl::OkStatus();
  std::vector<std::string> problems;
  auto check = [&](const std::string& key, const std::string& value,
                   const std::vector<std::string>& allowed, const std::string& what) {
    if (value.empty() || IsArtifactRef(value)) return;
    if (!fs::path(value).is_absolute()) {
      problems.push_back(absl::StrCat(key, ": '", value, "' must be an absolute path under ", what,
                                      " (", absl::StrJoin(allowed, ", "), ")"));
      return;
    }
    for (const std::string& root : allowed) {
      if (IsUnderRoot(value, root)) return;
    }
    problems.push_back(absl::StrCat(key, ": ", value, " (resolves to ", Resolve(value).string(),
                                    ") is outside ", what, " (", absl::StrJoin(allowed, ", "),
                                    ")"));
  };
  JobSpec copy = spec;
  for (const SpecPath& p : SpecPaths(copy)) check(p.key, *p.value, roots, "the data roots");
  const std::string& resume = spec.training.resume_from_checkpoint;
  if (resume != "latest" && resume != "true" && resume != "false") {
    std::vector<std::string> readable = roots;
    readable.push_back(artifacts_dir);
    check("training.resume_from_checkpoint", resume, readable,
          "the data roots or the artifacts dir");
  }
  check("output_dir", output_dir, {artifacts_dir}, "the artifacts dir");
  if (problems.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrJoin(problems, "\n"));
}

}  // namespace lmtrain
