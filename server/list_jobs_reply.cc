#include "server/list_jobs_reply.h"

#include <memory>
#include <vector>

#include "common/job_state.h"
#include "google/protobuf/reflection.h"
#include "google/protobuf/unknown_field_set.h"

namespace lmtrain {

std::function<bool(const std::string& id, JobState state, int64_t last_seq)>
ListJobsReply::SkipCached() {
  return [this](const std::string& id, JobState state, int64_t last_seq) {
    JobBytesCache::Bytes bytes = cache_->Find(id, state, last_seq, view_);
    if (bytes == nullptr) return false;
    pinned_[id] = std::move(bytes);
    return true;
  };
}

void ListJobsReply::Fill(const JobPage& page,
                         absl::FunctionRef<void(const JobRecord&, v1::Job*)> to_proto,
                         absl::FunctionRef<std::string(const JobRecord&)> waiting_reason,
                         v1::ListJobsResponse* resp) {
  constexpr int kJobs = v1::ListJobsResponse::kJobsFieldNumber;
  // The jobs the store skipped have their bytes pinned; the store asked the cache about every
  // other one already and read it whole.
  std::vector<JobBytesCache::Bytes> bytes(page.jobs.size());
  for (size_t i = 0; i < page.jobs.size(); ++i) {
    auto it = pinned_.find(page.jobs[i].id);
    if (it != pinned_.end()) bytes[i] = it->second;
  }
  google::protobuf::UnknownFieldSet* wire = resp->GetReflection()->MutableUnknownFields(resp);
  bool made = false;
  v1::Job job;  // Reused: Clear() keeps its strings' buffers for the next job.
  v1::Job reason;
  for (size_t i = 0; i < page.jobs.size(); ++i) {
    std::string* out = wire->AddLengthDelimited(kJobs);
    if (bytes[i] != nullptr) {
      *out = *bytes[i];
    } else {
      job.Clear();
      to_proto(page.jobs[i], &job);
      job.SerializeToString(out);
      if (JobBytesCache::Cacheable(page.jobs[i])) {
        bytes[i] = std::make_shared<const std::string>(*out);
        made = true;
      }
    }
    if (page.jobs[i].state != JobState::kQueued) continue;
    reason.set_waiting_reason(waiting_reason(page.jobs[i]));
    if (!reason.waiting_reason().empty()) reason.AppendToString(out);
  }
  if (made) cache_->PutAll(page.jobs, view_, bytes);
  resp->set_next_page_token(page.next_page_token);
}

}  // namespace lmtrain
