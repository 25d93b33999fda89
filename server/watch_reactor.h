// WatchReactor: one WatchJob stream on gRPC's callback API, fed by WatchFanout
// (server/watch_fanout.h), so a watcher holds no server thread while it waits for events.
//
// Lifecycle (gRPC owns the reactor and calls OnDone last; it deletes itself there):
//   constructed ─▶ Send/OnWriteDone ... ─▶ End: Finish(status) ─▶ OnDone: fanout.Done, delete
// OnCancel (the client went away, or the server shuts down) asks the fanout to end the watch.
//
// Thread-safe as gRPC's reactors are: the fanout makes at most one call at a time into it.
#pragma once

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "lmtrain/v1/jobs.grpc.pb.h"
#include "server/watch_fanout.h"

namespace lmtrain {

class WatchReactor final : public grpc::ServerWriteReactor<v1::JobEvent>, public WatchSink {
 public:
  // Starts the watch; `fanout` is not owned and must outlive the reactor's OnDone.
  WatchReactor(WatchFanout* fanout, const WatchFanout::Request& request);

  // A stream that ends at once with `status` (a refused call), without a watch.
  static grpc::ServerWriteReactor<v1::JobEvent>* Refuse(const absl::Status& status);

  void Send(const EventRecord& event) override;
  void End(const absl::Status& status) override;
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  WatchFanout* const fanout_;
  WatchFanout::Watcher* watcher_ = nullptr;
  v1::JobEvent message_;  // The one write in flight.
};

}  // namespace lmtrain
