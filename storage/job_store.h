// JobStore: durable job records and per-job event logs. No protobuf or gRPC types here.
//
// Implementations: SqliteJobStore (sqlite_job_store.h, the default), PostgresJobStore
// (postgres_job_store.h) and InMemoryJobStore (in_memory_job_store.h, a fake for tests). All
// pass tests/storage/job_store_contract_test.
// Thread-safe: every method may be called from any thread. Times are Unix milliseconds,
// supplied by the caller (the store reads no clock).
//
// Details both implementations share (pinned by the contract test):
// - Ids are canonical decimals; anything else ("01", " 1", "abc") is NotFound.
// - "Newest first" means highest id first. limit <= 0 is InvalidArgument.
// - AppendEvents with no events changes nothing and returns the current last seq; a batch
//   holding a StateChangeEvent is rejected whole; a checkpoint for an existing step
//   replaces it; appending to a finished job is allowed (late log lines).
// - Text should be UTF-8: the SQLite and PostgreSQL stores replace invalid bytes with U+FFFD.
//
// Leases (AcquireLease, ReleaseLease, FenceWrites): how several lm-server replicas on one
// database agree on one active server. PostgresJobStore implements them on the database's own
// clock and row locks. The single-server stores (SQLite, in-memory) grant every AcquireLease to
// its caller (token 1) and fence nothing: one process owns such a store, so its lease is always
// held.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/job_state.h"
#include "common/training_metrics.h"

namespace lmtrain {

struct CheckpointRecord {
  int64_t step = 0;
  std::string path;
  int64_t created_at_ms = 0;
  bool operator==(const CheckpointRecord& o) const {
    return step == o.step && path == o.path && created_at_ms == o.created_at_ms;
  }
};

// What the job asks of the scheduler (job.yaml's resources section, minus priority).
struct JobResources {
  int workers = 1;                              // Distinct workers in the gang.
  int slots_per_worker = 1;                     // Slots (lm-train ranks) on each.
  std::map<std::string, std::string> selector;  // Worker labels that must match.
  int max_retries = 3;                          // Retries of failed attempts before the job fails.
  int gpus_per_worker = 0;                      // GPUs on each worker; one per rank when > 0.
  bool operator==(const JobResources& o) const {
    return workers == o.workers && slots_per_worker == o.slots_per_worker &&
           selector == o.selector && max_retries == o.max_retries &&
           gpus_per_worker == o.gpus_per_worker;
  }
};

// One placement of the job on workers, from SCHEDULED to its end.
struct AttemptRecord {
  int number = 0;                       // 1, 2, ...
  std::vector<std::string> worker_ids;  // One per gang member, rank order.
  int64_t scheduled_at_ms = 0;
  int64_t ended_at_ms = 0;  // 0: still going.
  std::string outcome;      // "" while going; then e.g. "succeeded", "preempted by job 9".
  // Per rank (rank order): the GPU indices it holds on its worker. Empty when the job holds
  // no GPUs.
  std::vector<std::vector<int>> rank_gpus;
  bool operator==(const AttemptRecord& o) const {
    return number == o.number && worker_ids == o.worker_ids &&
           scheduled_at_ms == o.scheduled_at_ms && ended_at_ms == o.ended_at_ms &&
           outcome == o.outcome && rank_gpus == o.rank_gpus;
  }
};

struct JobRecord {
  std::string id;  // Decimal string of a positive integer, assigned by the store: "1", "2", ...
  std::string name;
  std::string task;
  JobState state = JobState::kQueued;
  std::string spec_yaml;
  int priority = 0;
  std::string request_id;
  std::string
      user;  // Who submitted it ("" when the server runs without authentication: anonymous).
  JobResources resources;
  int retries = 0;                      // Failed attempts retried so far.
  std::vector<AttemptRecord> attempts;  // Ascending; the last one is current or latest.
  std::string output_dir;
  int64_t created_at_ms = 0;
  int64_t started_at_ms = 0;   // 0: not started.
  int64_t finished_at_ms = 0;  // 0: not finished.
  std::string error;
  std::string worker_id;
  std::optional<int> exit_code;
  TrainingMetrics metrics;                    // Latest value of each metric.
  std::vector<CheckpointRecord> checkpoints;  // Ascending by step.
  // Set by ListJobs only (0 elsewhere): for a job not in a terminal state, the seq of its last
  // event, which serves as the job's version (JobFilter::skip_cached); 0 for a finished job.
  // The PostgreSQL store's basic view gives 0 for every job (its versions cost the database
  // more than they save): an unfinished job with version 0 cannot be known unchanged.
  int64_t last_seq = 0;
};

struct NewJob {
  std::string name;
  std::string task;
  std::string spec_yaml;
  int priority = 0;
  std::string request_id;  // Optional idempotency key; unique when non-empty.
  std::string user;
  JobResources resources;
  int64_t created_at_ms = 0;
};

// A state change and the fields that go with it, applied atomically.
struct JobTransition {
  JobState to = JobState::kQueued;
  std::string reason;   // Stored in the StateChange event.
  int64_t time_ms = 0;  // Event time; also started_at (RUNNING) or finished_at.
  std::optional<std::string> worker_id;
  std::optional<std::string> output_dir;
  std::optional<std::string> error;
  std::optional<int> exit_code;
  std::optional<int> retries;
  std::optional<std::vector<AttemptRecord>> attempts;  // Replaces the whole list.
};

struct StateChangeEvent {
  JobState state = JobState::kQueued;
  std::string reason;
};
struct LogEvent {
  std::string stream;  // "stdout" | "stderr" | "server"
  std::string text;
};
using EventPayload = std::variant<StateChangeEvent, TrainingMetrics, CheckpointRecord, LogEvent>;

struct EventRecord {
  int64_t seq = 0;  // Per job, 1, 2, 3, ... without gaps.
  std::string job_id;
  int64_t time_ms = 0;
  EventPayload payload;
};

// What JobStore::CreateJobOrFind did.
struct CreatedJob {
  std::string id;
  // True: this call inserted the job, so the store holds exactly new_job's fields, QUEUED,
  // with no attempts. False: new_job.request_id named a job that already existed (created by
  // another call, perhaps one racing this one); that job is returned unchanged and may differ
  // from new_job in every field.
  bool created = false;
};

// The record a store holds for new_job right after CreateJobOrFind created it as job `id`.
inline JobRecord NewJobRecord(std::string id, const NewJob& new_job) {
  JobRecord job;
  job.id = std::move(id);
  job.name = new_job.name;
  job.task = new_job.task;
  job.state = JobState::kQueued;
  job.spec_yaml = new_job.spec_yaml;
  job.priority = new_job.priority;
  job.request_id = new_job.request_id;
  job.user = new_job.user;
  job.resources = new_job.resources;
  job.created_at_ms = new_job.created_at_ms;
  return job;
}

// How much of each job ListJobs returns.
enum class JobView {
  kFull,  // Every field of JobRecord.
  // Every field except spec_yaml, attempts and checkpoints, which are left empty: the store
  // neither reads nor decodes them (what a job list shows, for a fraction of the cost).
  kBasic,
};

// Which jobs ListJobs returns: those matching every set field, newest (highest id) first.
// Each combination of fields is answered from an index in O(limit) rows read, however many
// jobs the store holds (keyset paging: the next page passes the last id seen as before_id).
struct JobFilter {
  std::vector<JobState> states;   // Empty: any state.
  int limit = 100;                // At most this many; <= 0 is InvalidArgument.
  std::string user;               // Empty: any user; else only jobs submitted by this user.
  int64_t before_id = 0;          // > 0: only jobs whose numeric id is below it.
  JobView view = JobView::kFull;  // Which fields of each job (not which jobs).
  // Optional: called for each listed job with its id, state and version, where the caller may
  // hold that job already. The version (JobRecord::last_seq) of a job not in a terminal state is
  // the seq of its last event: every change to a job (CreateJobOrFind, TransitionJobThrough,
  // AppendEvents) appends an event in the same transaction, so a job whose version is the one
  // the caller saw has not changed since. A finished job never changes again (no transition
  // leaves a terminal state; metrics and checkpoints are refused once finished): its version
  // is 0. Where it returns true the job comes back with only id, state and last_seq set: the
  // store neither copies nor decodes its other columns. It runs inside the store's read (on a
  // connection or under a lock that others may wait for), so it must be quick and must not
  // call the store.
  std::function<bool(const std::string& id, JobState state, int64_t last_seq)> skip_cached;
};

// One job's steps in a TransitionJobsThrough batch.
struct JobSteps {
  std::string id;
  std::vector<JobTransition> steps;
};

// A named lease: at most one holder at a time, until expires (on the store's clock).
struct LeaseRequest {
  std::string name;            // Which lease, e.g. "lm-server".
  std::string holder;          // Unique per process and run.
  std::string holder_address;  // Where clients reach the holder (its advertised address).
  int64_t ttl_ms = 5000;       // The lease lapses this long after the call unless renewed.
  // The holder's HTTP front end as a URL base ("http://host:8080"); "" when it serves none.
  std::string holder_http_url;
};

struct LeaseState {
  bool held = false;           // The caller holds the lease now (acquired or renewed).
  std::string holder;          // The current holder; "" when nobody holds it.
  std::string holder_address;  // Its advertised address.
  // Fencing token of the current holder's tenure: it grows each time the lease changes hands,
  // and stays the same while one holder renews.
  int64_t token = 0;
  std::string holder_http_url;  // Its HTTP front end (LeaseRequest::holder_http_url).
};

class JobStore {
 public:
  virtual ~JobStore() = default;

  // Inserts a QUEUED job and its first StateChange(QUEUED, "submitted") event; returns its id
  // with created = true. If new_job.request_id is non-empty and a job with that request id
  // exists, returns that job's id with created = false and changes nothing.
  virtual absl::StatusOr<CreatedJob> CreateJobOrFind(const NewJob& new_job) = 0;

  // CreateJobOrFind's id alone.
  absl::StatusOr<std::string> CreateJob(const NewJob& new_job) {
    absl::StatusOr<CreatedJob> created = CreateJobOrFind(new_job);
    if (!created.ok()) return created.status();
    return std::move(created->id);
  }

  // NotFound if there is no such job.
  virtual absl::StatusOr<JobRecord> GetJob(const std::string& id) = 0;

  // The id of the job created with this (non-empty) request id, if any.
  virtual absl::StatusOr<std::optional<std::string>> FindJobByRequestId(
      const std::string& request_id) = 0;

  // Jobs matching `filter` (see JobFilter), newest first. Jobs created or changing state while
  // a caller pages with before_id never make a later page repeat an id already returned.
  virtual absl::StatusOr<std::vector<JobRecord>> ListJobs(const JobFilter& filter) = 0;

  // Moves the job to t.to if CanTransition(current, t.to), setting the given fields and
  // started_at_ms (to RUNNING) or finished_at_ms (to a terminal state) = t.time_ms, and
  // appends a StateChange event. Returns the updated record.
  // NotFound: no such job. FailedPrecondition: the transition is not allowed (nothing changes).
  absl::StatusOr<JobRecord> TransitionJob(const std::string& id, const JobTransition& t) {
    return TransitionJobThrough(id, {t});
  }

  // TransitionJob for each of `steps` in order, in one transaction: all of them (each with its
  // StateChange event) or none. Returns the record after the last step. NotFound: no such job.
  // FailedPrecondition: a step is not allowed from the state the one before it left (nothing
  // changes). InvalidArgument: no steps.
  virtual absl::StatusOr<JobRecord> TransitionJobThrough(
      const std::string& id, const std::vector<JobTransition>& steps) = 0;

  // TransitionJobThrough for each entry of `batch`, in order: each job's steps all or none,
  // whatever becomes of the others (an entry's error leaves the rest to go on). Returns one
  // result per entry, in order. The SQLite and PostgreSQL stores commit the whole batch in one
  // transaction, so a batch costs about one commit; their error as a whole (nothing changed)
  // means that commit failed. This default runs the entries one by one.
  virtual absl::StatusOr<std::vector<absl::StatusOr<JobRecord>>> TransitionJobsThrough(
      const std::vector<JobSteps>& batch) {
    std::vector<absl::StatusOr<JobRecord>> results;
    results.reserve(batch.size());
    for (const JobSteps& job : batch) results.push_back(TransitionJobThrough(job.id, job.steps));
    return results;
  }

  // Appends events (in one transaction) and returns the seq of the last one. Metrics events
  // are merged into the job's latest metrics; CheckpointRecord events are added to its
  // checkpoints. StateChangeEvent is rejected here (InvalidArgument): use TransitionJob.
  // NotFound if there is no such job.
  virtual absl::StatusOr<int64_t> AppendEvents(const std::string& job_id, int64_t time_ms,
                                               const std::vector<EventPayload>& events) = 0;

  // Events with seq > after_seq, ascending, at most `limit`. NotFound if no such job.
  virtual absl::StatusOr<std::vector<EventRecord>> ListEvents(const std::string& job_id,
                                                              int64_t after_seq, int limit) = 0;

  // Takes lease request.name for request.holder if nobody holds it, it has expired, or
  // request.holder holds it already (a renewal, same token); it then expires ttl_ms from now.
  // Returns the lease as it stands after the call (held tells whether the caller has it).
  // Single-server stores: always held, token 1.
  virtual absl::StatusOr<LeaseState> AcquireLease(const LeaseRequest& request) {
    return LeaseState{true, request.holder, request.holder_address, 1, request.holder_http_url};
  }

  // Gives lease `name` up if `holder` holds it, so that another holder may take it at once.
  // Not holding it is not an error.
  virtual absl::Status ReleaseLease(const std::string& /*name*/, const std::string& /*holder*/) {
    return absl::OkStatus();
  }

  // From this call on, every write (CreateJob, TransitionJob, AppendEvents) checks, in its own
  // transaction, that lease `name` still has fencing token `token`; if not (the lease changed
  // hands; token <= 0: this process holds no lease) the write changes nothing and fails with
  // FailedPrecondition "not the active server". Single-server stores: no effect.
  virtual void FenceWrites(const std::string& /*name*/, int64_t /*token*/) {}
};

}  // namespace lmtrain
