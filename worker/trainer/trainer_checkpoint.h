// What a checkpoint-N folder holds besides the model files, so that training resumes exactly:
//
//   optimizer.pt        the optimizer's state (LibTorch archive: AdamW moments and step
//                       counts, or Adafactor's factored moments)
//   rng_state.pt        the CPU generator's state (dropout masks continue as they would have)
//   rng_state_cuda.pt   the CUDA device's generator state, when the model trains on one
//   lmtrain_state.json  the loop's counters and the run's shape (batch size, accumulation,
//                       examples, seed), checked on resume
//
// CheckpointWriter adds manifest.json (checkpoint_manifest.h) over all of them; which
// checkpoint to resume from is resume_point.h's choice.
//
// The data position needs no file: the epoch orders depend only on (seed, epoch), so the
// global step fixes it. HF's optimizer.pt / scheduler.pt / rng_state.pth are Python pickles;
// these files are LibTorch's, read by lm-train only.
// Not thread-safe: called from the training loop.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/job_spec.h"
#include "worker/models/pretrained_model.h"

namespace lmtrain {

struct ResumeRecord {
  int64_t global_step = 0;
  double total_loss_sum = 0;  // Sum of per-update losses so far (for train_loss).
  int64_t total_samples = 0;  // Examples trained on so far.
  // Evaluations in a row without improvement (early_stopping_patience); files without it: 0.
  int64_t early_stopping_counter = 0;
  // The run's shape: a resume with different values would not continue the same run.
  int64_t train_batch_size = 0;  // Per micro-batch over all ranks (per device × world size).
  int64_t gradient_accumulation_steps = 0;
  int64_t num_train_examples = 0;
  int64_t seed = 0;
  // The data order's seed (training.data_seed, else seed), train_sampling_strategy (random,
  // sequential or group_by_length) and dataloader_drop_last; files without them mean seed,
  // their group_by_length's strategy (random when false or missing) and false.
  int64_t data_seed = 0;
  std::string train_sampling_strategy = "random";
  bool dataloader_drop_last = false;
  // Optimizer updates done (the LR schedule's position); below global_step only after skipped
  // fp16 steps. Files without it mean global_step.
  int64_t scheduler_steps = 0;
  // The state of an LR scheduler that is not a function of scheduler_steps
  // (reduce_lr_on_plateau: PlateauSchedule::ToJson); null for the others.
  nlohmann::json lr_scheduler;
};

// A record of the run's shape only (the fields that decide its data order) for `training`, a
// micro-batch of `global_batch` examples over all ranks and `num_train_examples` examples.
ResumeRecord RunShapeOf(const TrainingSpec& training, int64_t global_batch,
                        int64_t num_train_examples);
// Whether `a` and `b` have the same shape: a checkpoint of one can continue the other exactly
// (data_seed aside in the sequential order, which does not use it).
bool SameRunShape(const ResumeRecord& a, const ResumeRecord& b);

// Writes optimizer.pt, rng_state.pt and lmtrain_state.json into `dir` (exists). Internal
// on failure, naming the file.
absl::Status WriteResumeFiles(const std::string& dir, const torch::optim::Optimizer& optimizer,
                              const ResumeRecord& record);

// Reads the three files back: restores `optimizer` (built over the same parameters) and the
// CPU generator, and returns the record. NotFound / DataLoss naming the missing or corrupt
// file; nothing is restored when lmtrain_state.json is bad. FailedPrecondition, saying so, for
// a model-only folder (training.save_only_model: model.safetensors without lmtrain_state.json).
absl::StatusOr<ResumeRecord> ReadResumeFiles(const std::string& dir,
                                             torch::optim::Optimizer* optimizer);

// Copies `dir`/model.safetensors into `model` by HF key. DataLoss when a parameter of the
// model is missing from the file (a checkpoint must hold the whole model).
absl::Status LoadModelWeights(const std::string& dir, PretrainedModel* model);

}  // namespace lmtrain
