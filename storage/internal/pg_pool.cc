#include "storage/internal/pg_pool.h"

#include <utility>

#include "common/status_macros.h"

namespace lmtrain::storage_internal {

PgPool::Lease::Lease(Lease&& other) noexcept
    : pool_(other.pool_), group_(other.group_), member_(std::exchange(other.member_, nullptr)) {}

PgPool::Lease::~Lease() {
  if (member_ != nullptr) pool_->GiveBack(*group_, *member_);
}

PgConnection& PgPool::Lease::db() const { return *member_->db; }

absl::StatusOr<std::unique_ptr<PgPool>> PgPool::Open(const std::string& uri, int readers) {
  if (readers < 0) return absl::InvalidArgumentError("PgPool: readers must be >= 0");
  std::vector<std::unique_ptr<PgConnection>> connections;
  for (int i = 0; i <= readers; ++i) {
    ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> db, PgConnection::Open(uri));
    connections.push_back(std::move(db));
  }
  return std::unique_ptr<PgPool>(new PgPool(std::move(connections)));
}

PgPool::PgPool(std::vector<std::unique_ptr<PgConnection>> connections)
    : members_(connections.size()), readers_count_(static_cast<int>(connections.size()) - 1) {
  for (size_t i = 0; i < connections.size(); ++i) members_[i].db = std::move(connections[i]);
  absl::MutexLock writer_lock(&writer_.mu);
  writer_.idle.push_back(&members_[0]);
  absl::MutexLock readers_lock(&readers_.mu);
  for (size_t i = 1; i < members_.size(); ++i) readers_.idle.push_back(&members_[i]);
}

PgPool::~PgPool() = default;

absl::StatusOr<PgPool::Lease> PgPool::Writer() { return Borrow(writer_); }

absl::StatusOr<PgPool::Lease> PgPool::Reader() {
  return Borrow(readers_count_ > 0 ? readers_ : writer_);
}

absl::StatusOr<PgPool::Lease> PgPool::Borrow(Group& group) {
  Member* member = nullptr;
  {
    absl::MutexLock lock(&group.mu);
    group.mu.Await(absl::Condition(
        +[](std::vector<Member*>* idle) { return !idle->empty(); }, &group.idle));
    member = group.idle.back();
    group.idle.pop_back();
  }
  Lease lease(this, &group, member);  // Gives the member back on every return below.
  const int64_t losses = losses_.load();
  if (member->losses_seen != losses || !member->db->connected()) {
    // Another connection was found lost: this one very likely went with it (a restart or
    // failover of the database), and finding out by failing would cost a caller's call.
    RETURN_IF_ERROR(member->db->Reconnect());
    member->losses_seen = losses;
  }
  return lease;
}

void PgPool::GiveBack(Group& group, Member& member) {
  if (!member.db->connected()) losses_.fetch_add(1);
  absl::MutexLock lock(&group.mu);
  group.idle.push_back(&member);
}

}  // namespace lmtrain::storage_internal
