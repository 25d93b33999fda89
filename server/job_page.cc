#include "server/job_page.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/job_state.h"
#include "common/status_macros.h"

namespace lmtrain {
namespace {

constexpr absl::string_view kVersion = "v1";

// FNV-1a: a fixed function (unlike absl::Hash, which is seeded per process), so every server
// replica computes the same fingerprint. It tells filters apart; it is no secret.
uint64_t Fnv1a(absl::string_view bytes) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

std::string FilterFingerprint(const JobFilter& filter) {
  std::vector<std::string> states;
  for (JobState state : filter.states) states.emplace_back(JobStateName(state));
  std::sort(states.begin(), states.end());
  states.erase(std::unique(states.begin(), states.end()), states.end());
  // The user goes last, length-prefixed, so no user name can imitate another filter.
  const std::string canonical =
      absl::StrCat(absl::StrJoin(states, ","), ";", filter.user.size(), ":", filter.user);
  return absl::StrFormat("%016x", Fnv1a(canonical));
}

absl::Status BadToken(absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("page_token ", why,
                   "; pass the next_page_token of the previous page unchanged, with the "
                   "same states and user, or no token for the first page"));
}

}  // namespace

std::string EncodeJobPageToken(const JobFilter& filter, int64_t last_id) {
  return absl::WebSafeBase64Escape(
      absl::StrCat(kVersion, ".", last_id, ".", FilterFingerprint(filter)));
}

absl::StatusOr<int64_t> DecodeJobPageToken(absl::string_view token, const JobFilter& filter) {
  std::string text;
  if (!absl::WebSafeBase64Unescape(token, &text)) return BadToken("is not a page token");
  std::vector<absl::string_view> parts = absl::StrSplit(text, '.');
  int64_t last_id = 0;
  if (parts.size() != 3 || parts[0] != kVersion || !absl::SimpleAtoi(parts[1], &last_id) ||
      last_id <= 0) {
    return BadToken("is not a page token");
  }
  if (parts[2] != FilterFingerprint(filter)) {
    return BadToken("was made for a different filter (states or user)");
  }
  return last_id;
}

absl::StatusOr<JobPage> ListJobPage(JobStore& store, JobFilter filter,
                                    absl::string_view page_token) {
  const int page_size = filter.limit;
  if (page_size <= 0 || page_size == std::numeric_limits<int>::max()) {
    return absl::InvalidArgumentError(absl::StrCat("page size must be > 0 (got ", page_size, ")"));
  }
  filter.before_id = 0;
  if (!page_token.empty()) {
    ASSIGN_OR_RETURN(filter.before_id, DecodeJobPageToken(page_token, filter));
  }
  filter.limit = page_size + 1;
  ASSIGN_OR_RETURN(std::vector<JobRecord> jobs, store.ListJobs(filter));
  JobPage page;
  if (static_cast<int>(jobs.size()) > page_size) {
    jobs.resize(page_size);
    int64_t last_id = 0;
    if (!absl::SimpleAtoi(jobs.back().id, &last_id)) {
      return absl::InternalError(absl::StrCat("store returned job id '", jobs.back().id, "'"));
    }
    page.next_page_token = EncodeJobPageToken(filter, last_id);
  }
  page.jobs = std::move(jobs);
  return page;
}

}  // namespace lmtrain
