#include "server/list_jobs_reply.h"

#include <memory>
#include <vector>

#include "common/job_state.h"
#include "google/protobuf/reflection.h"
#include "google/protobuf/unknown_field_set.h"

namespace lmtrain {

std::function<bool(const std::string& id)> ListJobsReply::SkipFinished() {
  return [this](const std::string& id) {
    FinishedJobCache::Bytes bytes = cache_->Find(id, view_);
    if (bytes == nullptr) return false;
    pinned_[id] = std::move(bytes);
    return true;
  };
}

void ListJobsReply::Fill(const JobPage& page,
                         absl::FunctionRef<void(const JobRecord&, v1::Job*)> to_proto,
                         v1::ListJobsResponse* resp) {
  constexpr int kJobs = v1::ListJobsResponse::kJobsFieldNumber;
  std::vector<FinishedJobCache::Bytes> bytes(page.jobs.size());
  bool unpinned = false;
  for (size_t i = 0; i < page.jobs.size(); ++i) {
    auto it = pinned_.find(page.jobs[i].id);
    if (it != pinned_.end()) bytes[i] = it->second;
    unpinned |= it == pinned_.end() && IsTerminal(page.jobs[i].state);
  }
  if (unpinned) {
    std::vector<FinishedJobCache::Bytes> cached = cache_->FindAll(page.jobs, view_);
    for (size_t i = 0; i < bytes.size(); ++i) {
      if (bytes[i] == nullptr) bytes[i] = std::move(cached[i]);
    }
  }
  google::protobuf::UnknownFieldSet* wire = resp->GetReflection()->MutableUnknownFields(resp);
  bool made_finished = false;
  v1::Job job;  // Reused: Clear() keeps its strings' buffers for the next job.
  for (size_t i = 0; i < page.jobs.size(); ++i) {
    if (bytes[i] != nullptr) {
      wire->AddLengthDelimited(kJobs, *bytes[i]);
      continue;
    }
    job.Clear();
    to_proto(page.jobs[i], &job);
    if (!IsTerminal(page.jobs[i].state)) {
      job.SerializeToString(wire->AddLengthDelimited(kJobs));
      continue;
    }
    bytes[i] = std::make_shared<const std::string>(job.SerializeAsString());
    wire->AddLengthDelimited(kJobs, *bytes[i]);
    made_finished = true;
  }
  if (made_finished) cache_->PutAll(page.jobs, view_, bytes);
  resp->set_next_page_token(page.next_page_token);
}

}  // namespace lmtrain
