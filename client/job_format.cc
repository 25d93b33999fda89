#include "client/job_format.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "proto_convert.h"

namespace lmtrain {

namespace {

constexpr char kRowFormat[] = "%5s  %-24s  %-10s  %-10s  %s\n";

std::string TimeText(const google::protobuf::Timestamp& ts) {
  nlohmann::json j = TimestampJson(ts);
  return j.is_null() ? "-" : j.get<std::string>();
}

std::string StateName(v1::JobState s) { return v1::JobState_Name(s); }

std::string AttemptText(const v1::Attempt& a) {
  std::string out =
      absl::StrCat("attempt ", a.number(), ": workers ", absl::StrJoin(a.worker_ids(), ","),
                   ", scheduled ", TimeText(a.scheduled_at()));
  if (a.rank_gpus_size() > 0) {
    std::vector<std::string> ranks;
    for (const v1::RankGpus& r : a.rank_gpus()) ranks.push_back(absl::StrJoin(r.gpus(), ","));
    absl::StrAppend(&out, ", GPUs by rank ", absl::StrJoin(ranks, " | "));
  }
  if (a.has_ended_at()) absl::StrAppend(&out, ", ended ", TimeText(a.ended_at()));
  if (!a.outcome().empty()) absl::StrAppend(&out, ", ", a.outcome());
  return out;
}

// "step 10/300  loss 5.1234  lr 9.00e-04  12345 tok/s ..."
std::string MetricsSummary(const v1::Metrics& m) {
  std::string text = absl::StrCat("step ", m.has_step() ? absl::StrCat(m.step()) : "?",
                                  m.has_max_steps() ? absl::StrCat("/", m.max_steps()) : "");
  if (m.has_loss()) absl::StrAppendFormat(&text, "  loss %.4f", m.loss());
  if (m.has_learning_rate()) absl::StrAppendFormat(&text, "  lr %.2e", m.learning_rate());
  if (m.has_eval_loss()) absl::StrAppendFormat(&text, "  eval_loss %.4f", m.eval_loss());
  if (m.has_perplexity()) absl::StrAppendFormat(&text, "  ppl %.2f", m.perplexity());
  if (m.has_tokens_per_second())
    absl::StrAppendFormat(&text, "  %.0f tok/s", m.tokens_per_second());
  if (m.has_num_input_tokens_seen()) {
    absl::StrAppend(&text, "  ", m.num_input_tokens_seen(), " tokens seen");
  }
  for (const auto& [name, value] : m.eval_metrics()) {
    absl::StrAppendFormat(&text, "  %s %.4f", name, value);
  }
  return text;
}

std::string EventType(const v1::JobEvent& e) {
  if (e.has_state_changed()) return "state";
  if (e.has_metrics()) return "metrics";
  if (e.has_checkpoint()) return "checkpoint";
  if (e.has_log()) return "log";
  return "unknown";
}

std::string CheckpointText(const v1::Checkpoint& c) {
  return absl::StrCat("step ", c.step(), " -> ", c.path());
}

}  // namespace

std::string JobToText(const v1::Job& job) {
  std::string out;
  // A named object: items() of a temporary would dangle inside the loop.
  const nlohmann::json j = JobToJson(job, /*with_spec=*/false);
  for (const auto& [key, value] : j.items()) {
    if (value.is_null() || key == "checkpoints" || key == "metrics" || key == "attempts") {
      continue;
    }
    absl::StrAppend(&out, key, ": ", value.is_string() ? value.get<std::string>() : value.dump(),
                    "\n");
  }
  absl::StrAppend(&out, "metrics: ", MetricsToJson(FromProto(job.metrics())), "\n");
  for (const v1::Checkpoint& c : job.checkpoints()) {
    absl::StrAppend(&out, "checkpoint: step ", c.step(), " ", c.path(), "\n");
  }
  for (const v1::Attempt& a : job.attempts()) absl::StrAppend(&out, AttemptText(a), "\n");
  return out;
}

std::string JobsToTable(const std::vector<v1::Job>& jobs) {
  std::string out = absl::StrFormat("%-6s %-24s %-6s %-10s %8s %9s %7s  %s\n", "ID", "NAME", "TASK",
                                    "STATE", "STEP", "LOSS", "RETRIES", "CREATED");
  for (const v1::Job& job : jobs) {
    const v1::Metrics& m = job.metrics();
    absl::StrAppendFormat(&out, "%-6s %-24s %-6s %-10s %8s %9s %7d  %s\n", job.id(),
                          job.name().substr(0, 24), job.task(), StateName(job.state()),
                          m.has_step() ? absl::StrCat(m.step()) : "-",
                          m.has_loss() ? absl::StrFormat("%.4f", m.loss()) : "-", job.retries(),
                          TimeText(job.created_at()));
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
    text = MetricsSummary(e.metrics());
  } else if (e.has_checkpoint()) {
    text = absl::StrCat("checkpoint ", CheckpointText(e.checkpoint()));
  } else if (e.has_log()) {
    if (!show_logs) return "";
    text = absl::StrCat("[", e.log().stream(), "] ", e.log().text());
  }
  return absl::StrCat(when, "  ", text);
}

std::string EventsTableHeader() {
  return absl::StrFormat(kRowFormat, "SEQ", "TIME", "TYPE", "STATE", "DETAIL");
}

std::string EventToRow(const v1::JobEvent& e) {
  std::string state = "-";
  std::string detail;
  if (e.has_state_changed()) {
    state = StateName(e.state_changed().state());
    detail = e.state_changed().reason();
  } else if (e.has_metrics()) {
    detail = MetricsSummary(e.metrics());
  } else if (e.has_checkpoint()) {
    detail = CheckpointText(e.checkpoint());
  } else if (e.has_log()) {
    detail = absl::StrCat("[", e.log().stream(), "] ", e.log().text());
  }
  return absl::StrFormat(kRowFormat, absl::StrCat(e.seq()), TimeText(e.time()), EventType(e), state,
                         detail);
}

nlohmann::json EventToJson(const v1::JobEvent& e) {
  nlohmann::json j;
  j["seq"] = e.seq();
  j["job_id"] = e.job_id();
  j["time"] = TimestampJson(e.time());
  j["type"] = EventType(e);
  if (e.has_state_changed()) {
    j["state"] = StateName(e.state_changed().state());
    j["reason"] = e.state_changed().reason();
  } else if (e.has_metrics()) {
    j["metrics"] = MetricsJson(e.metrics());
  } else if (e.has_checkpoint()) {
    j["checkpoint"] = {{"step", e.checkpoint().step()}, {"path", e.checkpoint().path()}};
  } else if (e.has_log()) {
    j["log"] = {{"stream", e.log().stream()}, {"text", e.log().text()}};
  }
  return j;
}

}  // namespace lmtrain
