#include "client/job_format.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "proto_convert.h"

namespace lmtrain {
namespace {

nlohmann::json TimeJson(const google::protobuf::Timestamp& ts) {
  if (ts.seconds() == 0 && ts.nanos() == 0) return nullptr;
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::FromUnixMillis(FromProtoTime(ts)),
                          absl::UTCTimeZone());
}

std::string StateName(v1::JobState s) { return v1::JobState_Name(s); }

}  // namespace

nlohmann::json JobToJson(const v1::Job& job) {
  nlohmann::json j;
  j["id"] = job.id();
  j["name"] = job.name();
  j["task"] = job.task();
  j["state"] = StateName(job.state());
  j["priority"] = job.priority();
  j["created_at"] = TimeJson(job.created_at());
  j["started_at"] = TimeJson(job.started_at());
  j["finished_at"] = TimeJson(job.finished_at());
  const std::string metrics = MetricsToJson(FromProto(job.metrics()));
  j["metrics"] = metrics == "{}" ? nlohmann::json(nullptr) : nlohmann::json::parse(metrics);
  j["checkpoints"] = nlohmann::json::array();
  for (const v1::Checkpoint& c : job.checkpoints()) {
    j["checkpoints"].push_back({{"step", c.step()}, {"path", c.path()}});
  }
  if (job.state() == v1::FAILED) j["error"] = job.error();
  j["worker_id"] =
      job.worker_id().empty() ? nlohmann::json(nullptr) : nlohmann::json(job.worker_id());
  j["exit_code"] = job.has_exit_code() ? nlohmann::json(job.exit_code()) : nullptr;
  j["output_dir"] =
      job.output_dir().empty() ? nlohmann::json(nullptr) : nlohmann::json(job.output_dir());
  return j;
}

std::string JobToText(const v1::Job& job) {
  std::string out;
  for (const auto& [key, value] : JobToJson(job).items()) {
    if (value.is_null() || key == "checkpoints" || key == "metrics") continue;
    absl::StrAppend(&out, key, ": ", value.is_string() ? value.get<std::string>() : value.dump(),
                    "\n");
  }
  absl::StrAppend(&out, "metrics: ", MetricsToJson(FromProto(job.metrics())), "\n");
  for (const v1::Checkpoint& c : job.checkpoints()) {
    absl::StrAppend(&out, "checkpoint: step ", c.step(), " ", c.path(), "\n");
  }
  return out;
}

std::string JobsToTable(const std::vector<v1::Job>& jobs) {
  std::string out = absl::StrFormat("%-6s %-24s %-6s %-10s %8s %9s  %s\n", "ID", "NAME", "TASK",
                                    "STATE", "STEP", "LOSS", "CREATED");
  for (const v1::Job& job : jobs) {
    const v1::Metrics& m = job.metrics();
    nlohmann::json created = TimeJson(job.created_at());
    absl::StrAppendFormat(&out, "%-6s %-24s %-6s %-10s %8s %9s  %s\n", job.id(),
                          job.name().substr(0, 24), job.task(), StateName(job.state()),
                          m.has_step() ? absl::StrCat(m.step()) : "-",
                          m.has_loss() ? absl::StrFormat("%.4f", m.loss()) : "-",
                          created.is_null() ? "-" : created.get<std::string>());
  }
  return out;
}

std::string EventToLine(const v1::JobEvent& e, bool show_logs) {
  const std::string when = absl::FormatTime(
      "%H:%M:%S", absl::FromUnixMillis(FromProtoTime(e.time())), absl::LocalTimeZone());
  std::string text;
  if (e.has_state_changed()) {
    text = absl::StrCat("state ", StateName(e.state_changed().state()), " (",
                        e.state_changed().reason(), ")");
  } else if (e.has_metrics()) {
    const v1::Metrics& m = e.metrics();
    text = absl::StrCat("step ", m.has_step() ? absl::StrCat(m.step()) : "?",
                        m.has_max_steps() ? absl::StrCat("/", m.max_steps()) : "");
    if (m.has_loss()) absl::StrAppendFormat(&text, "  loss %.4f", m.loss());
    if (m.has_learning_rate()) absl::StrAppendFormat(&text, "  lr %.2e", m.learning_rate());
    if (m.has_eval_loss()) absl::StrAppendFormat(&text, "  eval_loss %.4f", m.eval_loss());
    if (m.has_perplexity()) absl::StrAppendFormat(&text, "  ppl %.2f", m.perplexity());
    if (m.has_tokens_per_second()) {
      absl::StrAppendFormat(&text, "  %.0f tok/s", m.tokens_per_second());
    }
    for (const auto& [name, value] : m.eval_metrics()) {
      absl::StrAppendFormat(&text, "  %s %.4f", name, value);
    }
  } else if (e.has_checkpoint()) {
    text = absl::StrCat("checkpoint step ", e.checkpoint().step(), " -> ", e.checkpoint().path());
  } else if (e.has_log()) {
    if (!show_logs) return "";
    text = absl::StrCat("[", e.log().stream(), "] ", e.log().text());
  }
  return absl::StrCat(when, "  ", text);
}

}  // namespace lmtrain
