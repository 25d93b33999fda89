#include "worker/agent/proto_convert.h"

#include "proto/proto_convert.h"

namespace lmtrain {
namespace {

// Visits a RankEvent and fills the matching WorkerJobEvent field.
struct EventToProto {
  v1::WorkerJobEvent* out;
  void operator()(const RankStarted& e) const { out->mutable_started()->set_pid(e.pid); }
  void operator()(const TrainingMetrics& e) const { ToProto(e, out->mutable_metrics()); }
  void operator()(const RankCheckpoint& e) const {
    out->mutable_checkpoint()->set_step(e.step);
    out->mutable_checkpoint()->set_path(e.path);
    ToProtoTime(e.created_ms, out->mutable_checkpoint()->mutable_created_at());
  }
  void operator()(const RankLog& e) const {
    out->mutable_log()->set_stream(e.stream);
    out->mutable_log()->set_text(e.text);
  }
  void operator()(const RankExited& e) const {
    v1::JobExited* x = out->mutable_exited();
    x->set_exit_code(e.exit_code);
    x->set_signal(e.signal);
    x->set_error(e.error);
    x->set_cancelled(e.cancelled);
  }
};

}  // namespace

void ToProto(const RunningRank& rank, v1::RunningRank* out) {
  out->set_job_id(rank.job_id);
  out->set_rank(rank.rank);
  out->set_attempt(rank.attempt);
  out->mutable_gpus()->Add(rank.gpus.begin(), rank.gpus.end());
}

RunningRank FromProto(const v1::RunningRank& rank) {
  return {rank.job_id(), rank.rank(), rank.attempt(), {rank.gpus().begin(), rank.gpus().end()}};
}

void ToProto(const WorkerRegistration& registration, v1::RegisterWorkerRequest* out) {
  out->set_name(registration.name);
  out->set_hostname(registration.hostname);
  out->set_slots(registration.slots);
  for (const DeviceInfo& device : registration.devices) {
    v1::Device* d = out->add_devices();
    d->set_type(device.type);
    d->set_index(device.index);
    d->set_name(device.name);
    d->set_memory_bytes(device.memory_bytes);
    d->set_uuid(device.uuid);
  }
  out->mutable_labels()->insert(registration.labels.begin(), registration.labels.end());
  out->set_advertise_address(registration.advertise_address);
  out->set_rendezvous_port_base(registration.rendezvous_port_base);
  out->set_rendezvous_port_count(registration.rendezvous_port_count);
  for (const RunningRank& r : registration.running) ToProto(r, out->add_running());
}

void ToProto(const WorkerSync& sync, v1::SyncRequest* out) {
  out->set_worker_id(sync.worker_id);
  for (const RunningRank& r : sync.running) ToProto(r, out->add_running());
  out->set_free_slots(sync.free_slots);
  out->set_wait_ms(sync.wait_ms);
}

RankAssignment FromProto(const v1::Assignment& a) {
  RankAssignment out;
  out.job_id = a.job_id();
  out.spec_yaml = a.spec_yaml();
  out.output_dir = a.output_dir();
  out.attempt = a.attempt();
  out.rank = a.rank();
  out.world_size = a.world_size();
  out.local_rank = a.local_rank();
  out.master_addr = a.master_addr();
  out.master_port = a.master_port();
  out.resume = a.resume();
  out.gpus.assign(a.gpus().begin(), a.gpus().end());
  return out;
}

SyncOrders FromProto(const v1::SyncResponse& response) {
  SyncOrders out;
  for (const v1::Assignment& a : response.assignments()) out.assignments.push_back(FromProto(a));
  for (const v1::RunningRank& r : response.stop()) out.stop.push_back(FromProto(r));
  out.reregister = response.reregister();
  return out;
}

void ToProto(const RankEvent& event, v1::WorkerJobEvent* out) {
  std::visit(EventToProto{out}, event);
}

void ToProto(const RankEventBatch& batch, v1::ReportJobEventsRequest* out) {
  out->set_worker_id(batch.worker_id);
  out->set_job_id(batch.job_id);
  out->set_rank(batch.rank);
  out->set_attempt(batch.attempt);
  for (const RankEvent& e : batch.events) ToProto(e, out->add_events());
}

}  // namespace lmtrain
