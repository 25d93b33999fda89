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
// A variable the user set (MALLOC_MMAP_MAX_, MALLOC_TRIM_THRESHOLD_, MALLOC_MMAP_THRESHOLD_)
// or LMTRAIN_MALLOC_TUNING=0 leaves glibc's settings alone. Call once, early in main.
#pragma once

namespace lmtrain {

// True when the settings were applied.
bool TuneMallocForTraining();

}  // namespace lmtrain
