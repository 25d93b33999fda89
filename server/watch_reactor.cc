#include "server/watch_reactor.h"

#include "proto/grpc_status.h"
#include "server/job_service.h"

namespace lmtrain {
namespace {

class RefusedWatch final : public grpc::ServerWriteReactor<v1::JobEvent> {
 public:
  explicit RefusedWatch(const absl::Status& status) { Finish(ToGrpcStatus(status)); }
  void OnDone() override { delete this; }
};

}  // namespace

// gRPC binds the reactor only after the handler returns it, so the Send or End that Watch may
// make before watcher_ is set cannot complete (and call back) before then.
WatchReactor::WatchReactor(WatchFanout* fanout, const WatchFanout::Request& request)
    : fanout_(fanout) {
  watcher_ = fanout_->Watch(request, this);
}

grpc::ServerWriteReactor<v1::JobEvent>* WatchReactor::Refuse(const absl::Status& status) {
  return new RefusedWatch(status);
}

void WatchReactor::Send(const EventRecord& event) {
  message_.Clear();
  EventToProto(event, &message_);
  StartWrite(&message_);
}

void WatchReactor::End(const absl::Status& status) { Finish(ToGrpcStatus(status)); }

void WatchReactor::OnWriteDone(bool ok) { fanout_->Sent(watcher_, ok); }

void WatchReactor::OnCancel() { fanout_->Cancel(watcher_); }

void WatchReactor::OnDone() {
  fanout_->Done(watcher_);
  delete this;
}

}  // namespace lmtrain
