// The only translation unit that sees sentencepiece headers (they clash with
// abseil), so it includes nothing from lmtrain but spm_shim.h.
#include "text/spm/spm_shim.h"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sentencepiece_processor.h"
#include "sentencepiece_trainer.h"

struct LmtrainSpmModel {
  sentencepiece::SentencePieceProcessor processor;
};

namespace {

constexpr int kInvalidArgument = 3;
constexpr int kOutOfRange = 11;
constexpr int kInternal = 13;
constexpr int kResourceExhausted = 8;

thread_local std::string last_error;

int Fail(int code, std::string message) {
  last_error = std::move(message);
  return code;
}

int FromSpm(const sentencepiece::util::Status& status) {
  if (status.ok()) return 0;
  return Fail(static_cast<int>(status.code()), status.error_message());
}

// Converts escaping C++ exceptions (only std::bad_alloc is realistic) into
// codes: nothing may unwind through the C ABI.
template <typename Fn>
int Guard(Fn&& fn) {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    return Fail(kResourceExhausted, "sentencepiece shim: out of memory");
  } catch (const std::exception& e) {
    return Fail(kInternal, std::string("sentencepiece shim: ") + e.what());
  } catch (...) {
    return Fail(kInternal, "sentencepiece shim: unknown exception");
  }
}

bool InRange(const LmtrainSpmModel* model, int32_t id) {
  return id >= 0 && id < model->processor.GetPieceSize();
}

// Copies `bytes` into a malloc'ed buffer for the caller.
int HandOut(const void* bytes, size_t size, void** out) {
  void* buffer = std::malloc(size + 1);
  if (buffer == nullptr) return Fail(kResourceExhausted, "sentencepiece shim: out of memory");
  if (size > 0) std::memcpy(buffer, bytes, size);
  static_cast<char*>(buffer)[size] = '\0';
  *out = buffer;
  return 0;
}

// Feeds in-memory sentences to the trainer.
class ArrayIterator : public sentencepiece::SentenceIterator {
 public:
  ArrayIterator(const char* const* sentences, const size_t* sizes, size_t count)
      : sentences_(sentences), sizes_(sizes), count_(count) {
    Load();
  }
  bool done() const override { return index_ >= count_; }
  void Next() override {
    ++index_;
    Load();
  }
  const std::string& value() const override { return value_; }
  sentencepiece::util::Status status() const override { return {}; }

 private:
  void Load() {
    if (!done()) value_.assign(sentences_[index_], sizes_[index_]);
  }
  const char* const* sentences_;
  const size_t* sizes_;
  size_t count_;
  size_t index_ = 0;
  std::string value_;
};

// sentencepiece seeds a thread_local generator once per thread from the global
// seed, so a second training on the same thread would continue the first one's
// random stream. Training on a fresh thread makes every run start from `seed`.
int TrainOnFreshThread(const std::unordered_map<std::string, std::string>& kwargs,
                       sentencepiece::SentenceIterator* sentences, uint32_t seed,
                       std::string* serialized) {
  static std::mutex* const mu = new std::mutex;  // sentencepiece's seed and flags are global.
  std::lock_guard<std::mutex> lock(*mu);
  sentencepiece::SetRandomGeneratorSeed(seed);
  int rc = 0;
  std::string error;
  std::thread worker([&] {
    rc = Guard([&] {
      return FromSpm(sentencepiece::SentencePieceTrainer::Train(kwargs, sentences, serialized));
    });
    if (rc != 0) error = last_error;
  });
  worker.join();
  return rc == 0 ? 0 : Fail(rc, error);
}

}  // namespace

extern "C" {

int lmtrain_spm_abi_version(void) { return LMTRAIN_SPM_ABI_VERSION; }

const char* lmtrain_spm_last_error(void) { return last_error.c_str(); }

void lmtrain_spm_free_buffer(void* buffer) { std::free(buffer); }

int lmtrain_spm_load(const char* data, size_t size, LmtrainSpmModel** model) {
  return Guard([&] {
    auto loaded = std::make_unique<LmtrainSpmModel>();
    int rc = FromSpm(loaded->processor.LoadFromSerializedProto(std::string_view(data, size)));
    if (rc != 0) return rc;
    *model = loaded.release();
    return 0;
  });
}

void lmtrain_spm_free(LmtrainSpmModel* model) { delete model; }

int32_t lmtrain_spm_vocab_size(const LmtrainSpmModel* model) {
  return model->processor.GetPieceSize();
}

int lmtrain_spm_encode(const LmtrainSpmModel* model, const char* text, size_t size, int32_t** ids,
                       size_t* count) {
  return Guard([&] {
    std::vector<int> result;
    int rc = FromSpm(model->processor.Encode(std::string_view(text, size), &result));
    if (rc != 0) return rc;
    static_assert(sizeof(int) == sizeof(int32_t), "int must be 32 bits");
    void* buffer = nullptr;
    rc = HandOut(result.data(), result.size() * sizeof(int32_t), &buffer);
    if (rc != 0) return rc;
    *ids = static_cast<int32_t*>(buffer);
    *count = result.size();
    return 0;
  });
}

int lmtrain_spm_encode_with_spans(const LmtrainSpmModel* model, const char* text, size_t size,
                                  int32_t** ids, uint32_t** spans, size_t* count) {
  return Guard([&] {
    const sentencepiece::ImmutableSentencePieceText encoded =
        model->processor.EncodeAsImmutableProto(std::string_view(text, size));
    std::vector<int32_t> piece_ids;
    std::vector<uint32_t> piece_spans;
    for (const auto& piece : encoded.pieces()) {
      piece_ids.push_back(static_cast<int32_t>(piece.id()));
      piece_spans.push_back(piece.begin());
      piece_spans.push_back(piece.end());
    }
    void* id_buffer = nullptr;
    void* span_buffer = nullptr;
    int rc = HandOut(piece_ids.data(), piece_ids.size() * sizeof(int32_t), &id_buffer);
    if (rc != 0) return rc;
    rc = HandOut(piece_spans.data(), piece_spans.size() * sizeof(uint32_t), &span_buffer);
    if (rc != 0) {
      std::free(id_buffer);
      return rc;
    }
    *ids = static_cast<int32_t*>(id_buffer);
    *spans = static_cast<uint32_t*>(span_buffer);
    *count = piece_ids.size();
    return 0;
  });
}

int lmtrain_spm_decode(const LmtrainSpmModel* model, const int32_t* ids, size_t count, char** text,
                       size_t* size) {
  return Guard([&] {
    std::vector<int> pieces(ids, ids + count);
    for (int id : pieces) {
      if (!InRange(model, id)) {
        return Fail(kOutOfRange, "sentencepiece decode: id " + std::to_string(id) +
                                     " is outside the vocabulary of " +
                                     std::to_string(model->processor.GetPieceSize()));
      }
    }
    std::string result;
    int rc = FromSpm(model->processor.Decode(pieces, &result));
    if (rc != 0) return rc;
    void* buffer = nullptr;
    rc = HandOut(result.data(), result.size(), &buffer);
    if (rc != 0) return rc;
    *text = static_cast<char*>(buffer);
    *size = result.size();
    return 0;
  });
}

int32_t lmtrain_spm_piece_to_id(const LmtrainSpmModel* model, const char* piece, size_t size) {
  const std::string_view wanted(piece, size);
  // PieceToId answers unk_id for unknown pieces; tell those apart from "<unk>"
  // itself.
  const int id = model->processor.PieceToId(wanted);
  if (!InRange(model, id) || model->processor.IdToPiece(id) != wanted) return -1;
  return id;
}

int lmtrain_spm_id_to_piece(const LmtrainSpmModel* model, int32_t id, const char** piece,
                            size_t* size) {
  if (!InRange(model, id)) {
    return Fail(kOutOfRange, "sentencepiece: id " + std::to_string(id) + " out of range");
  }
  const std::string& spelling = model->processor.IdToPiece(id);
  *piece = spelling.data();
  *size = spelling.size();
  return 0;
}

int lmtrain_spm_piece_kind(const LmtrainSpmModel* model, int32_t id) {
  if (!InRange(model, id)) return 0;
  const sentencepiece::SentencePieceProcessor& p = model->processor;
  if (p.IsUnknown(id)) return LMTRAIN_SPM_PIECE_UNKNOWN;
  if (p.IsControl(id)) return LMTRAIN_SPM_PIECE_CONTROL;
  if (p.IsUnused(id)) return LMTRAIN_SPM_PIECE_UNUSED;
  if (p.IsByte(id)) return LMTRAIN_SPM_PIECE_BYTE;
  // User-defined pieces are not distinguishable through the public API without
  // the proto headers; they behave as normal pieces for encoding and decoding.
  return LMTRAIN_SPM_PIECE_NORMAL;
}

int32_t lmtrain_spm_special_id(const LmtrainSpmModel* model, int which) {
  const sentencepiece::SentencePieceProcessor& p = model->processor;
  int id = -1;
  switch (which) {
    case LMTRAIN_SPM_UNK:
      id = p.unk_id();
      break;
    case LMTRAIN_SPM_BOS:
      id = p.bos_id();
      break;
    case LMTRAIN_SPM_EOS:
      id = p.eos_id();
      break;
    case LMTRAIN_SPM_PAD:
      id = p.pad_id();
      break;
    default:
      return -1;
  }
  return InRange(model, id) ? id : -1;
}

int lmtrain_spm_train(const char* const* keys, const char* const* values, size_t count,
                      const char* const* sentences, const size_t* sentence_sizes,
                      size_t sentence_count, uint32_t seed, char** model, size_t* size) {
  return Guard([&] {
    std::unordered_map<std::string, std::string> kwargs;
    for (size_t i = 0; i < count; ++i) {
      if (keys[i] == nullptr || values[i] == nullptr) {
        return Fail(kInvalidArgument, "sentencepiece train: null flag name or value");
      }
      kwargs[keys[i]] = values[i];
    }
    std::unique_ptr<ArrayIterator> iterator;
    if (sentences != nullptr) {
      if (kwargs.count("input") != 0) {
        return Fail(kInvalidArgument, "sentencepiece train: both sentences and --input given");
      }
      iterator = std::make_unique<ArrayIterator>(sentences, sentence_sizes, sentence_count);
    }
    std::string serialized;
    int rc = TrainOnFreshThread(kwargs, iterator.get(), seed, &serialized);
    if (rc != 0) return rc;
    void* buffer = nullptr;
    rc = HandOut(serialized.data(), serialized.size(), &buffer);
    if (rc != 0) return rc;
    *model = static_cast<char*>(buffer);
    *size = serialized.size();
    return 0;
  });
}

}  // extern "C"
