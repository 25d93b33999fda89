// GPU assignment: which of a worker's GPUs each rank of a new attempt gets, and how the choice
// is shown to users.
//
// The dispatcher, not the worker, picks the indices. It alone sees every worker's devices and
// every rank (running, starting, or stale and being stopped) and it picks them in the same
// critical section as the scheduling decision that counted the free GPUs, so an index is never
// handed to two ranks at once and the choice is on record (the attempt's rank_gpus, its
// SCHEDULED event) before any process starts. Workers only apply it (CUDA_VISIBLE_DEVICES) and
// report it back with their running ranks, which lets a restarted server rebuild the map.
//
// Pure functions; thread-safe.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace lmtrain {

// The lowest `per_rank` free indices for each of `ranks` ranks, in rank order: indices in
// `devices` (a worker's cuda device indices) that are not in `held`. ResourceExhausted when
// there are too few.
absl::StatusOr<std::vector<std::vector<int>>> PickGpus(const std::vector<int>& devices,
                                                       const std::set<int>& held, int ranks,
                                                       int per_rank);

// "rank 0 on w1 GPU 2" / "rank 1 on w1 GPUs 2,3"; "" when `gpus` is empty.
std::string DescribeRankGpus(int rank, const std::string& worker_id, const std::vector<int>& gpus);

}  // namespace lmtrain
