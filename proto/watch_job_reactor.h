// WatchJobReactor: one JobService.WatchJob stream on gRPC's callback client API, so that a
// client holds many streams without a thread each. A subclass gets every event in OnEvent and
// the stream's end in OnEnd, both on gRPC's callback threads, one call at a time.
//
//   constructed ─Start()─▶ OnEvent ... ─▶ OnEnd (last call; gRPC is done with the object)
//
// Cancel() asks a started stream to end (OnEnd then comes with CANCELLED, unless it had ended).
// Destroy the object only after OnEnd has returned, or if it was never started.
#pragma once

#include <grpcpp/grpcpp.h>

#include "lmtrain/v1/jobs.grpc.pb.h"

namespace lmtrain {

class WatchJobReactor : public grpc::ClientReadReactor<v1::JobEvent> {
 public:
  // Starts the call on `stub`, which must outlive the stream.
  void Start(v1::JobService::Stub* stub, const v1::WatchJobRequest& request) {
    request_ = request;
    stub->async()->WatchJob(&ctx_, &request_, this);
    StartRead(&event_);
    StartCall();
  }
  void Cancel() { ctx_.TryCancel(); }

 protected:
  virtual void OnEvent(const v1::JobEvent& event) = 0;
  virtual void OnEnd(const grpc::Status& status) = 0;

 private:
  void OnReadDone(bool ok) final {
    if (!ok) return;  // OnDone follows.
    OnEvent(event_);
    StartRead(&event_);
  }
  void OnDone(const grpc::Status& status) final { OnEnd(status); }

  grpc::ClientContext ctx_;
  v1::WatchJobRequest request_;
  v1::JobEvent event_;
};

}  // namespace lmtrain
