#include "common/job_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"

namespace lmtrain {
namespace fs = std::filesystem;
namespace {

// The length of the well-formed UTF-8 sequence at text[i], or 0 when it is ill-formed
// (overlong forms, surrogates and code points above U+10FFFF included).
size_t Utf8SequenceLength(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return 1;
  size_t n = 0;
  unsigned char low = 0x80, high = 0xBF;  // The allowed range of the second byte.
  if (lead >= 0xC2 && lead <= 0xDF) {
    n = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    n = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    n = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (i + n > text.size() || byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (size_t k = 2; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  return n;
}

// InvalidArgument naming the line and column of the first byte that is not UTF-8.
absl::Status CheckUtf8(const std::string& source, std::string_view text) {
  int line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < text.size();) {
    const size_t n = Utf8SequenceLength(text, i);
    if (n == 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s:%d: the job file is not UTF-8 text (byte 0x%02X at column %d); save it as UTF-8",
          source, line, static_cast<unsigned char>(text[i]), i - line_start + 1));
    }
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
    i += n;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadJobFileText(const fs::path& path, const std::string& source,
                                            int64_t max_bytes) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status))
    return absl::NotFoundError(absl::StrCat(source, ": cannot open file: no such file"));
  if (fs::is_directory(status)) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": is a folder, not a job file"));
  }
  const uintmax_t size = fs::is_regular_file(status) ? fs::file_size(path, ec) : 0;
  if (!ec && size > static_cast<uintmax_t>(max_bytes)) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": the job file is ", size,
                                                   " bytes; at most ", max_bytes, " are read"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::PermissionDeniedError(
        absl::StrCat(source, ": cannot open file: ", std::strerror(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    return absl::PermissionDeniedError(absl::StrCat(source, ": cannot read file"));
  }
  return std::move(text).str();
}

}  // namespace

absl::StatusOr<JobFile> LoadJobFile(const fs::path& path, const LoadJobFileOptions& options) {
  JobFile file;
  file.source_name = path.string();
  ASSIGN_OR_RETURN(file.text, ReadJobFileText(path, file.source_name, options.max_bytes));
  RETURN_IF_ERROR(CheckUtf8(file.source_name, file.text));
  file.base_dir = fs::absolute(path).lexically_normal().parent_path().string();
  ParseOptions parse;
  parse.source_name = file.source_name;
  parse.base_dir = file.base_dir;
  parse.check_files = options.check_files;
  parse.scheduled = options.scheduled;
  ASSIGN_OR_RETURN(file.spec, ParseJobSpec(file.text, parse, &file.warnings));
  return file;
}

}  // namespace lmtrain
