// GrpcPoller: one thread that keeps a poller on gRPC's sockets at all times, for a grpc::Server
// that has both synchronous and callback methods (lm-server: WatchJob is a callback stream, the
// other methods are synchronous).
//
// Why it is needed: gRPC (1.51, the epoll1 poller Debian 12 ships) makes such a "hybrid"
// server's synchronous completion queues non-polling: their threads wait for calls but never
// read a socket. Every socket of the process is read by whichever thread polls a frequently
// polled queue, and without one of our own that is only the callback API's "nexting" threads,
// which wait at most 1 s for a callback event and then sleep 100 ms. With no WatchJob traffic
// they time out together, and for those 100 ms nothing reads a socket: every call in flight
// waits, once every 1.1 s (docs/control-plane-benchmarks.md). This thread waits on a
// frequently polled queue of the server with no deadline, so there is always a poller, and a
// call's bytes are read when they arrive.
//
//   GrpcPoller(&builder) -> builder.BuildAndStart() -> Start() -> server->Shutdown() -> Stop()
//
// The queue receives no calls (no asynchronous method is requested on it); the thread only
// polls. Thread-compatible: construct, Start and Stop from one thread. Stop is idempotent and
// the destructor stops; both must come after the server's Shutdown (gRPC requires a server's
// queues to outlive it).
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <thread>

namespace lmtrain {

class GrpcPoller {
 public:
  // Registers the queue with `builder` (not kept); call before BuildAndStart.
  explicit GrpcPoller(grpc::ServerBuilder* builder);
  ~GrpcPoller();
  GrpcPoller(const GrpcPoller&) = delete;
  GrpcPoller& operator=(const GrpcPoller&) = delete;

  // Starts the polling thread; call once, after BuildAndStart succeeded.
  void Start();
  // Shuts the queue down and joins the thread (after the server's Shutdown).
  void Stop();

 private:
  std::unique_ptr<grpc::ServerCompletionQueue> cq_;
  std::thread thread_;
  bool stopped_ = false;
};

}  // namespace lmtrain
