#include "server/http/json_api.h"

#include <algorithm>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "proto/job_json.h"
#include "server/http/job_json.h"
#include "server/job_page_bytes.h"
#include "server/job_service.h"

namespace lmtrain {
namespace {
using nlohmann::json;

constexpr int kDefaultLimit = 100;
constexpr int kDefaultEventLimit = 500;
constexpr size_t kMaxIdLength = 40;
constexpr int kEventPage = 1000;

// The job as the gRPC API returns it, with the waiting reason of a queued job.
v1::Job JobProto(JobManager& jobs, const JobRecord& job) {
  v1::Job proto;
  JobToProto(job, &proto);
  if (job.state == JobState::kQueued) proto.set_waiting_reason(jobs.WaitingReason(job.id));
  return proto;
}

// The job in the one JSON shape lmctl prints too (proto/job_json.h).
json JobJson(JobManager& jobs, const JobRecord& job, bool with_spec) {
  return JobToJson(JobProto(jobs, job), with_spec);
}

// JSON text as the HTTP front end sends it: invalid UTF-8 in stored text (log lines, names) is
// replaced rather than failing the response.
std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// A listed job's JSON text in `view` without "waiting_reason", which the list adds per call.
void ListedJobText(const JobRecord& job, JobView view, std::string* out) {
  v1::Job proto;
  JobToProto(job, &proto);
  json j = view == JobView::kBasic ? BasicJobToJson(proto) : JobToJson(proto, /*with_spec=*/false);
  j.erase("waiting_reason");
  *out = Dump(j);
}

absl::Status CheckParams(const QueryParams& query, const std::set<std::string>& allowed) {
  for (const auto& [key, value] : query) {
    if (allowed.count(key) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown query parameter '", key.substr(0, 64), "' (expected ",
                       allowed.empty() ? "none" : absl::StrJoin(allowed, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

// The parameter's value in [min, max], `fallback` when absent.
absl::StatusOr<int64_t> IntParam(const QueryParams& query, const std::string& name,
                                 int64_t fallback, int64_t min, int64_t max) {
  auto it = query.find(name);
  if (it == query.end()) return fallback;
  int64_t v = 0;
  if (!absl::SimpleAtoi(it->second, &v) || v < min || v > max) {
    return absl::InvalidArgumentError(absl::StrCat("query parameter '", name,
                                                   "' must be an integer in [", min, ", ", max,
                                                   "] (got '", it->second.substr(0, 64), "')"));
  }
  return v;
}

// Every "state" value, each a comma-separated list of state names (any case).
absl::StatusOr<std::vector<JobState>> StatesParam(const QueryParams& query) {
  std::vector<JobState> states;
  auto [begin, end] = query.equal_range("state");
  for (auto it = begin; it != end; ++it) {
    for (absl::string_view name : absl::StrSplit(it->second, ',', absl::SkipEmpty())) {
      std::optional<JobState> s = ParseJobState(absl::AsciiStrToUpper(name));
      if (!s.has_value()) {
        std::vector<std::string> names;
        for (JobState all : kAllJobStates) names.emplace_back(JobStateName(all));
        return absl::InvalidArgumentError(absl::StrCat("unknown state '", name.substr(0, 64),
                                                       "' (expected one of ",
                                                       absl::StrJoin(names, ", "), ")"));
      }
      states.push_back(*s);
    }
  }
  return states;
}

// The "view" parameter: "full" (the default) or "basic" (any case).
absl::StatusOr<JobView> ViewParam(const QueryParams& query) {
  auto it = query.find("view");
  if (it == query.end()) return JobView::kFull;
  const std::string view = absl::AsciiStrToLower(it->second);
  if (view == "full") return JobView::kFull;
  if (view == "basic") return JobView::kBasic;
  return absl::InvalidArgumentError(absl::StrCat(
      "query parameter 'view' must be basic or full (got '", it->second.substr(0, 64), "')"));
}

absl::Status CheckJobId(const std::string& id) {
  if (id.empty() || id.size() > kMaxIdLength ||
      !std::all_of(id.begin(), id.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return absl::InvalidArgumentError(
        absl::StrCat("job id must be a decimal number of at most ", kMaxIdLength, " digits (got '",
                     id.substr(0, kMaxIdLength), id.size() > kMaxIdLength ? "...'" : "'", ")"));
  }
  return absl::OkStatus();
}

// Events after `after` (at most kMaxEventsPerRequest read); keeps those `keep` accepts
// (up to `limit`). Sets next_after to the last event read and more when it stopped early.
template <typename Keep>
absl::Status ScanEvents(JobManager* jobs, const std::string& id, int64_t after, int64_t limit,
                        Keep keep, json* out, int64_t* next_after, bool* more) {
  int read = 0;
  *next_after = after;
  *more = false;
  while (true) {
    auto page = jobs->EventsAfter(id, *next_after, kEventPage);
    if (!page.ok()) return page.status();
    for (const EventRecord& e : *page) {
      if (static_cast<int64_t>(out->size()) >= limit || read >= JsonApi::kMaxEventsPerRequest) {
        *more = true;
        return absl::OkStatus();
      }
      ++read;
      *next_after = e.seq;
      if (keep(e)) out->push_back(EventToJson(e));
    }
    if (static_cast<int>(page->size()) < kEventPage) return absl::OkStatus();
  }
}

}  // namespace

int HttpStatusFor(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return 200;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return 400;
    case absl::StatusCode::kFailedPrecondition:
      return 409;
    case absl::StatusCode::kPermissionDenied:
      return 403;
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kUnavailable:
      return 503;
    default:
      return 500;
  }
}

ApiResponse ErrorResponse(const absl::Status& status) {
  return {HttpStatusFor(status), json{{"error", std::string(status.message())}}};
}

absl::StatusOr<JobRecord> JsonApi::AccessibleJob(const Principal& caller, const std::string& id) {
  if (absl::Status s = CheckJobId(id); !s.ok()) return s;
  absl::StatusOr<JobRecord> job = jobs_->Get(id);
  if (!job.ok()) return job.status();
  if (!CanAccessJob(caller, job->user)) {
    return absl::PermissionDeniedError(absl::StrCat("job ", id, " belongs to another user"));
  }
  return job;
}

ApiResponse JsonApi::ListJobs(const Principal& caller, const QueryParams& query) {
  if (absl::Status s =
          CheckParams(query, {"state", "user", "limit", "page_size", "page_token", "view"});
      !s.ok()) {
    return ErrorResponse(s);
  }
  auto view = ViewParam(query);
  if (!view.ok()) return ErrorResponse(view.status());
  auto states = StatesParam(query);
  if (!states.ok()) return ErrorResponse(states.status());
  // limit is the older name of page_size; page_size wins when both are given.
  auto limit = IntParam(query, "limit", kDefaultLimit, 1, kMaxLimit);
  if (!limit.ok()) return ErrorResponse(limit.status());
  auto page_size = IntParam(query, "page_size", *limit, 1, kMaxLimit);
  if (!page_size.ok()) return ErrorResponse(page_size.status());
  auto user = query.find("user");
  auto token = query.find("page_token");
  JobFilter filter;
  filter.states = *states;
  filter.limit = static_cast<int>(*page_size);
  filter.view = *view;
  if (user != query.end()) filter.user = user->second;
  if (!caller.is_admin()) {
    // Non-admins list only their own jobs (workers and anonymous callers: none).
    const bool own = caller.role == Role::kUser && !caller.user.empty() &&
                     (filter.user.empty() || filter.user == caller.user);
    if (!own) return {200, json{{"jobs", json::array()}, {"next_page_token", ""}}};
    filter.user = caller.user;
  }
  JobPageBytes texts(&list_cache_, filter.view);
  filter.skip_cached = texts.SkipCached();
  auto page = jobs_->ListPage(filter, token == query.end() ? "" : token->second);
  if (!page.ok()) return ErrorResponse(page.status());
  const std::vector<JobBytesCache::Bytes> cached = texts.Encode(
      *page, [&](const JobRecord& job, std::string* out) { ListedJobText(job, *view, out); });
  // Each job's object with "waiting_reason" added before its closing brace.
  const std::vector<std::string> reasons = jobs_->WaitingReasons(page->jobs);
  std::string text = "{\"jobs\":[";
  for (size_t i = 0; i < page->jobs.size(); ++i) {
    const std::string& reason = reasons[i];
    absl::StrAppend(&text, i == 0 ? "" : ",",
                    absl::string_view(*cached[i]).substr(0, cached[i]->size() - 1),
                    ",\"waiting_reason\":", reason.empty() ? "null" : Dump(reason), "}");
  }
  absl::StrAppend(&text, "],\"next_page_token\":", Dump(page->next_page_token), "}");
  return {200, nullptr, std::move(text)};
}

ApiResponse JsonApi::GetJob(const Principal& caller, const std::string& id) {
  auto job = AccessibleJob(caller, id);
  if (!job.ok()) return ErrorResponse(job.status());
  return {200, JobJson(*jobs_, *job, /*with_spec=*/true)};
}

ApiResponse JsonApi::JobMetrics(const Principal& caller, const std::string& id,
                                const QueryParams& query) {
  if (absl::Status s = CheckParams(query, {"after"}); !s.ok()) return ErrorResponse(s);
  auto after = IntParam(query, "after", 0, 0, INT64_MAX);
  if (!after.ok()) return ErrorResponse(after.status());
  auto job = AccessibleJob(caller, id);
  if (!job.ok()) return ErrorResponse(job.status());
  json events = json::array();
  int64_t next_after = 0;
  bool more = false;
  absl::Status s = ScanEvents(
      jobs_, id, *after, INT64_MAX,
      [](const EventRecord& e) { return std::holds_alternative<TrainingMetrics>(e.payload); },
      &events, &next_after, &more);
  if (!s.ok()) return ErrorResponse(s);
  json points = json::array();
  for (json& e : events) {  // One flat point per metrics event: seq, time_ms and the values.
    json p = std::move(e["metrics"]);
    p["seq"] = e["seq"];
    p["time_ms"] = e["time_ms"];
    points.push_back(std::move(p));
  }
  return {200, json{{"points", std::move(points)}, {"next_after", next_after}, {"more", more}}};
}

ApiResponse JsonApi::JobEvents(const Principal& caller, const std::string& id,
                               const QueryParams& query) {
  if (absl::Status s = CheckParams(query, {"after", "limit"}); !s.ok()) return ErrorResponse(s);
  auto after = IntParam(query, "after", 0, 0, INT64_MAX);
  if (!after.ok()) return ErrorResponse(after.status());
  auto limit = IntParam(query, "limit", kDefaultEventLimit, 1, kMaxLimit);
  if (!limit.ok()) return ErrorResponse(limit.status());
  auto job = AccessibleJob(caller, id);
  if (!job.ok()) return ErrorResponse(job.status());
  auto events = jobs_->EventsAfter(id, *after, static_cast<int>(*limit));
  if (!events.ok()) return ErrorResponse(events.status());
  json out = json::array();
  for (const EventRecord& e : *events) out.push_back(EventToJson(e));
  const int64_t next_after = events->empty() ? *after : events->back().seq;
  return {200, json{{"events", std::move(out)}, {"next_after", next_after}}};
}

ApiResponse JsonApi::JobLogs(const Principal& caller, const std::string& id,
                             const QueryParams& query) {
  if (absl::Status s = CheckParams(query, {"after", "limit"}); !s.ok()) return ErrorResponse(s);
  auto after = IntParam(query, "after", 0, 0, INT64_MAX);
  if (!after.ok()) return ErrorResponse(after.status());
  auto limit = IntParam(query, "limit", kMaxLimit, 1, kMaxLimit);
  if (!limit.ok()) return ErrorResponse(limit.status());
  auto job = AccessibleJob(caller, id);
  if (!job.ok()) return ErrorResponse(job.status());
  json lines = json::array();
  int64_t next_after = 0;
  bool more = false;
  absl::Status s = ScanEvents(
      jobs_, id, *after, *limit,
      [](const EventRecord& e) { return std::holds_alternative<LogEvent>(e.payload); }, &lines,
      &next_after, &more);
  if (!s.ok()) return ErrorResponse(s);
  for (json& l : lines) l.erase("type");
  return {200, json{{"lines", std::move(lines)}, {"next_after", next_after}, {"more", more}}};
}

ApiResponse JsonApi::CancelJob(const Principal& caller, const std::string& id,
                               const std::string& body) {
  std::string reason =
      caller.user.empty() ? "cancelled over HTTP" : absl::StrCat("cancelled by ", caller.user);
  if (!body.empty()) {
    json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object() || (j.contains("reason") && !j["reason"].is_string())) {
      return ErrorResponse(absl::InvalidArgumentError(
          "request body must be a JSON object with an optional string \"reason\""));
    }
    if (j.contains("reason") && !j["reason"].get<std::string>().empty()) {
      reason = j["reason"].get<std::string>();
    }
  }
  auto job = AccessibleJob(caller, id);
  if (!job.ok()) return ErrorResponse(job.status());
  auto state = jobs_->Cancel(id, reason);
  if (!state.ok()) return ErrorResponse(state.status());
  return {200, json{{"id", id}, {"state", std::string(JobStateName(*state))}}};
}

ApiResponse JsonApi::ListWorkers(const Principal& caller) {
  if (!caller.is_admin()) {
    return ErrorResponse(absl::PermissionDeniedError("only admins may list workers"));
  }
  json out = json::array();
  for (const WorkerStatus& w : dispatcher_->ListWorkers()) out.push_back(WorkerToJson(w));
  return {200, json{{"workers", std::move(out)}}};
}

}  // namespace lmtrain
