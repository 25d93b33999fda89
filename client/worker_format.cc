#include "client/worker_format.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/job_format.h"
#include "client/progress_bar.h"
#include "proto_convert.h"

namespace lmtrain {
namespace {

std::string LabelsText(const v1::Worker& w) {
  std::map<std::string, std::string> sorted(w.labels().begin(), w.labels().end());
  return sorted.empty() ? "-" : absl::StrJoin(sorted, ",", absl::PairFormatter("="));
}

// "cpu:0,cuda:0,cuda:1 (1/2 GPUs used)".
std::string DevicesText(const v1::Worker& w) {
  std::vector<std::string> parts;
  int gpus = 0;
  for (const v1::Device& d : w.devices()) {
    parts.push_back(absl::StrCat(d.type(), ":", d.index()));
    gpus += d.type() == "cuda";
  }
  if (parts.empty()) return "-";
  std::string text = absl::StrJoin(parts, ",");
  if (gpus > 0) absl::StrAppend(&text, " (", w.used_gpus(), "/", gpus, " GPUs used)");
  return text;
}

std::string Age(const google::protobuf::Timestamp& ts, int64_t now_ms) {
  if (ts.seconds() == 0 && ts.nanos() == 0) return "never";
  return FormatDuration((now_ms - FromProtoTime(ts)) / 1000.0) + " ago";
}

std::string Text(const nlohmann::json& j) { return j.is_null() ? "-" : j.get<std::string>(); }

}  // namespace

nlohmann::json WorkerToJson(const v1::Worker& w) {
  nlohmann::json labels = nlohmann::json::object();
  for (const auto& [key, value] : w.labels()) labels[key] = value;
  nlohmann::json devices = nlohmann::json::array();
  for (const v1::Device& d : w.devices()) {
    devices.push_back({{"type", d.type()},
                       {"index", d.index()},
                       {"name", d.name()},
                       {"memory_bytes", d.memory_bytes()},
                       {"uuid", d.uuid()}});
  }
  return {{"id", w.id()},
          {"name", w.name()},
          {"hostname", w.hostname()},
          {"slots", w.slots()},
          {"used_slots", w.used_slots()},
          {"used_gpus", w.used_gpus()},
          {"labels", labels},
          {"devices", devices},
          {"last_seen", TimestampJson(w.last_seen())},
          {"running_job_ids",
           std::vector<std::string>(w.running_job_ids().begin(), w.running_job_ids().end())}};
}

std::string WorkersToTable(const std::vector<v1::Worker>& workers, int64_t now_ms) {
  if (workers.empty()) return "no workers registered\n";
  constexpr char kRow[] = "%-6s  %-12s  %-16s  %-6s  %-20s  %-12s  %-10s  %s\n";
  std::string out = absl::StrFormat(kRow, "ID", "NAME", "HOST", "SLOTS", "LABELS", "DEVICES",
                                    "LAST-SEEN", "JOBS");
  for (const v1::Worker& w : workers) {
    const std::string jobs =
        w.running_job_ids().empty() ? "-" : absl::StrJoin(w.running_job_ids(), ",");
    absl::StrAppendFormat(&out, kRow, w.id(), w.name(), w.hostname(),
                          absl::StrCat(w.used_slots(), "/", w.slots()), LabelsText(w),
                          DevicesText(w), Age(w.last_seen(), now_ms), jobs);
  }
  return out;
}

nlohmann::json CheckpointsToJson(const v1::Job& job) {
  nlohmann::json out = nlohmann::json::array();
  for (const v1::Checkpoint& c : job.checkpoints()) {
    out.push_back(
        {{"step", c.step()}, {"path", c.path()}, {"created_at", TimestampJson(c.created_at())}});
  }
  return out;
}

std::string CheckpointsToTable(const v1::Job& job) {
  if (job.checkpoints().empty()) return absl::StrCat("job ", job.id(), " has no checkpoints\n");
  constexpr char kRow[] = "%8s  %-24s  %s\n";
  std::string out = absl::StrFormat(kRow, "STEP", "TIME", "PATH");
  for (const v1::Checkpoint& c : job.checkpoints()) {
    absl::StrAppendFormat(&out, kRow, absl::StrCat(c.step()), Text(TimestampJson(c.created_at())),
                          c.path());
  }
  return out;
}

}  // namespace lmtrain
