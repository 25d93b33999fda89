#include "server/job_page_bytes.h"

#include <memory>

namespace lmtrain {

std::function<bool(const std::string& id, JobState state, int64_t last_seq)>
JobPageBytes::SkipCached() {
  return [this](const std::string& id, JobState state, int64_t last_seq) {
    JobBytesCache::Bytes bytes = cache_->Find(id, state, last_seq, view_);
    if (bytes == nullptr) return false;
    pinned_[id] = std::move(bytes);
    return true;
  };
}

std::vector<JobBytesCache::Bytes> JobPageBytes::Encode(
    const JobPage& page, absl::FunctionRef<void(const JobRecord&, std::string*)> encode) {
  // The jobs the store skipped have their bytes pinned; the store asked the cache about every
  // other one already and read it whole.
  std::vector<JobBytesCache::Bytes> bytes(page.jobs.size());
  bool made = false;
  for (size_t i = 0; i < page.jobs.size(); ++i) {
    auto it = pinned_.find(page.jobs[i].id);
    if (it != pinned_.end()) {
      bytes[i] = it->second;
      continue;
    }
    auto out = std::make_shared<std::string>();
    encode(page.jobs[i], out.get());
    bytes[i] = std::move(out);
    made = made || JobBytesCache::Cacheable(page.jobs[i]);
  }
  if (made) cache_->PutAll(page.jobs, view_, bytes);
  return bytes;
}

}  // namespace lmtrain
