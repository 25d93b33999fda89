#include "worker/models/internal/pickle_globals.h"

#include <cstdint>
#include <cstring>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"

namespace lmtrain::internal {
namespace {

constexpr absl::string_view kAllowedGlobals[] = {
    "collections OrderedDict",
    "torch._utils _rebuild_tensor_v2",
    "torch._utils _rebuild_parameter",
    "torch BFloat16Storage",
    "torch BoolStorage",
    "torch ByteStorage",
    "torch CharStorage",
    "torch DoubleStorage",
    "torch FloatStorage",
    "torch HalfStorage",
    "torch IntStorage",
    "torch LongStorage",
    "torch ShortStorage",
};

// How an opcode's argument is laid out after the opcode byte.
enum class Arg {
  kNone,
  kLine,       // Up to and including '\n'.
  kTwoLines,   // GLOBAL / INST: "module\nname\n".
  kFixed,      // `size` bytes.
  kCounted,    // A little-endian length of `size` bytes, then that many bytes.
  kForbidden,  // Imports or builds by a name from the stack.
};

struct Opcode {
  Arg arg;
  int size;
};

std::optional<Opcode> OpcodeOf(uint8_t op) {
  switch (op) {
    case '(':
    case '.':
    case '0':
    case '1':
    case '2':
    case 'N':
    case 'R':
    case 'a':
    case 'b':
    case 'd':
    case '}':
    case 'e':
    case 'l':
    case ']':
    case 's':
    case 't':
    case ')':
    case 'u':
    case 'Q':
    case 0x85:
    case 0x86:
    case 0x87:
    case 0x88:
    case 0x89:
    case 0x8f:
    case 0x90:
    case 0x91:
    case 0x94:
    case 0x97:
    case 0x98:
      return Opcode{Arg::kNone, 0};
    case 'I':
    case 'L':
    case 'F':
    case 'S':
    case 'V':
    case 'P':
    case 'g':
    case 'p':
      return Opcode{Arg::kLine, 0};
    case 'c':
      return Opcode{Arg::kTwoLines, 0};
    case 'K':
    case 'h':
    case 'q':
    case 0x80:
      return Opcode{Arg::kFixed, 1};
    case 'M':
      return Opcode{Arg::kFixed, 2};
    case 'J':
    case 'j':
    case 'r':
      return Opcode{Arg::kFixed, 4};
    case 'G':
    case 0x95:  // BINFLOAT; FRAME (its length only: the framed opcodes follow).
      return Opcode{Arg::kFixed, 8};
    case 'U':
    case 'C':
    case 0x8c:
    case 0x8a:
      return Opcode{Arg::kCounted, 1};
    case 'T':
    case 'B':
    case 'X':
    case 0x8b:
      return Opcode{Arg::kCounted, 4};
    case 0x8d:
    case 0x8e:
    case 0x96:
      return Opcode{Arg::kCounted, 8};
    case 'i':
    case 'o':
    case 0x81:
    case 0x92:
    case 0x93:
    case 0x82:
    case 0x83:
    case 0x84:
      return Opcode{Arg::kForbidden, 0};
    default:
      return std::nullopt;
  }
}

class Walker {
 public:
  Walker(absl::string_view data, const std::string& source) : data_(data), source_(source) {}

  absl::StatusOr<std::string> Run() {
    while (pos_ < data_.size()) {
      const size_t start = pos_;
      const uint8_t op = static_cast<uint8_t>(data_[pos_++]);
      RETURN_IF_ERROR(Step(op, start));
      RETURN_IF_ERROR(Rewrite(op, start));
      if (op == '.') return std::move(out_);
    }
    return Error(pos_, "ends without the STOP opcode");
  }

 private:
  // Where an OrderedDict() call stands: its class on the stack, then its empty argument tuple.
  enum class Call { kNone, kClass, kArgs };

  // Copies the opcode at `start` to out_, except where LibTorch's unpickler differs from
  // Python's: it turns OrderedDict() into None (it expects one only as a tensor's unused
  // backward hooks), so `OrderedDict [BINPUT] EMPTY_TUPLE REDUCE` (or the class fetched from the
  // memo) becomes EMPTY_DICT: a plain dict, same keys in the same order. It cannot apply BUILD
  // (an object's attributes, as a state dict's _metadata): BUILD becomes TUPLE2, pairing the
  // object with its attributes, and ReadPytorchWeights keeps the object.
  absl::Status Rewrite(uint8_t op, size_t start) {
    const Call call = call_;
    call_ = Call::kNone;
    if (op == 'c' && last_global_ == "collections OrderedDict") {
      call_ = Call::kClass;
    } else if ((op == 'h' || op == 'j') && ordered_dict_memo_.count(MemoIndex(start)) > 0) {
      call_ = Call::kClass;
    } else if ((op == 'q' || op == 'r') && call == Call::kClass) {
      ordered_dict_memo_.insert(MemoIndex(start));  // The class is kept out of the memo too.
      call_ = Call::kClass;
    } else if (op == ')' && call == Call::kClass) {
      call_ = Call::kArgs;
    } else if (op == 'R' && call == Call::kArgs) {
      out_.push_back('}');
    } else if (call != Call::kNone) {
      return Error(start, "uses collections.OrderedDict other than as OrderedDict()");
    } else {
      out_.append(data_.data() + start, pos_ - start);
      if (op == 'b') out_.back() = '\x86';
    }
    return absl::OkStatus();
  }

  // The memo index argument of BINPUT/BINGET (1 byte) or LONG_BINPUT/LONG_BINGET (4 bytes).
  uint32_t MemoIndex(size_t start) const {
    uint32_t index = 0;
    const int width = (data_[start] == 'q' || data_[start] == 'h') ? 1 : 4;
    std::memcpy(&index, data_.data() + start + 1, width);
    return index;
  }

  absl::Status Step(uint8_t op, size_t start) {
    std::optional<Opcode> code = OpcodeOf(op);
    if (!code) return Error(start, absl::StrFormat("has unknown opcode 0x%02x", op));
    switch (code->arg) {
      case Arg::kNone:
        return absl::OkStatus();
      case Arg::kLine:
        return Line(start).status();
      case Arg::kTwoLines:
        return Global(start);
      case Arg::kFixed:
        return Skip(code->size, start);
      case Arg::kCounted:
        return Counted(code->size, start);
      case Arg::kForbidden:
        break;
    }
    return Error(
        start, absl::StrFormat("uses opcode 0x%02x, which builds objects by name; only state dicts "
                               "of tensors are loaded",
                               op));
  }

  absl::Status Global(size_t start) {
    ASSIGN_OR_RETURN(absl::string_view module, Line(start));
    ASSIGN_OR_RETURN(absl::string_view name, Line(start));
    last_global_ = absl::StrCat(module, " ", name);
    for (absl::string_view allowed : kAllowedGlobals) {
      if (last_global_ == allowed) return absl::OkStatus();
    }
    return Error(start, absl::StrCat("imports ", module, ".", name,
                                     ", which is not a tensor, storage or OrderedDict: refusing "
                                     "to unpickle it (pickles can run code)"));
  }

  absl::StatusOr<absl::string_view> Line(size_t start) {
    const size_t end = data_.find('\n', pos_);
    if (end == absl::string_view::npos) return Error(start, "is truncated");
    absl::string_view line = data_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return line;
  }

  absl::Status Skip(uint64_t bytes, size_t start) {
    if (bytes > data_.size() - pos_) return Error(start, "is truncated");
    pos_ += bytes;
    return absl::OkStatus();
  }

  absl::Status Counted(int width, size_t start) {
    if (static_cast<size_t>(width) > data_.size() - pos_) return Error(start, "is truncated");
    uint64_t length = 0;
    std::memcpy(&length, data_.data() + pos_, width);  // Little-endian host (as safetensors.cc).
    pos_ += width;
    return Skip(length, start);
  }

  absl::Status Error(size_t offset, absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat(source_, ": the pickle ", what, " (at byte ", offset, ")"));
  }

  absl::string_view data_;
  const std::string& source_;
  std::string out_;  // The rewritten pickle.
  size_t pos_ = 0;
  std::string last_global_;
  Call call_ = Call::kNone;
  std::set<uint32_t> ordered_dict_memo_;  // Memo slots holding the OrderedDict class.
};

}  // namespace

absl::StatusOr<std::string> CheckStateDictPickle(absl::string_view pickle,
                                                 const std::string& source) {
  return Walker(pickle, source).Run();
}

}  // namespace lmtrain::internal
