// glibc malloc settings for a process that allocates and frees the same large tensors every
// step (lm-train, lm-bench-train).
//
// By default glibc serves blocks above a sliding threshold (at most 32 MB) with mmap and
// returns them with munmap, and trims freed heap memory back to the kernel. A training step
// frees and reallocates its activations and gradients each time, so every step page-faults
// (and the kernel zero-fills) hundreds of megabytes again: on bert-base fp32 that is ~20% of
// the step on two cores. TuneMallocForTraining turns mmap serving off (blocks come from the
// heap; glibc still falls back to mmap when the heap cannot grow) and stops trimming, so freed
// memory is reused by the next step. Peak memory is unchanged; memory freed after the peak is
// kept by the process until it exits.
//
// lm-server has the same pattern on a small scale: each request allocates and frees a few
// hundred KB across many threads (gRPC buffers, the job file's tree, SQLite's statement
// journals and page copies), and trimming hands the top of each thread's heap back to the
// kernel between requests, so the next one page-faults it in again: in a durable SubmitJob
// the faults cost more than the dispatcher's read of the new job. TuneMallocForServer stops
// trimming and grows heaps 16 MB at a time (address space; pages become resident only when
// used). Large blocks are still mmapped and returned.
//
// A variable the user set (MALLOC_MMAP_MAX_, MALLOC_TRIM_THRESHOLD_, MALLOC_MMAP_THRESHOLD_,
// MALLOC_TOP_PAD_) or LMTRAIN_MALLOC_TUNING=0 leaves glibc's settings alone. Call one of them
// once, early in main.
#pragma once

namespace lmtrain {

// True when the settings were applied.
bool TuneMallocForTraining();
bool TuneMallocForServer();

}  // namespace lmtrain
