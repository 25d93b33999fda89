#include "server/artifacts/checkpoint_files.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "server/artifacts/data_roots.h"

namespace lmtrain {
namespace fs = std::filesystem;
namespace {

// Steps of the checkpoint-N folders directly under `output_dir`.
std::vector<int64_t> CheckpointSteps(const std::string& output_dir) {
  std::vector<int64_t> steps;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(output_dir, ec)) {
    const std::string name = entry.path().filename().string();
    int64_t step = 0;
    if (!entry.is_directory(ec) || !absl::StartsWith(name, "checkpoint-")) continue;
    if (absl::SimpleAtoi(name.substr(11), &step) && step >= 0) steps.push_back(step);
  }
  std::sort(steps.begin(), steps.end());
  return steps;
}

}  // namespace

absl::StatusOr<CheckpointFiles> FindCheckpointFiles(const std::string& output_dir,
                                                    std::optional<int64_t> step) {
  const std::vector<int64_t> steps = CheckpointSteps(output_dir);
  if (steps.empty()) {
    return absl::NotFoundError(absl::StrCat("no checkpoint-N folder in ", output_dir));
  }
  CheckpointFiles out;
  out.step = step.value_or(steps.back());
  if (std::find(steps.begin(), steps.end(), out.step) == steps.end()) {
    return absl::NotFoundError(absl::StrCat("no checkpoint-", out.step, " in ", output_dir,
                                            " (have steps ", steps.front(), "..", steps.back(),
                                            ")"));
  }
  out.dir = absl::StrCat(output_dir, "/checkpoint-", out.step);
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(out.dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    const std::string path = it->path().string();
    if (!IsUnderRoot(path, out.dir)) {
      return absl::PermissionDeniedError(
          absl::StrCat(path, " resolves outside the checkpoint folder ", out.dir));
    }
    out.files.push_back(it->path().lexically_relative(out.dir).generic_string());
  }
  if (ec) return absl::InternalError(absl::StrCat("cannot list ", out.dir, ": ", ec.message()));
  std::sort(out.files.begin(), out.files.end());
  return out;
}

}  // namespace lmtrain
