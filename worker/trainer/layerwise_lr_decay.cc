#include "worker/trainer/layerwise_lr_decay.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace lmtrain {
namespace {

constexpr int kEmbeddings = -1;
constexpr int kHead = -2;

// The layer index of `name`, kEmbeddings or kHead.
int DepthOf(const std::string& name) {
  const std::vector<std::string> parts = absl::StrSplit(name, '.');
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    int index = 0;
    if ((parts[i] == "layer" || parts[i] == "h") && absl::SimpleAtoi(parts[i + 1], &index)) {
      return index;
    }
  }
  for (const std::string& part : parts) {
    if (absl::StrContains(part, "embeddings") || part == "wte" || part == "wpe") {
      return kEmbeddings;
    }
  }
  return kHead;
}

}  // namespace

absl::StatusOr<std::vector<double>> LayerwiseLrScales(const std::vector<std::string>& names,
                                                      double decay) {
  if (!(decay > 0 && decay <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("training.layerwise_lr_decay must be in (0, 1] (got ", decay, ")"));
  }
  std::vector<int> depths;
  int num_layers = 0;
  for (const std::string& name : names) {
    depths.push_back(DepthOf(name));
    num_layers = std::max(num_layers, depths.back() + 1);
  }
  if (num_layers == 0 && decay < 1) {
    return absl::InvalidArgumentError(
        "training.layerwise_lr_decay needs a model with numbered transformer layers "
        "(\"...layer.<i>.\" or \"...h.<i>.\" parameters); this one has none (ALBERT shares one "
        "layer's weights)");
  }
  std::vector<double> scales;
  for (int depth : depths) {
    const int power = depth == kHead         ? 0
                      : depth == kEmbeddings ? num_layers + 2
                                             : num_layers + 1 - depth;
    scales.push_back(std::pow(decay, power));
  }
  return scales;
}

}  // namespace lmtrain
