#include "common/trainer_path.h"

#include <filesystem>

namespace lmtrain {

std::string DefaultTrainerPath() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "lm-train";
  return (self.parent_path() / "lm-train").string();
}

}  // namespace lmtrain
