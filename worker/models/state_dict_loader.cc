#include "worker/models/state_dict_loader.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace lmtrain {
namespace {

struct Assignment {
  const std::string* key = nullptr;  // Checkpoint key.
  int priority = 0;
};

std::string ShapeString(torch::IntArrayRef shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

absl::Status CheckCompatible(const std::string& key, const torch::Tensor& source,
                             const torch::Tensor& target) {
  if (source.sizes() != target.sizes()) {
    return absl::InvalidArgumentError(
        absl::StrCat(key, ": shape ", ShapeString(source.sizes()), " in the checkpoint but ",
                     ShapeString(target.sizes()), " in the model (does config.json match?)"));
  }
  const bool same = source.scalar_type() == target.scalar_type();
  if (!same && !(source.is_floating_point() && target.is_floating_point())) {
    return absl::InvalidArgumentError(absl::StrCat(
        key, ": dtype ", c10::toString(source.scalar_type()), " cannot be loaded into a ",
        c10::toString(target.scalar_type()), " parameter"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status LoadParameters(const std::map<std::string, torch::Tensor>& checkpoint,
                            const torch::OrderedDict<std::string, torch::Tensor>& parameters,
                            const KeyResolver& resolve, LoadReport* report) {
  std::map<std::string, Assignment> chosen;  // Parameter name -> best checkpoint key.
  std::vector<std::string> unexpected;
  for (const auto& [key, tensor] : checkpoint) {
    std::optional<KeyTarget> target = resolve(key);
    if (!target.has_value()) continue;
    if (!parameters.contains(target->parameter)) {
      unexpected.push_back(key);
      continue;
    }
    auto [it, inserted] = chosen.try_emplace(target->parameter, Assignment{&key, target->priority});
    if (!inserted && target->priority < it->second.priority) it->second = {&key, target->priority};
  }
  for (const auto& [name, assignment] : chosen) {
    const std::string& key = *assignment.key;
    absl::Status status = CheckCompatible(key, checkpoint.at(key), parameters[name]);
    if (!status.ok()) return status;
  }
  torch::NoGradGuard no_grad;
  std::vector<std::string> missing;
  for (const auto& item : parameters) {
    auto it = chosen.find(item.key());
    if (it == chosen.end()) {
      missing.push_back(item.key());
      continue;
    }
    torch::Tensor target = item.value();
    target.copy_(checkpoint.at(*it->second.key));
  }
  if (report != nullptr) {
    report->missing_keys = std::move(missing);
    report->unexpected_keys = std::move(unexpected);
  }
  return absl::OkStatus();
}

}  // namespace lmtrain
