// The job file (job.yaml): its typed form, parsing and validation.
//
// Option names follow Hugging Face TrainingArguments. Every field below lists its default.
// Parsing rejects unknown keys, wrong types and impossible values with messages of the form
//   job.yaml:14: training.learning_rate must be > 0 (got -1)
// (source name, 1-based line of the offending node, dotted key path, what is wrong).
// Thread-safe: pure functions over values.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/train_test_split.h"

namespace lmtrain {

// Tasks known by name; every known task is supported.
//   clm            causal LM (HF run_clm.py)
//   mlm            masked LM with dynamic masking (run_mlm.py)
//   qa             extractive question answering on SQuAD v1.1 / v2.0 data (run_qa.py)
//   glue           a GLUE task read from the GLUE data directory layout (run_glue.py)
//   classification text (or text pair) classification / regression from CSV, TSV, JSON(L)
inline constexpr std::string_view kKnownTasks[] = {"clm", "mlm", "qa", "glue", "classification"};
inline constexpr std::string_view kSupportedTasks[] = {"clm", "mlm", "qa", "glue",
                                                       "classification"};
// GLUE task names (data.task_name).
inline constexpr std::string_view kGlueTasks[] = {"cola", "sst2", "mrpc", "stsb", "qqp",
                                                  "mnli", "qnli", "rte",  "wnli"};
// How whole-word masking chooses words (data.whole_word_selection).
inline constexpr std::string_view kWholeWordSelections[] = {"per_word", "fixed_count"};

struct ModelSpec {
  // An HF model directory (config.json + model.safetensors or pytorch_model.bin, each maybe
  // sharded; docs/tasks.md). Absolute after parsing.
  std::string name_or_path;
  // From-scratch architecture: {"model_type": "gpt2", "n_layer": 2, ...}, HF config.json keys.
  // Exactly one of name_or_path / config is set. vocab_size may be absent: the tokenizer's.
  nlohmann::json config;
};

struct TokenizerTrainSpec {
  std::string type = "bpe";  // "bpe" | "unigram" (sentencepiece model types)
  int vocab_size = 2000;     // > 0
};

struct TokenizerSpec {
  // HF tokenizer dir, tokenizer.json, vocab.json (+ merges.txt beside it) or a sentencepiece
  // .model file. Absolute after parsing. Empty when `train` is set.
  std::string path;
  std::optional<TokenizerTrainSpec> train;  // Train a sentencepiece model on data.train_file.
};

// data.train_test_split: `datasets`' Dataset.train_test_split (common/train_test_split.h) on
// the training set's examples after preprocessing (clm/mlm: the grouped blocks; glue /
// classification: the rows; qa: the examples, before their features are built). The train
// split replaces the training set, the test split is the evaluation set (docs/tasks.md).
struct TrainTestSplitSpec {
  // A YAML integer is a row count (>= 1), a YAML float a fraction in (0, 1), as datasets tells
  // a Python int from a float. Both unset: test_size 0.25, as in datasets.
  SplitSize train_size;
  SplitSize test_size;
  std::optional<int64_t> seed;  // >= 0; unset: training.seed.
  bool shuffle = true;
};

// HF's DataTrainingArguments of the run_* scripts. Paths are absolute after parsing.
struct DataSpec {
  // Required for training, except for glue with data_dir. clm/mlm: a text file (one text per
  // line) or a csv / tsv / json / jsonl table (by extension; one text per row, from
  // text_column_name); csv / tsv / json / jsonl for classification; SQuAD json or jsonl for
  // qa; a GLUE tsv for glue.
  std::string train_file;
  std::string validation_file;  // Optional.
  std::string test_file;        // Optional: predictions with training.do_predict.
  // clm/mlm, when validation_file is empty: the first N% of the train lines are held out, as
  // HF's split="train[:N%]". Default 5.
  int validation_split_percentage = 5;
  // clm: 0 = min(1024, model's n_positions); <= n_positions. Each 1000 lines are grouped into
  // blocks on their own (HF run_clm.py); a text shorter than block_size is one short block.
  int block_size = 0;
  bool line_by_line = false;  // clm/mlm: one example per line instead of HF group_texts.
  // HF's preprocessing_num_workers (datasets.map's num_proc): texts are tokenized on this many
  // threads (0 or 1: one), for every task; the examples are the same for any number.
  int preprocessing_num_workers = 0;
  // clm, text files: each line keeps its line break ("\n") before tokenisation, as
  // run_clm.py's keep_linebreaks (whose default, true, applies when unset), or not. Unset with
  // line_by_line: false (each example is one line without its break, as run_mlm.py reads
  // lines). Tables (csv, json) are read by column either way.
  std::optional<bool> keep_linebreaks;
  // clm/mlm: the text column of csv / tsv / json / jsonl train and validation files. "" (the
  // default): "text" when the train table has one, else its first column (run_mlm.py's
  // choice). Text files have the one column "text": any other name is an error for them.
  std::string text_column_name;
  // mlm/qa/glue/classification: longest input in tokens; 0 = the task's default (mlm:
  // min(512, n_positions), qa: 384, glue/classification: 128). Must be <= n_positions.
  int max_seq_length = 0;
  bool pad_to_max_length = false;        // false: pad each batch to its longest (same results).
  double mlm_probability = 0.15;         // mlm: share of tokens masked, in (0, 1).
  bool whole_word_masking = false;       // mlm: mask every sub-token of a chosen word.
  // mlm, with whole_word_masking: how words are chosen (kWholeWordSelections):
  //   "per_word" (default): each word independently with probability wwm_probability, as the
  //     HF course's whole_word_masking_data_collator and recent transformers'
  //     DataCollatorForLanguageModeling(whole_word_mask=True);
  //   "fixed_count": words in random order, taken whole while they fit in
  //     round(tokens * mlm_probability) tokens, as run_mlm_wwm.py's DataCollatorForWholeWordMask.
  std::string whole_word_selection = "per_word";
  // mlm per_word: in (0, 1]; unset: mlm_probability.
  std::optional<double> wwm_probability;
  // mlm: what a selected token becomes (DataCollatorForLanguageModeling's meaning): the mask
  // token with mask_replace_prob, a random token with random_replace_prob, else unchanged.
  // Each in [0, 1], their sum <= 1. Unset: 0.8 and 0.1 (HF's 80/10/10), except that per_word
  // whole-word masking with neither set masks every selected token (1 and 0), as HF does.
  std::optional<double> mask_replace_prob;
  std::optional<double> random_replace_prob;
  std::string task_name;                 // glue: one of kGlueTasks.
  std::string data_dir;                  // glue: a GLUE task folder (train.tsv, dev.tsv, test.tsv).
  std::string text_column = "text";      // classification
  std::string text_pair_column;          // classification: optional second text.
  std::string label_column = "label";    // classification
  int doc_stride = 128;                  // qa: tokens shared by overflow windows.
  int n_best_size = 20;                  // qa
  int max_answer_length = 30;            // qa: in tokens.
  bool version_2_with_negative = false;  // qa: SQuAD v2 (unanswerable questions).
  double null_score_diff_threshold = 0.0;  // qa v2: predict "" above this.
  int64_t max_train_samples = 0;    // > 0 caps the training examples (before windowing/grouping).
  int64_t max_predict_samples = 0;  // > 0 caps the test examples.
  // Unset: no split. Set: the evaluation set is the split's test part, so validation_file is an
  // error, and so is validation_split_percentage set to other than its default.
  std::optional<TrainTestSplitSpec> train_test_split;
};

// HF's lr_scheduler_kwargs: the optional parameters of some schedules (unset: HF's default).
// A parameter that the chosen lr_scheduler_type does not take is an error.
struct LrSchedulerKwargs {
  std::optional<double> lr_end;      // polynomial: the final lr, >= 0 and < learning_rate; 1e-7
  std::optional<double> power;       // polynomial: > 0; 1.0 (linear decay to lr_end)
  // cosine: 0.5 (half a cosine down to 0); cosine_with_restarts: 1 (hard restarts); > 0
  std::optional<double> num_cycles;
  // inverse_sqrt: > 0; the warmup steps, or 10000 without warmup.
  std::optional<int64_t> timescale;
  // reduce_lr_on_plateau (torch.optim.lr_scheduler.ReduceLROnPlateau's arguments and defaults):
  std::optional<std::string> mode;            // "min" (the default) | "max"
  std::optional<double> factor;               // in (0, 1); 0.1
  std::optional<int64_t> patience;            // >= 0; 10
  std::optional<double> threshold;            // >= 0; 1e-4
  std::optional<std::string> threshold_mode;  // "rel" (the default) | "abs"
  std::optional<int64_t> cooldown;            // >= 0; 0
  std::optional<double> min_lr;               // >= 0; 0
  std::optional<double> eps;                  // >= 0; 1e-8
  // cosine_with_min_lr, cosine_warmup_with_min_lr: exactly one of min_lr (above, absolute) and
  // min_lr_rate (a share of learning_rate, in [0, 1]); num_cycles as cosine's.
  std::optional<double> min_lr_rate;
  // cosine_warmup_with_min_lr: the warmup's first factor, in [0, 1] (unset: (step + 1) / w).
  std::optional<double> warmup_lr_rate;
  // warmup_stable_decay: num_decay_steps (required, >= 0), num_stable_steps (>= 0; unset: the
  // rest of max_steps), warmup_type and decay_type ("linear" | "cosine" | "1-sqrt"; linear and
  // cosine), min_lr_ratio (in [0, 1]; 0), num_cycles (the cosine decay's; 0.5).
  std::optional<int64_t> num_decay_steps;
  std::optional<int64_t> num_stable_steps;
  std::optional<std::string> warmup_type;
  std::optional<std::string> decay_type;
  std::optional<double> min_lr_ratio;
};

// HF's optim_args for the plain torch optimizers (sgd, adagrad, rmsprop): the keys HF's Trainer
// passes on for each (unset: torch's default). The job file gives HF's string
// ("momentum=0.9,nesterov=true") or a mapping. weight_decay is not one of them: HF's parameter
// groups override it with training.weight_decay.
struct OptimArgs {
  std::optional<double> momentum;   // sgd, rmsprop: >= 0; 0
  std::optional<double> dampening;  // sgd: >= 0; 0
  std::optional<bool> nesterov;     // sgd: false (true needs momentum > 0 and dampening 0)
  std::optional<double> lr_decay;   // adagrad: >= 0; 0
  std::optional<double> eps;        // adagrad: >= 0, 1e-10; rmsprop: >= 0, 1e-8
  std::optional<double> alpha;      // rmsprop: >= 0; 0.99
  std::optional<bool> centered;     // rmsprop: false
};

struct TrainingSpec {
  double learning_rate = 5e-5;               // > 0
  int per_device_train_batch_size = 8;       // > 0
  // HF's torch_empty_cache_steps (> 0): before every N-th update the CUDA caching allocator's
  // unused blocks go back to the driver (torch.cuda.empty_cache), lowering peak memory at some
  // speed; nothing on the CPU. Unset: never.
  std::optional<int64_t> torch_empty_cache_steps;
  // HF's auto_find_batch_size: when a training step runs out of memory, training starts over
  // with int(per_device_train_batch_size × 0.9), down to 1 (one process only).
  bool auto_find_batch_size = false;
  int per_device_eval_batch_size = 8;        // > 0
  int gradient_accumulation_steps = 1;       // > 0
  int64_t max_steps = -1;                    // > 0 overrides num_train_epochs
  double num_train_epochs = 3.0;             // > 0
  int64_t warmup_steps = 0;                  // >= 0
  double warmup_ratio = 0.0;                 // in [0, 1); used when warmup_steps == 0
  // linear | cosine | cosine_with_restarts | polynomial | constant | constant_with_warmup |
  // inverse_sqrt (HF's formulas, docs/tasks.md) | reduce_lr_on_plateau (stepped on
  // metric_for_best_model, default eval_loss, at each evaluation: needs evaluation_strategy)
  std::string lr_scheduler_type = "linear";
  LrSchedulerKwargs lr_scheduler_kwargs;
  double weight_decay = 0.0;                 // >= 0; not applied to biases and LayerNorm
  // ELECTRA's layer-wise learning-rate decay, in (0, 1]: transformer layer i (0-based) of L
  // learns at learning_rate * d^(L - i), the embeddings at d^(L + 1), the task head at the full
  // rate. 1 (the default) turns it off.
  double layerwise_lr_decay = 1.0;
  double adam_beta1 = 0.9;                   // in [0, 1)
  double adam_beta2 = 0.999;                 // in [0, 1)
  double adam_epsilon = 1e-8;                // > 0
  double max_grad_norm = 1.0;                // >= 0; 0 disables clipping
  // When to log the training loss: "steps" (every logging_steps), "epoch" (at each epoch's
  // end) or "no". Default "steps".
  std::string logging_strategy = "steps";
  int64_t logging_steps = 500;               // > 0
  bool logging_first_step = false;           // also log after the first update
  int64_t eval_steps = 0;                    // >= 0; 0: same as logging_steps
  int64_t save_steps = 500;                  // >= 0; 0: save only at the end
  // HF's fractional logging_steps / eval_steps / save_steps (in (0, 1)): that share of the
  // run's updates, rounded up (TrainerState.compute_steps); set, they replace the counts above.
  std::optional<double> logging_steps_ratio;
  std::optional<double> eval_steps_ratio;
  std::optional<double> save_steps_ratio;
  int save_total_limit = 0;                  // >= 0; 0: keep all
  // HF's save_only_model: checkpoint-N folders hold the model (weights, config, tokenizer,
  // trainer_state.json) without the optimizer, RNG and loop state, so training cannot resume
  // from them. A stop (preemption, cancel) still saves a complete checkpoint to resume from.
  bool save_only_model = false;
  int64_t seed = 42;
  // The seed of the training data's order, epoch by epoch (HF's data_seed). Unset: seed. The
  // model's initialisation, dropout and MLM masking keep following seed.
  std::optional<int64_t> data_seed;
  // HF's train_sampling_strategy: "random" (a seeded shuffle per epoch), "sequential" (the
  // file's order every epoch) or "group_by_length": batches of examples of similar length
  // (fewer padding tokens), in random megabatches of up to 50 updates sorted longest first
  // (batch_order.h LengthGroupedOrder); the longest batch comes first. After parsing,
  // group_by_length (transformers 4's flag for the last one) is true exactly when this is
  // "group_by_length".
  std::string train_sampling_strategy = "random";
  bool group_by_length = false;
  // HF's dataloader_drop_last: each epoch's short last training batch (of the global batch,
  // per_device_train_batch_size × ranks) is left out, and so is an evaluation's short last
  // batch of clm, mlm, glue and classification (predictions and qa keep every example).
  bool dataloader_drop_last = false;
  bool bf16 = false;                  // bf16 autocast (CPU and CUDA)
  // HF's bf16_full_eval / fp16_full_eval: evaluations and predictions outside training (the
  // final evaluation, evaluation-only jobs, do_predict) run on the model cast to bfloat16 /
  // float16 instead of under autocast; float16 needs a GPU. At most one of them.
  bool bf16_full_eval = false;
  bool fp16_full_eval = false;
  int64_t max_eval_samples = 0;       // > 0 caps the evaluation set (in examples)
  bool do_train = true;               // false: evaluate the model only
  bool do_eval = true;                // evaluate at the end (needs validation data)
  bool do_predict = false;            // predict on data.test_file (or the eval set)
  bool eval_on_start = false;         // also evaluate at step 0, before training
  // HF's eval_delay (>= 0): no evaluation of evaluation_strategy before this many steps
  // ("steps") or epochs ("epoch"); 0, the default, delays nothing.
  double eval_delay = 0.0;
  // With do_eval, after training: also evaluate every checkpoint-N in the output folder (HF's
  // legacy run_glue.py / run_squad.py flag): checkpoint-N/eval_results.txt, and each metric with
  // "_N" appended in eval_results.json and all_results.json.
  bool eval_all_checkpoints = false;
  // adamw_torch (HF 4's default) | adamw_torch_fused (HF 5's default on torch >= 2.8; the same
  // update: AdamW runs fused on CPU and as torch's fused kernel on CUDA) | adamw_hf | adamw |
  // adafactor | sgd | adagrad | rmsprop (torch's optimizers, with optim_args).
  std::string optim = "adamw_torch";
  OptimArgs optim_args;
  // When to evaluate during training: "no" (only at the end with do_eval), "steps" (every
  // eval_steps) or "epoch". Default "no", as HF; a job file that sets eval_steps (> 0) but
  // not this key gets "steps". Also read as eval_strategy (HF's name since transformers 4.41);
  // setting both is an error.
  std::string evaluation_strategy = "no";
  // no | steps (every save_steps) | epoch | best (HF 5's: after each evaluation that improves
  // metric_for_best_model; needs evaluation_strategy steps or epoch)
  std::string save_strategy = "steps";
  // Keep track of the best checkpoint by metric_for_best_model and load it at the end (needs
  // evaluation_strategy == save_strategy, and save_steps a multiple of eval_steps).
  bool load_best_model_at_end = false;
  // "" = the task's metric: loss for clm/mlm, f1 for qa, the GLUE task's main metric,
  // accuracy for classification (pearson for regression). With or without "eval_".
  std::string metric_for_best_model;
  std::optional<bool> greater_is_better;  // unset: false for *loss, true otherwise
  // HF's EarlyStoppingCallback: with early_stopping_patience > 0, training ends (a normal end:
  // the best checkpoint is loaded back) after that many evaluations in a row that do not improve
  // on the best metric_for_best_model so far by more than early_stopping_threshold (>= 0).
  // Needs load_best_model_at_end. 0 (the default): no early stopping.
  int64_t early_stopping_patience = 0;
  double early_stopping_threshold = 0.0;
  // HF's label_smoothing_factor, in [0, 1]: each cross-entropy target counts (1 - s) and the
  // mean over all classes s (its LabelSmoother), in training and evaluation losses alike. clm,
  // mlm and single-label classification; refused for qa and regression.
  double label_smoothing_factor = 0.0;
  // HF's neftune_noise_alpha (NEFTune), >= 0: while training, noise uniform in
  // ±alpha / sqrt(length × embedding size) on the word embeddings. 0 (the default): none.
  double neftune_noise_alpha = 0.0;
  // HF's include_num_input_tokens_seen: "no" (the default), "all" (every input position of the
  // training batches, padding included; true says the same) or "non_padding" (the attended
  // ones), summed over ranks and logged as num_input_tokens_seen.
  std::string include_num_input_tokens_seen = "no";
  // HF's skip_memory_metrics: false adds each stage's host (and GPU) memory deltas to the run's
  // results (init_mem_cpu_alloc_delta, train_mem_cpu_peaked_delta, ...: MemoryTracker).
  bool skip_memory_metrics = true;
  bool fp16 = false;                      // fp16 autocast: CUDA only
  // HF's tf32: true lets CUDA float32 matmuls and convolutions use TF32 (Ampere or newer;
  // refused without a GPU), false keeps them IEEE float32; unset leaves torch's defaults.
  std::optional<bool> tf32;
  // Where lm-train computes: "auto" (CUDA when the process can see a GPU, else CPU), "cpu" or
  // "cuda" (fail when no GPU is visible). Under lm-server a process sees exactly the GPUs the
  // scheduler gave it (CUDA_VISIBLE_DEVICES), none for a job without resources.gpus_per_worker.
  std::string device = "auto";
  // HF's use_cpu: true means device "cpu" (set by the parser); with device "cuda" it is an error.
  bool use_cpu = false;
  bool gradient_checkpointing = false;  // recompute layer activations in backward
  // HF's full_determinism: deterministic algorithms only (an op without one fails), cuDNN
  // deterministic and not autotuned, cuBLAS with a fixed workspace; slower on a GPU.
  bool full_determinism = false;
  // Capture each update (forward, backward, clipping, AdamW) as a CUDA graph and replay it: one
  // launch per step instead of thousands, for models whose step the host's kernel launches
  // bound. GPU, clm or mlm, one process, bf16 or fp32, AdamW, no gradient accumulation or
  // checkpointing (refused at parse otherwise).
  bool cuda_graphs = false;
  // A checkpoint-N folder to resume from, or "latest" (the newest complete checkpoint in the
  // output folder; lm-train --resume says the same). Empty: start fresh.
  std::string resume_from_checkpoint;
  // lm-train on an output folder that already holds checkpoint-N folders: false (HF's default)
  // refuses to start unless it resumes; true deletes them first.
  bool overwrite_output_dir = false;
  // Where logs go besides stdout, trainer events and trainer_state.json (HF's report_to, one
  // value): "tensorboard" (event files in logging_dir; "all" says the same) or "none".
  std::string report_to = "tensorboard";
  // TensorBoard's folder, relative to the output folder (not absolute, no ".."). "": HF's
  // default, runs/<Mon DD_HH-MM-SS>_<hostname>, a new folder each time lm-train starts.
  std::string logging_dir;
};

// What a job asks of the cluster and how the scheduler treats it.
struct ResourcesSpec {
  // GPUs on each worker (>= 0; 0: the job runs on CPU and sees no GPU). With G > 0 every
  // process gets one GPU of its own, as torchrun does: slots_per_worker is G (it defaults to G,
  // and any other value is an error). Replaces the old key `devices` (an error names this one).
  int gpus_per_worker = 0;
  int priority = 0;  // higher runs first (and may preempt lower priorities)
  // Data-parallel gang: `workers` distinct workers, each giving `slots_per_worker` slots; one
  // lm-train process (one c10d rank) per slot, so world size = workers * slots_per_worker.
  int workers = 1;           // >= 1
  int slots_per_worker = 1;  // >= 1; gpus_per_worker when that is > 0
  // Worker labels that must match exactly, e.g. {gpu: h100}.
  std::map<std::string, std::string> selector;
  // Times a failed attempt (worker lost, rank lost, preempted does not count) is retried
  // from the latest checkpoint before the job fails. A trainer that fails by itself (bad
  // data, NaN loss: exit code 1 or 2) is never retried.
  int max_retries = 3;  // >= 0
};

struct JobSpec {
  std::string name;  // Required, [A-Za-z0-9._-]{1,128}
  std::string task;  // Required, one of kSupportedTasks
  ModelSpec model;
  TokenizerSpec tokenizer;
  DataSpec data;
  TrainingSpec training;
  ResourcesSpec resources;
};

struct ParseOptions {
  std::string source_name = "job.yaml";  // Used in error messages.
  std::string base_dir;                  // Relative paths resolve against it (absolute).
  bool check_files = true;               // Require that named files and folders exist.
  // The job will run under lm-server, whose processes see only the GPUs the job asks for: then
  // CUDA-only options (training.fp16, training.device: cuda) need resources.gpus_per_worker > 0
  // and a device other than cpu, else they are errors at their line. false (lm-train run alone
  // on a machine): lm-train decides at run time from the GPUs it finds.
  bool scheduled = false;
};

// Parses and validates a job file's text. Errors: InvalidArgument, with every problem found,
// one per line, each "source:line: key.path message".
absl::StatusOr<JobSpec> ParseJobSpec(std::string_view yaml, const ParseOptions& options);
// The same; also appends to *warnings (not null) one "source:line: message" for each deprecated
// key read (HF's old names: training.per_gpu_train_batch_size, per_gpu_eval_batch_size and
// adafactor), naming the key to use instead. Old and new key together are an error.
absl::StatusOr<JobSpec> ParseJobSpec(std::string_view yaml, const ParseOptions& options,
                                     std::vector<std::string>* warnings);

// The normalised YAML of a parsed spec (absolute paths, every field explicit). Parsing it
// again with check_files gives an equal spec.
std::string JobSpecToYaml(const JobSpec& spec);

}  // namespace lmtrain
