#include "server/grpc_poller.h"

namespace lmtrain {

GrpcPoller::GrpcPoller(grpc::ServerBuilder* builder)
    : cq_(builder->AddCompletionQueue(/*is_frequently_polled=*/true)) {}

GrpcPoller::~GrpcPoller() { Stop(); }

void GrpcPoller::Start() {
  thread_ = std::thread([cq = cq_.get()] {
    void* tag = nullptr;
    bool ok = false;
    // No deadline: Next polls until the queue is shut down. No call is ever requested on this
    // queue, so nothing but the shutdown comes out of it.
    while (cq->Next(&tag, &ok)) {
    }
  });
}

void GrpcPoller::Stop() {
  if (stopped_) return;
  stopped_ = true;
  cq_->Shutdown();
  if (thread_.joinable()) {
    thread_.join();  // The thread drained the queue.
    return;
  }
  void* tag = nullptr;
  bool ok = false;
  while (cq_->Next(&tag, &ok)) {  // Never started: drain it here before it is destroyed.
  }
}

}  // namespace lmtrain
