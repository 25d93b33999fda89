#include "worker/trainer/training_task.h"

namespace lmtrain {

absl::StatusOr<std::vector<std::pair<std::string, double>>> TrainingTask::Predict(
    const EvalContext&, const std::string&) {
  return absl::UnimplementedError("this task has no prediction step (do_predict)");
}

}  // namespace lmtrain
