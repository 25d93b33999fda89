#include "worker/models/json_file.h"

#include <cerrno>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace lmtrain {

absl::StatusOr<nlohmann::json> ReadJsonFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::ErrnoToStatus(errno, absl::StrCat(path, ": cannot open"));
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return absl::ErrnoToStatus(errno, absl::StrCat(path, ": read failed"));
  try {
    return nlohmann::json::parse(buffer.str());
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": invalid JSON: ", e.what()));
  }
}

std::string FormatHfJson(const nlohmann::json& value) {
  // nlohmann::json objects are std::maps, so keys come out sorted, as with sort_keys=True.
  return value.dump(2, ' ', /*ensure_ascii=*/true) + "\n";
}

absl::Status WriteTextFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return absl::ErrnoToStatus(errno, absl::StrCat(path, ": cannot create"));
  out << text;
  out.close();
  if (!out) return absl::ErrnoToStatus(errno, absl::StrCat(path, ": write failed"));
  return absl::OkStatus();
}

}  // namespace lmtrain
