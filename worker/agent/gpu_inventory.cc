#include "worker/agent/gpu_inventory.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace lmtrain {

absl::StatusOr<std::vector<GpuDevice>> DeclaredGpuInventory::List() {
  std::map<int, GpuDevice> known;
  if (details_ != nullptr) {
    auto listed = details_->List();
    if (listed.ok()) {
      for (GpuDevice& d : *listed) known[d.index] = std::move(d);
    }
  }
  std::vector<GpuDevice> out;
  for (int index : indices_) {
    auto it = known.find(index);
    if (it != known.end()) {
      out.push_back(it->second);
    } else {
      out.push_back({index, absl::StrCat("GPU ", index, " (declared)"), 0, ""});
    }
  }
  return out;
}

absl::StatusOr<std::vector<int>> ParseGpuList(std::string_view text) {
  const std::string value(absl::StripAsciiWhitespace(absl::string_view(text.data(), text.size())));
  if (value.empty() || value == "none") return std::vector<int>{};
  std::set<int> indices;
  for (absl::string_view item : absl::StrSplit(value, ',')) {
    int index = -1;
    if (!absl::SimpleAtoi(item, &index) || index < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--gpus: expected 'none' or GPU indices like 0,1 (got '", std::string(item), "')"));
    }
    if (!indices.insert(index).second) {
      return absl::InvalidArgumentError(absl::StrCat("--gpus: GPU ", index, " is listed twice"));
    }
  }
  return std::vector<int>(indices.begin(), indices.end());
}

}  // namespace lmtrain
