// KeepSyncServerThreads: how many idle threads gRPC's synchronous server keeps waiting for calls.
//
// gRPC's default (1.51) keeps at most 2 idle threads per completion queue: a thread that
// finishes a call while 2 others wait exits, and a call that finds none waiting makes the
// thread that took it start a new one. With tens of clients calling at once nearly every call
// then creates and ends a thread: `lm-bench-api --op submit` with 32 clients saw about 470
// thread starts a second in lm-server (clone, stack mappings, page faults, a malloc arena each).
// Keeping up to kMaxIdleSyncServerThreads idle threads ends that churn; more threads than that
// are still started when that many calls run at once, and end when their call is done.
#pragma once

#include <grpcpp/server_builder.h>

namespace lmtrain {

inline constexpr int kMaxIdleSyncServerThreads = 64;

// Sets the limit on `builder` (before BuildAndStart).
void KeepSyncServerThreads(grpc::ServerBuilder* builder);

}  // namespace lmtrain
