#include "storage/internal/job_record_cache.h"

namespace lmtrain::storage_internal {

void JobRecordCache::Validate(int64_t data_version) {
  if (data_version_.has_value() && *data_version_ != data_version) jobs_.clear();
  data_version_ = data_version;
}

const JobRecord* JobRecordCache::Find(int64_t id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second;
}

void JobRecordCache::Put(int64_t id, const JobRecord& job) {
  if (capacity_ == 0) return;
  auto it = jobs_.find(id);
  if (it != jobs_.end()) {
    it->second = job;
    return;
  }
  // flat_hash_map's first slot is as good a victim as any: no bookkeeping per hit.
  if (jobs_.size() >= capacity_) jobs_.erase(jobs_.begin());
  jobs_.emplace(id, job);
}

}  // namespace lmtrain::storage_internal
