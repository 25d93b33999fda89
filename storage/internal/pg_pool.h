// PgPool: the PostgreSQL connections of one store: one writer connection and N reader
// connections, each lent to one caller at a time.
//
//   Open(uri, readers) --> [1 + N connections] --> Writer() / Reader() --> Lease --> ~Lease:
//        |                                                                    connection back
//        `--> error: the first connection that failed (nothing left open)
//
//   a lent connection found lost (connected() false when returned) --> every connection of
//   the pool reconnects (PQreset) before its next use, so one database restart fails one
//   call, not one call per connection
//
// Thread-safe. Writer() lends the writer, waiting while another caller holds it. Reader()
// lends the reader connection returned last (so calls one at a time keep to one connection
// and its warm server process; more open up only as calls overlap), waiting while all are
// lent; a pool with no readers lends the writer instead. A lease
// is used by one thread and must end before the pool is destroyed. Reconnecting runs in the
// borrower's call; when it fails, Writer()/Reader() return Unavailable (the connection goes
// back and the next borrower tries again).
//
// Which connection a call gets decides nothing about what it sees: a transaction begun after
// another connection's COMMIT returned sees that commit (PostgreSQL makes a commit visible to
// every later snapshot before acknowledging it).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "storage/internal/pg_connection.h"

namespace lmtrain::storage_internal {

class PgPool {
  struct Member;
  struct Group;

 public:
  // A lent connection; returns it on destruction.
  class Lease {
   public:
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease();

    PgConnection& db() const;

   private:
    friend class PgPool;
    Lease(PgPool* pool, Group* group, Member* member)
        : pool_(pool), group_(group), member_(member) {}
    PgPool* pool_;
    Group* group_;
    Member* member_;  // Null once moved from.
  };

  // Connects the writer and `readers` (>= 0) reader connections to `uri` (PgConnection::Open's
  // forms and errors).
  static absl::StatusOr<std::unique_ptr<PgPool>> Open(const std::string& uri, int readers);

  ~PgPool();
  PgPool(const PgPool&) = delete;
  PgPool& operator=(const PgPool&) = delete;

  // The writer connection, reconnected first if needed. Unavailable: reconnecting failed.
  absl::StatusOr<Lease> Writer();
  // A reader connection (the writer when there are none), reconnected first if needed.
  // Unavailable: reconnecting failed.
  absl::StatusOr<Lease> Reader();

  int readers() const { return readers_count_; }

 private:
  struct Member {
    std::unique_ptr<PgConnection> db;
    int64_t losses_seen = 0;  // losses_ when it last (re)connected; read by its borrower only.
  };
  struct Group {
    absl::Mutex mu;
    std::vector<Member*> idle ABSL_GUARDED_BY(mu);  // The last returned at the back.
  };

  explicit PgPool(std::vector<std::unique_ptr<PgConnection>> connections);
  absl::StatusOr<Lease> Borrow(Group& group);
  void GiveBack(Group& group, Member& member);

  std::vector<Member> members_;  // The writer first; fixed after construction.
  const int readers_count_;
  Group writer_;
  Group readers_;
  // Connections found lost so far; a member that saw fewer reconnects before its next use.
  std::atomic<int64_t> losses_{0};
};

}  // namespace lmtrain::storage_internal
