#include "storage/internal/job_record_cache.h"

namespace lmtrain::storage_internal {

void JobRecordCache::Validate(int64_t data_version) {
  if (data_version_.has_value() && *data_version_ != data_version) Clear();
  data_version_ = data_version;
}

const JobRecord* JobRecordCache::Find(int64_t id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second.job;
}

void JobRecordCache::Put(int64_t id, const JobRecord& job) {
  Erase(id);
  const size_t bytes = ApproximateBytes(job);
  if (bytes > max_bytes_) return;
  // flat_hash_map's first slot is as good a victim as any: no bookkeeping per hit.
  while (bytes_ + bytes > max_bytes_) Erase(jobs_.begin()->first);
  jobs_.emplace(id, Entry{job, bytes});
  bytes_ += bytes;
}

void JobRecordCache::Erase(int64_t id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return;
  bytes_ -= it->second.bytes;
  jobs_.erase(it);
}

void JobRecordCache::Clear() {
  jobs_.clear();
  bytes_ = 0;
}

size_t JobRecordCache::ApproximateBytes(const JobRecord& job) {
  size_t n = sizeof(JobRecord) + job.id.size() + job.name.size() + job.task.size() +
             job.spec_yaml.size() + job.request_id.size() + job.user.size() +
             job.output_dir.size() + job.error.size() + job.worker_id.size();
  for (const auto& [key, value] : job.resources.selector) n += 64 + key.size() + value.size();
  for (const AttemptRecord& a : job.attempts) {
    n += sizeof(AttemptRecord) + a.outcome.size();
    for (const std::string& w : a.worker_ids) n += sizeof(std::string) + w.size();
    for (const std::vector<int>& gpus : a.rank_gpus) n += 24 + gpus.size() * sizeof(int);
  }
  for (const CheckpointRecord& c : job.checkpoints) n += sizeof(CheckpointRecord) + c.path.size();
  for (const auto& [key, value] : job.metrics.eval_metrics) n += 64 + key.size();
  return n;
}

}  // namespace lmtrain::storage_internal
