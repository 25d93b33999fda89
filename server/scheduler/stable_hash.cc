#include "server/scheduler/stable_hash.h"

namespace lmtrain::scheduler::internal {

uint64_t SeededHash(uint64_t seed, const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a offset basis.
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;  // FNV-1a prime.
  }
  // splitmix64 finalizer over (h, seed): FNV alone mixes the last bytes poorly.
  uint64_t z = h ^ (seed + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace lmtrain::scheduler::internal
