#include "client/job_explain.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/job_format.h"

namespace lmtrain {
namespace {

int GpuCount(const v1::Worker& w) {
  int gpus = 0;
  for (const v1::Device& d : w.devices()) gpus += d.type() == "cuda";
  return gpus;
}

nlohmann::json WorkerFit(const v1::Job& job, const v1::Worker& w) {
  nlohmann::json mismatched = nlohmann::json::array();
  for (const auto& [key, want] : job.resources().selector()) {
    auto it = w.labels().find(key);
    if (it == w.labels().end() || it->second != want) {
      mismatched.push_back(absl::StrCat(key, "=", want, " (worker has ",
                                        it == w.labels().end() ? "no " + key : it->second, ")"));
    }
  }
  const int need = std::max(1, job.resources().slots_per_worker());
  const int need_gpus = job.resources().gpus_per_worker();
  const int free = w.slots() - w.used_slots();
  const int gpus = GpuCount(w);
  const int free_gpus = gpus - w.used_gpus();
  const bool labels_match = mismatched.empty();
  return {{"id", w.id()},
          {"name", w.name()},
          {"slots", w.slots()},
          {"free_slots", free},
          {"gpus", gpus},
          {"free_gpus", free_gpus},
          {"labels_match", labels_match},
          {"mismatched_labels", mismatched},
          {"fits_now", labels_match && free >= need && free_gpus >= need_gpus},
          {"fits_ever", labels_match && w.slots() >= need && gpus >= need_gpus}};
}

std::string QueuedSummary(const v1::Job& job, int now, int ever, size_t registered) {
  const int need = std::max(1, job.resources().workers());
  const int gpus = job.resources().gpus_per_worker();
  if (registered == 0)
    return "no worker is registered: start lm-worker (or lm-server --local-worker N)";
  if (ever < need) {
    return absl::StrCat("it can never start on the current workers: it needs ", need,
                        " worker(s) with ", job.resources().slots_per_worker(), " slot(s)",
                        gpus > 0 ? absl::StrCat(" and ", gpus, " GPU(s)") : "",
                        " matching its selector, ", ever, " qualify");
  }
  if (now < need) {
    return absl::StrCat("waiting for free ", gpus > 0 ? "slots and GPUs" : "slots", ": ", now,
                        " of the ", need, " worker(s) it needs have room now");
  }
  return "workers have room: it should be placed on the next scheduling pass";
}

void ExplainQueued(const v1::Job& job, const std::vector<v1::Worker>& workers,
                   nlohmann::json* out) {
  nlohmann::json selector = nlohmann::json::object();
  for (const auto& [k, v] : job.resources().selector()) selector[k] = v;
  (*out)["asks"] = {{"workers", job.resources().workers()},
                    {"slots_per_worker", job.resources().slots_per_worker()},
                    {"gpus_per_worker", job.resources().gpus_per_worker()},
                    {"selector", selector}};
  int now = 0, ever = 0;
  nlohmann::json fits = nlohmann::json::array();
  for (const v1::Worker& w : workers) {
    nlohmann::json f = WorkerFit(job, w);
    now += f["fits_now"].get<bool>();
    ever += f["fits_ever"].get<bool>();
    fits.push_back(std::move(f));
  }
  (*out)["workers"] = fits;
  (*out)["eligible_now"] = now;
  (*out)["eligible_ever"] = ever;
  (*out)["waiting_reason"] = job.waiting_reason();
  (*out)["summary"] = job.waiting_reason().empty()
                          ? QueuedSummary(job, now, ever, workers.size())
                          : absl::StrCat(job.waiting_reason(), " (",
                                         QueuedSummary(job, now, ever, workers.size()), ")");
}

void ExplainEnded(const v1::Job& job, nlohmann::json* out) {
  (*out)["error"] = job.error();
  (*out)["exit_code"] = job.has_exit_code() ? nlohmann::json(job.exit_code()) : nullptr;
  (*out)["retries"] = job.retries();
  (*out)["max_retries"] = job.resources().max_retries();
  std::string summary;
  if (job.state() == v1::CANCELLED) {
    summary = job.attempts().empty()
                  ? "cancelled before it started"
                  : absl::StrCat("cancelled during attempt ", job.attempts().size());
  } else {
    summary = job.error().empty() ? "failed (no error recorded)" : job.error();
    if (job.has_exit_code()) absl::StrAppend(&summary, " (exit code ", job.exit_code(), ")");
    if (job.attempts().empty()) absl::StrAppend(&summary, "; it never started");
  }
  (*out)["summary"] = summary;
}

}  // namespace

nlohmann::json ExplainJob(const v1::Job& job, const std::vector<v1::Worker>& workers) {
  nlohmann::json out = {{"job_id", job.id()}, {"state", v1::JobState_Name(job.state())}};
  const nlohmann::json full = JobToJson(job, /*with_spec=*/false);
  out["attempts"] = full["attempts"];
  switch (job.state()) {
    case v1::QUEUED:
      ExplainQueued(job, workers, &out);
      break;
    case v1::FAILED:
    case v1::CANCELLED:
      ExplainEnded(job, &out);
      break;
    case v1::SUCCEEDED:
      out["summary"] = "SUCCEEDED";
      break;
    default:
      out["summary"] = absl::StrCat(
          v1::JobState_Name(job.state()), " on ",
          job.worker_id().empty() ? "(no worker yet)" : "worker " + job.worker_id(),
          job.attempts().empty() ? "" : absl::StrCat(", attempt ", job.attempts().size()));
      out["retries"] = job.retries();
      out["max_retries"] = job.resources().max_retries();
  }
  return out;
}

std::string ExplanationToText(const nlohmann::json& e) {
  std::string out =
      absl::StrCat("job ", e["job_id"].get<std::string>(), " is ", e["state"].get<std::string>(),
                   ": ", e["summary"].get<std::string>(), "\n");
  if (e.contains("asks")) {
    const nlohmann::json& a = e["asks"];
    absl::StrAppend(&out, "  asks: ", a["workers"].get<int>(), " worker(s) x ",
                    a["slots_per_worker"].get<int>(), " slot(s)",
                    a["gpus_per_worker"].get<int>() > 0
                        ? absl::StrCat(" and ", a["gpus_per_worker"].get<int>(), " GPU(s)")
                        : "",
                    a["selector"].empty() ? "" : ", selector " + a["selector"].dump(), "\n");
    for (const nlohmann::json& w : e["workers"]) {
      absl::StrAppend(&out, "  worker ", w["id"].get<std::string>(), " (",
                      w["name"].get<std::string>(), "): ", w["free_slots"].get<int>(), "/",
                      w["slots"].get<int>(), " slots free");
      if (w["gpus"].get<int>() > 0) {
        absl::StrAppend(&out, ", ", w["free_gpus"].get<int>(), "/", w["gpus"].get<int>(),
                        " GPUs free");
      }
      for (const nlohmann::json& m : w["mismatched_labels"]) {
        absl::StrAppend(&out, ", selector ", m.get<std::string>());
      }
      absl::StrAppend(&out,
                      w["fits_now"].get<bool>()    ? " -> fits now"
                      : w["fits_ever"].get<bool>()
                          ? (a["gpus_per_worker"].get<int>() > 0
                                 ? " -> fits once slots and GPUs free up"
                                 : " -> fits once slots free up")
                                                   : " -> cannot take it",
                      "\n");
    }
  }
  if (e.contains("max_retries")) {
    absl::StrAppend(&out, "  retries: ", e["retries"].get<int>(), " of ",
                    e["max_retries"].get<int>(), "\n");
  }
  for (const nlohmann::json& a : e["attempts"]) {
    absl::StrAppend(
        &out, "  attempt ", a["number"].get<int>(), " on ",
        absl::StrJoin(a["worker_ids"].get<std::vector<std::string>>(), ","), ": ",
        a["outcome"].get<std::string>().empty() ? "(running)" : a["outcome"].get<std::string>(),
        "\n");
  }
  return out;
}

}  // namespace lmtrain
