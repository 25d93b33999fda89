/* lmtrain sentencepiece shim: a C ABI over libsentencepiece(+_train).
 *
 * Why it exists: Debian's libsentencepiece.so.0 carries its own copy of
 * protobuf and breaks at load time in any process that also loads libprotobuf
 * (LibTorch and gRPC do), and its headers clash with abseil. So sentencepiece
 * lives only inside liblmtrain_spm.so, which the tokenizers library dlopen()s
 * with RTLD_LOCAL | RTLD_DEEPBIND and never links directly. This header is
 * plain C so that nothing of sentencepiece, protobuf or the C++ ABI crosses the
 * boundary.
 *
 * Conventions:
 *  - Functions returning `int` return 0 on success, else a status code with
 * absl's numbering (3 invalid argument, 5 not found, 11 out of range, 13
 * internal, ...); the message is then available from lmtrain_spm_last_error()
 * on the same thread.
 *  - Buffers handed out through `char**` / `int32_t**` are owned by the caller
 * and released with lmtrain_spm_free_buffer(). Strings are UTF-8 with explicit
 * sizes (no NUL needed).
 *  - A model is immutable after loading; every const function may be called
 * from several threads at once. Training is serialized internally
 * (sentencepiece keeps global state).
 *  - No function throws or aborts on bad input.
 */
#ifndef LMTRAIN_TEXT_SPM_SPM_SHIM_H_
#define LMTRAIN_TEXT_SPM_SPM_SHIM_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
/* The library is built with hidden visibility; only these functions are
 * exported. */
#pragma GCC visibility push(default)

/* Bumped on any change of the functions below; the loader refuses a different
 * version. */
#define LMTRAIN_SPM_ABI_VERSION 2

typedef struct LmtrainSpmModel LmtrainSpmModel;

/* Kinds of pieces, as sentencepiece's ModelProto::SentencePiece::Type. */
enum LmtrainSpmPieceKind {
  LMTRAIN_SPM_PIECE_NORMAL = 1,
  LMTRAIN_SPM_PIECE_UNKNOWN = 2,
  LMTRAIN_SPM_PIECE_CONTROL = 3,
  LMTRAIN_SPM_PIECE_USER_DEFINED = 4,
  LMTRAIN_SPM_PIECE_UNUSED = 5,
  LMTRAIN_SPM_PIECE_BYTE = 6
};

/* Reserved ids, for lmtrain_spm_special_id(). */
enum LmtrainSpmSpecial {
  LMTRAIN_SPM_UNK = 0,
  LMTRAIN_SPM_BOS = 1,
  LMTRAIN_SPM_EOS = 2,
  LMTRAIN_SPM_PAD = 3
};

/* LMTRAIN_SPM_ABI_VERSION of the built library. */
int lmtrain_spm_abi_version(void);

/* Message of the last failed call on this thread ("" if none). Valid until the
 * next call. */
const char* lmtrain_spm_last_error(void);

/* Releases a buffer returned by encode, decode or train. NULL is fine. */
void lmtrain_spm_free_buffer(void* buffer);

/* Parses a serialized ModelProto (the bytes of a .model file) into *model,
 * owned by the caller (release with lmtrain_spm_free). Invalid bytes:
 * InvalidArgument-style code, *model untouched. */
int lmtrain_spm_load(const char* data, size_t size, LmtrainSpmModel** model);
void lmtrain_spm_free(LmtrainSpmModel* model);

/* Number of pieces. */
int32_t lmtrain_spm_vocab_size(const LmtrainSpmModel* model);

/* Ids of `text` (no BOS/EOS added) into a new buffer of *count ids. */
int lmtrain_spm_encode(const LmtrainSpmModel* model, const char* text, size_t size, int32_t** ids,
                       size_t* count);

/* As lmtrain_spm_encode, plus where each piece came from: `*spans` gets
 * 2 * *count values, begin and end (exclusive) byte offsets of piece i's surface
 * in `text` (sentencepiece's own alignment, exact through normalization; a
 * piece made only of the dummy-prefix meta symbol has begin == end). Both
 * buffers are the caller's. */
int lmtrain_spm_encode_with_spans(const LmtrainSpmModel* model, const char* text, size_t size,
                                  int32_t** ids, uint32_t** spans, size_t* count);

/* Text of `ids` into a new buffer of *size bytes (also NUL-terminated). Ids out
 * of range fail. */
int lmtrain_spm_decode(const LmtrainSpmModel* model, const int32_t* ids, size_t count, char** text,
                       size_t* size);

/* Id of the piece spelled exactly `piece`, or -1 when the vocabulary has no
 * such piece. */
int32_t lmtrain_spm_piece_to_id(const LmtrainSpmModel* model, const char* piece, size_t size);

/* Spelling of piece `id`; *piece points into the model and lives as long as it
 * does. Out-of-range id: code 11. */
int lmtrain_spm_id_to_piece(const LmtrainSpmModel* model, int32_t id, const char** piece,
                            size_t* size);

/* LmtrainSpmPieceKind of `id`, or 0 when out of range. */
int lmtrain_spm_piece_kind(const LmtrainSpmModel* model, int32_t id);

/* Id reserved for `which` (an LmtrainSpmSpecial), or -1 when the model has
 * none. */
int32_t lmtrain_spm_special_id(const LmtrainSpmModel* model, int which);

/* Trains a model with sentencepiece's trainer flags given as `count` key/value
 * pairs (the spm_train flag names without "--", e.g. {"vocab_size", "2000"})
 * and returns the serialized ModelProto in a new buffer; writes no files. The
 * text is `sentence_count` sentences
 * (`sentences[i]` of `sentence_sizes[i]` bytes) when `sentences` is not NULL
 * (then no "input" flag), else the files of the "input" flag. sentencepiece's
 * global random generator is seeded with `seed` (0.1.97 samples "input"
 * sentences with a fixed seed of its own, so `seed` only reaches its other
 * random choices). Deterministic for given flags, text and seed when
 * num_threads is 1. */
int lmtrain_spm_train(const char* const* keys, const char* const* values, size_t count,
                      const char* const* sentences, const size_t* sentence_sizes,
                      size_t sentence_count, uint32_t seed, char** model, size_t* size);

#pragma GCC visibility pop
#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LMTRAIN_TEXT_SPM_SPM_SHIM_H_ */
