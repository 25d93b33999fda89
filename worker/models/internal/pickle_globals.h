// A static check of a Python pickle (the data.pkl of a torch.save zip archive) before anything
// unpickles it: pickles call whatever callable a GLOBAL opcode names, so a weights file could
// run code. Nothing is executed here: the opcodes are walked once and every name is compared
// with an allowlist. Thread-safe: pure functions.
//
// The check also returns the pickle to give LibTorch's unpickler, rewritten where that unpickler
// differs from Python's: `OrderedDict()` (which it turns into None) becomes an empty dict, and
// BUILD (set an object's attributes, as torch.save keeps a state dict's `_metadata`, which it
// cannot apply and a state dict does not need) becomes TUPLE2: (object, attributes).
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace lmtrain::internal {

// The rewritten pickle when every opcode of `pickle` (protocols 0-5) is known and
// every global it imports is one that a state dict written by torch.save needs:
// collections.OrderedDict, the tensor rebuild functions of torch._utils (_rebuild_tensor_v2,
// _rebuild_parameter) and the typed storage classes (torch.FloatStorage, torch.HalfStorage, ...).
// Opcodes that import or build objects by names taken from the stack (STACK_GLOBAL, INST, OBJ,
// NEWOBJ, NEWOBJ_EX, EXT1/2/4) are refused, since their targets cannot be checked without running
// the pickle. InvalidArgument starting with `source` and naming the offending global / opcode and
// its byte offset, or saying where the data is truncated.
absl::StatusOr<std::string> CheckStateDictPickle(absl::string_view pickle,
                                                 const std::string& source);

}  // namespace lmtrain::internal
