#include "text/tokenizers/internal/line_sampler.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "text/tokenizers/internal/file_util.h"

namespace lmtrain::tokenizers_internal {
namespace {

bool IsBlank(const std::string& line) {
  return line.find_first_not_of(" \t\r\f\v") == std::string::npos;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> SampleLines(const std::string& path,
                                                     int64_t max_lines,
                                                     uint64_t seed) {
  if (!IsRegularFile(path)) return absl::NotFoundError(path + ": no such file");
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::PermissionDeniedError(
        absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
  }
  // Algorithm R. The index is drawn as engine() % seen rather than with
  // std::uniform_int_distribution, whose algorithm differs between standard
  // libraries; the modulo bias is below 2^-40 for any realistic line count.
  std::mt19937_64 engine(seed);
  std::vector<std::string> sample;
  uint64_t seen = 0;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (IsBlank(line)) continue;
    ++seen;
    if (static_cast<int64_t>(sample.size()) < max_lines) {
      sample.push_back(std::move(line));
    } else if (const uint64_t slot = engine() % seen; slot < sample.size()) {
      sample[slot] = std::move(line);
    }
  }
  if (in.bad()) return absl::InternalError(absl::StrCat(path, ": read error"));
  return sample;
}

}  // namespace lmtrain::tokenizers_internal
