#include "worker/trainer_base/event_sink.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace lmtrain {

absl::Status FdEventSink::Emit(const TrainerEvent& event) {
  const std::string line = EncodeTrainerEvent(event) + "\n";
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return absl::InternalError("cannot write trainer event to fd " + std::to_string(fd_) + ": " +
                                 std::strerror(errno));
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

}  // namespace lmtrain
