#include "common/tensorboard/summary_writer.h"

#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "common/status_macros.h"
#include "common/tensorboard/event_proto.h"

namespace lmtrain::tensorboard {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxNameTries = 100;

// Creates the first free name of <dir>/<base>, <dir>/<base>.1, <dir>/<base>.2, ...
absl::StatusOr<std::unique_ptr<TfRecordWriter>> CreateUnique(const fs::path& dir,
                                                             const std::string& base) {
  for (int i = 0; i < kMaxNameTries; ++i) {
    const std::string name = i == 0 ? base : base + "." + std::to_string(i);
    auto file = TfRecordWriter::Create((dir / name).string());
    if (!absl::IsAlreadyExists(file.status())) return file;
  }
  return absl::InternalError("cannot create an event file in " + dir.string() + ": " +
                             std::to_string(kMaxNameTries) + " names taken");
}

}  // namespace

absl::StatusOr<std::unique_ptr<SummaryWriter>> SummaryWriter::Create(
    const SummaryWriterOptions& options) {
  if (options.log_dir.empty()) return absl::InvalidArgumentError("SummaryWriter: empty log_dir");
  std::error_code ec;
  fs::create_directories(options.log_dir, ec);
  if (ec) return absl::InternalError("cannot create " + options.log_dir + ": " + ec.message());
  const Clock* clock = options.clock != nullptr ? options.clock : SystemClock::Get();
  const std::string hostname = options.hostname.empty() ? Hostname() : options.hostname;
  const std::string base =
      "events.out.tfevents." + std::to_string(clock->NowMs() / 1000) + "." + hostname;
  ASSIGN_OR_RETURN(std::unique_ptr<TfRecordWriter> file, CreateUnique(options.log_dir, base));
  std::unique_ptr<SummaryWriter> writer(new SummaryWriter(std::move(file), clock));
  RETURN_IF_ERROR(writer->file_->Write(EncodeFileVersionEvent(writer->WallTime(), kFileVersion)));
  return writer;
}

absl::Status SummaryWriter::AddScalar(std::string_view tag, double value, int64_t step) {
  return file_->Write(EncodeScalarEvent(WallTime(), step, tag, static_cast<float>(value)));
}

std::string Hostname() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

}  // namespace lmtrain::tensorboard
