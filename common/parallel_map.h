// fn(0), ..., fn(n - 1) on several threads, results in index order: HF datasets.map's num_proc
// (data.preprocessing_num_workers) for tokenisation, whose results do not depend on how many
// workers there are.
// Thread-safe if fn may be called concurrently (fn of different indices at once).
#pragma once

#include <algorithm>
#include <cstddef>
#include <thread>
#include <utility>
#include <vector>

namespace lmtrain {

// The results of fn(i) for i in [0, n), in order. `workers` threads each take one contiguous
// range of indices (the calling thread the last one); workers <= 1, or n too small to share,
// runs everything on the calling thread. fn must not throw.
template <typename Fn>
auto ParallelMap(size_t n, int workers, Fn&& fn) -> std::vector<decltype(fn(size_t{0}))> {
  std::vector<decltype(fn(size_t{0}))> out(n);
  const size_t threads = std::min(n, static_cast<size_t>(std::max(workers, 1)));
  if (threads <= 1) {
    for (size_t i = 0; i < n; ++i) out[i] = fn(i);
    return out;
  }
  const auto run = [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) out[i] = fn(i);
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (size_t t = 0; t + 1 < threads; ++t) {
    pool.emplace_back(run, n * t / threads, n * (t + 1) / threads);
  }
  run(n * (threads - 1) / threads, n);
  for (std::thread& thread : pool) thread.join();
  return out;
}

}  // namespace lmtrain
