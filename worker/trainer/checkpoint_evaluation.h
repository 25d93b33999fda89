// HF's legacy run_glue.py / run_squad.py --eval_all_checkpoints (training.eval_all_checkpoints):
// after training, the model is evaluated with the weights of every checkpoint-N folder in the
// output folder, oldest first.
//
// As those scripts did, each checkpoint's metrics go to <output>/checkpoint-N/eval_results.txt,
// one "key = value" line per metric, keys sorted, values as Python's str(float); and all of them
// are merged into one result with the step appended to every key ("eval_accuracy_500"). The keys
// are the Trainer's (eval_loss and the task's metrics, e.g. eval_accuracy, eval_f1, perplexity).
// Not thread-safe: uses the task's model, which the caller must not use meanwhile.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "absl/status/statusor.h"
#include "worker/trainer/training_task.h"

namespace lmtrain {

inline constexpr char kCheckpointEvalResultsFile[] = "eval_results.txt";

// Evaluates `task` with each checkpoint's weights (context.output_dir is set to the checkpoint
// folder, so QA's prediction files land there too), writes its eval_results.txt, and returns
// {"<key>_<N>": value} over all checkpoints ({} when there is none). The model's own weights
// are put back afterwards, also on error. Errors: DataLoss / NotFound naming a checkpoint whose
// weights cannot be loaded, the task's evaluation errors, Internal naming a file that cannot be
// written.
absl::StatusOr<nlohmann::json> EvaluateAllCheckpoints(TrainingTask& task, EvalContext context,
                                                      const std::string& output_dir);

}  // namespace lmtrain
