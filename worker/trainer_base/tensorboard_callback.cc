#include "worker/trainer_base/tensorboard_callback.h"

#include <ctime>
#include <filesystem>

namespace lmtrain {

TensorBoardCallback::~TensorBoardCallback() {
  if (!writer_) return;
  const absl::Status closed = writer_->Close();
  if (!closed.ok()) *options_.err << "warning: TensorBoard: " << closed.message() << std::endl;
}

void TensorBoardCallback::OnLog(const nlohmann::json& logs, int64_t global_step) {
  if (failed_ || !logs.is_object()) return;
  if (!writer_) {
    tensorboard::SummaryWriterOptions writer_options;
    writer_options.log_dir = options_.log_dir;
    writer_options.hostname = options_.hostname;
    writer_options.clock = options_.clock;
    auto writer = tensorboard::SummaryWriter::Create(writer_options);
    if (!writer.ok()) return Fail(writer.status());
    writer_ = std::move(*writer);
  }
  for (const auto& [key, value] : logs.items()) {
    // HF writes ints and floats; Python's bool is an int, but no lm-train log holds one.
    if (!value.is_number()) continue;
    const absl::Status written =
        writer_->AddScalar(TensorBoardTag(key), value.get<double>(), global_step);
    if (!written.ok()) return Fail(written);
  }
}

void TensorBoardCallback::Fail(const absl::Status& status) {
  failed_ = true;
  *options_.err << "warning: TensorBoard: " << status.message()
                << "; no further TensorBoard scalars are written" << std::endl;
}

std::string TensorBoardTag(std::string_view key) {
  if (key == "perplexity") return "eval/perplexity";
  if (key.substr(0, 5) == "eval_") return "eval/" + std::string(key.substr(5));
  if (key.substr(0, 5) == "test_") return "test/" + std::string(key.substr(5));
  return "train/" + std::string(key);
}

std::string DefaultLoggingDir(const std::string& output_dir, int64_t now_ms,
                              const std::string& hostname) {
  const std::time_t seconds = static_cast<std::time_t>(now_ms / 1000);
  std::tm local{};
  localtime_r(&seconds, &local);
  char stamp[64];
  // "%b" is the C locale's month abbreviation: lm-train never calls setlocale.
  std::strftime(stamp, sizeof(stamp), "%b%d_%H-%M-%S", &local);
  return (std::filesystem::path(output_dir) / "runs" / (std::string(stamp) + "_" + hostname))
      .string();
}

std::string ResolveLoggingDir(const std::string& output_dir, const std::string& logging_dir,
                              int64_t now_ms, const std::string& hostname) {
  if (logging_dir.empty()) return DefaultLoggingDir(output_dir, now_ms, hostname);
  return (std::filesystem::path(output_dir) / logging_dir).lexically_normal().string();
}

}  // namespace lmtrain
