#include "server/gpu_assignment.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace lmtrain {

absl::StatusOr<std::vector<std::vector<int>>> PickGpus(const std::vector<int>& devices,
                                                       const std::set<int>& held, int ranks,
                                                       int per_rank) {
  std::set<int> free(devices.begin(), devices.end());
  for (int index : held) free.erase(index);
  const int needed = ranks * per_rank;
  if (static_cast<int>(free.size()) < needed) {
    return absl::ResourceExhaustedError(absl::StrCat("needs ", needed, " free GPUs, ",
                                                     free.size(), " are free"));
  }
  std::vector<std::vector<int>> out(ranks);
  auto it = free.begin();
  for (std::vector<int>& rank : out) {
    for (int i = 0; i < per_rank; ++i) rank.push_back(*it++);
  }
  return out;
}

std::string DescribeRankGpus(int rank, const std::string& worker_id, const std::vector<int>& gpus) {
  if (gpus.empty()) return "";
  return absl::StrCat("rank ", rank, " on ", worker_id, gpus.size() == 1 ? " GPU " : " GPUs ",
                      absl::StrJoin(gpus, ","));
}

}  // namespace lmtrain
