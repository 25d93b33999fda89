// Where lm-train is by default: the programs that start it (lm-worker, lm-server's predictions
// and its local worker) look next to their own executable.
#pragma once

#include <string>

namespace lmtrain {

// DIR/lm-train where DIR holds the running executable (/proc/self/exe); "lm-train" (a PATH
// lookup) when that link cannot be read.
std::string DefaultTrainerPath();

}  // namespace lmtrain
