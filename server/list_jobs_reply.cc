#include "server/list_jobs_reply.h"

#include <memory>
#include <vector>

#include "common/job_state.h"
#include "google/protobuf/reflection.h"
#include "google/protobuf/unknown_field_set.h"

namespace lmtrain {

void ListJobsReply::Fill(const JobPage& page,
                         absl::FunctionRef<void(const JobRecord&, v1::Job*)> to_proto,
                         const std::vector<std::string>& waiting_reasons,
                         v1::ListJobsResponse* resp) {
  constexpr int kJobs = v1::ListJobsResponse::kJobsFieldNumber;
  v1::Job job;  // Reused: Clear() keeps its strings' buffers for the next job.
  const std::vector<JobBytesCache::Bytes> bytes =
      bytes_.Encode(page, [&](const JobRecord& record, std::string* out) {
        job.Clear();
        to_proto(record, &job);
        job.SerializeToString(out);
      });
  google::protobuf::UnknownFieldSet* wire = resp->GetReflection()->MutableUnknownFields(resp);
  v1::Job reason;
  for (size_t i = 0; i < page.jobs.size(); ++i) {
    std::string* out = wire->AddLengthDelimited(kJobs);
    *out = *bytes[i];
    if (page.jobs[i].state != JobState::kQueued) continue;
    reason.set_waiting_reason(waiting_reasons[i]);
    if (!reason.waiting_reason().empty()) reason.AppendToString(out);
  }
  resp->set_next_page_token(page.next_page_token);
}

}  // namespace lmtrain
