#include "worker/trainer/training_task.h"

namespace lmtrain {

TaskLoss TrainingTask::TrainLoss(const BatchIndices& indices, uint64_t batch_seed,
                                 std::string* shape) {
  std::unique_ptr<PreparedBatch> batch = PrepareTrainBatch(indices, batch_seed);
  *shape = batch->shape;
  return TrainLossOf(*batch);
}

absl::StatusOr<TaskEval> TrainingTask::Predict(const EvalContext&, const std::string&) {
  return absl::UnimplementedError("this task has no prediction step (do_predict)");
}

}  // namespace lmtrain
