#include "server/sync_server_threads.h"

namespace lmtrain {

void KeepSyncServerThreads(grpc::ServerBuilder* builder) {
  builder->SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS,
                               kMaxIdleSyncServerThreads);
}

}  // namespace lmtrain
