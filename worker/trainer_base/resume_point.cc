#include "worker/trainer_base/resume_point.h"

#include <filesystem>
#include <system_error>

#include "worker/trainer_base/checkpoint_manifest.h"
#include "worker/trainer_base/checkpoint_writer.h"

namespace lmtrain {
namespace {

namespace fs = std::filesystem;

// Written last into a checkpoint by the trainer (trainer_checkpoint.h): without it there is
// nothing to resume.
constexpr char kStateFile[] = "lmtrain_state.json";

bool HasResumeState(const std::string& dir) {
  std::error_code ec;
  return fs::exists(fs::path(dir) / kStateFile, ec);
}

bool AsksForLatest(const std::string& asked) { return asked == "latest" || asked == "true"; }

bool AsksForNothing(const std::string& asked) { return asked.empty() || asked == "false"; }

absl::StatusOr<std::string> VerifiedExplicitPath(const std::string& path, std::ostream& warnings) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) {
    return absl::NotFoundError("training.resume_from_checkpoint: no folder " + path);
  }
  absl::StatusOr<CheckpointIntegrity> integrity = VerifyCheckpoint(path);
  if (!integrity.ok()) {
    return absl::DataLossError(
        "training.resume_from_checkpoint: " + std::string(integrity.status().message()) +
        "; resume from another checkpoint");
  }
  if (*integrity == CheckpointIntegrity::kUnverified) {
    warnings << "warning: training.resume_from_checkpoint: " << path
             << " has no manifest.json; resuming without verifying its files" << std::endl;
  }
  return path;
}

absl::StatusOr<std::string> NewestOrNotFound(const ResumeRequest& request, std::ostream& warnings) {
  std::optional<std::string> newest = NewestResumableCheckpoint(request.output_dir, warnings);
  if (newest) return *newest;
  const std::string who =
      request.resume ? "--resume"
                     : "training.resume_from_checkpoint: " + request.resume_from_checkpoint;
  return absl::NotFoundError(who + ": no complete checkpoint-N with lmtrain_state.json in " +
                             request.output_dir + " (corrupt ones are skipped)");
}

}  // namespace

std::optional<std::string> NewestResumableCheckpoint(const std::string& output_dir,
                                                     std::ostream& warnings) {
  const auto checkpoints = CheckpointWriter::List(output_dir);
  std::optional<std::string> unverified;  // The newest complete one without a manifest.
  for (auto it = checkpoints.rbegin(); it != checkpoints.rend(); ++it) {
    const std::string& path = it->second;
    absl::StatusOr<CheckpointIntegrity> integrity = VerifyCheckpoint(path);
    if (!integrity.ok()) {
      warnings << "warning: " << integrity.status().message() << "; skipping it" << std::endl;
    } else if (!HasResumeState(path)) {
      warnings << "warning: " << path << " has no " << kStateFile
               << " (not resumable: a model-only checkpoint of training.save_only_model, or "
                  "not lm-train's); skipping it"
               << std::endl;
    } else if (*integrity == CheckpointIntegrity::kVerified) {
      return path;
    } else if (!unverified) {
      unverified = path;
    }
  }
  if (unverified) {
    warnings << "warning: resuming from " << *unverified
             << ", which has no manifest.json (an older lm-train wrote it): its files are not "
                "verified"
             << std::endl;
  }
  return unverified;
}

absl::StatusOr<std::string> ChooseResumePoint(const ResumeRequest& request,
                                              std::ostream& warnings) {
  const std::string& asked = request.resume_from_checkpoint;
  if (request.auto_resume && !request.resume) {  // A later attempt: its own newest first.
    std::optional<std::string> own = NewestResumableCheckpoint(request.output_dir, warnings);
    if (own) return *own;
    if (AsksForNothing(asked) || AsksForLatest(asked)) return std::string();
  }
  if (request.resume || AsksForLatest(asked)) return NewestOrNotFound(request, warnings);
  if (AsksForNothing(asked)) return std::string();
  return VerifiedExplicitPath(asked, warnings);
}

absl::Status CheckOutputDir(const ResumeRequest& request, bool overwrite_output_dir,
                            std::ostream& log) {
  if (request.resume || request.auto_resume || !AsksForNothing(request.resume_from_checkpoint)) {
    return absl::OkStatus();
  }
  const auto checkpoints = CheckpointWriter::List(request.output_dir);
  if (checkpoints.empty()) return absl::OkStatus();
  if (!overwrite_output_dir) {
    return absl::FailedPreconditionError(
        "Output directory (" + request.output_dir + ") already exists and is not empty: it holds " +
        fs::path(checkpoints.back().second).filename().string() +
        ". Use --overwrite_output_dir to overcome: lm-train --overwrite-output-dir (or "
        "training.overwrite_output_dir: true) deletes its checkpoints; --resume continues from "
        "them.");
  }
  for (const auto& [step, path] : checkpoints) {
    std::error_code ec;
    fs::remove_all(path, ec);
    if (ec)
      return absl::InternalError("overwrite_output_dir: cannot delete " + path + ": " +
                                 ec.message());
  }
  log << "overwrite_output_dir: deleted " << checkpoints.size() << " checkpoint folder(s) in "
      << request.output_dir << std::endl;
  return absl::OkStatus();
}

}  // namespace lmtrain
