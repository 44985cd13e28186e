// Codecs over libzstd and liblz4 with pooled contexts. See codec.h.
//
// Why one-shot calls on streaming contexts: the caller hands over the whole
// input at once, so ZSTD_compressStream2(ZSTD_e_end) and LZ4F with
// autoFlush compress straight from the input into the output without the
// internal staging copy that chunked streaming needs, while the contexts
// (the expensive part) are reused. The zstd frame is the same kind MySQL's
// streaming compressor writes (no content size, no checksum); only the
// block boundaries can differ, which no decoder cares about.

#include "io/codec.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "lz4frame.h"
#include "sync/mutex.h"
#include "zstd.h"
#include "zstd_errors.h"

#define BINLOG_IO_RETURN_IF_ERROR(expr)        \
  do {                                         \
    absl::Status binlog_io_status_ = (expr);   \
    if (!binlog_io_status_.ok()) return binlog_io_status_; \
  } while (0)

namespace binlog {
namespace io {
namespace {

// zstd's default window limit (ZSTD_WINDOWLOG_LIMIT_DEFAULT): frames with
// larger windows need explicit consent from every decoder, MySQL's included.
constexpr int kZstdMaxWindowLog = 27;
// Windows up to 8 MiB are always accepted: MySQL's levels 1-19 stay within.
constexpr int kZstdMinWindowLogLimit = 23;

// First allocation for an output whose size the caller only hints at: never
// more than the input could plausibly inflate to; the buffer doubles from
// there if the data really is that compressible.
constexpr size_t kPlausibleRatio = 64;
constexpr size_t kMinOutput = 4096;

// Contexts pooled process-wide, per kind, handed out last-in first-out.
//
// Why a pool and not thread_local contexts: with 64 committing threads on
// 2 vCPUs, per-thread contexts meant 64 sets of codec tables competing for
// the caches, and a thread-per-connection server would create contexts for
// every connection. A LIFO pool hands out the context used last (still in
// cache), needs only as many contexts as compressions really run at once,
// and outlives threads. The mutex is held for a push or a pop.
// Contexts created, all pools: incremented (relaxed) by whichever thread
// creates one, read by CodecContextsCreated() for tests; a statistic only.
std::atomic<uint64_t> g_contexts_created{0};

template <typename Ctx>
class ContextPool {
 public:
  using Destroy = void (*)(Ctx*);
  explicit ContextPool(Destroy destroy) : destroy_(destroy) {
    free_.reserve(256);  // grows (once) only past 256 concurrent users
  }
  // A pooled context, or nullptr when the caller must create one.
  Ctx* Take() {
    sync::MutexLock l(&mu_);
    if (free_.empty()) return nullptr;
    Ctx* c = free_.back();
    free_.pop_back();
    return c;
  }
  void Give(Ctx* c) {
    sync::MutexLock l(&mu_);
    free_.push_back(c);
  }
  // A context that failed mid-operation is not reused.
  void Discard(Ctx* c) { destroy_(c); }

 private:
  Destroy destroy_;
  sync::Mutex mu_;
  std::vector<Ctx*> free_ ABSL_GUARDED_BY(mu_);
};

// Never destroyed: contexts may be in use by threads that outlive static
// destruction, and the process exit frees them anyway.
ContextPool<ZSTD_CCtx>& ZstdCPool() {
  static auto* p = new ContextPool<ZSTD_CCtx>(
      [](ZSTD_CCtx* c) { ZSTD_freeCCtx(c); });
  return *p;
}
ContextPool<ZSTD_DCtx>& ZstdDPool() {
  static auto* p = new ContextPool<ZSTD_DCtx>(
      [](ZSTD_DCtx* c) { ZSTD_freeDCtx(c); });
  return *p;
}
ContextPool<LZ4F_cctx>& Lz4CPool() {
  static auto* p = new ContextPool<LZ4F_cctx>(
      [](LZ4F_cctx* c) { LZ4F_freeCompressionContext(c); });
  return *p;
}
ContextPool<LZ4F_dctx>& Lz4DPool() {
  static auto* p = new ContextPool<LZ4F_dctx>(
      [](LZ4F_dctx* c) { LZ4F_freeDecompressionContext(c); });
  return *p;
}

ZSTD_CCtx* NewZstdC() { return ZSTD_createCCtx(); }
ZSTD_DCtx* NewZstdD() { return ZSTD_createDCtx(); }
LZ4F_cctx* NewLz4C() {
  LZ4F_cctx* c = nullptr;
  if (LZ4F_isError(LZ4F_createCompressionContext(&c, LZ4F_VERSION))) return nullptr;
  return c;
}
LZ4F_dctx* NewLz4D() {
  LZ4F_dctx* c = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&c, LZ4F_VERSION))) return nullptr;
  return c;
}

// A context borrowed from a pool for one call; returned on scope exit.
template <typename Ctx>
class Lease {
 public:
  Lease(ContextPool<Ctx>* pool, Ctx* (*create)()) : pool_(pool) {
    ctx_ = pool->Take();
    if (ctx_ == nullptr) {
      ctx_ = create();
      if (ctx_ != nullptr) g_contexts_created.fetch_add(1, std::memory_order_relaxed);
    }
  }
  ~Lease() {
    if (ctx_ != nullptr) pool_->Give(ctx_);
  }
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  Ctx* get() const { return ctx_; }
  void Discard() {
    pool_->Discard(ctx_);
    ctx_ = nullptr;
  }

 private:
  ContextPool<Ctx>* pool_;
  Ctx* ctx_;
};

absl::Status NoContext(const char* what) {
  return absl::ResourceExhaustedError(
      absl::StrCat("cannot allocate a ", what, " context"));
}

LZ4F_preferences_t Lz4Preferences(int level) {
  LZ4F_preferences_t p;
  std::memset(&p, 0, sizeof(p));
  p.frameInfo.blockSizeID = LZ4F_max64KB;
  // Independent blocks: with linked blocks liblz4 1.9.4 frees and
  // reallocates its 64 KiB history buffer at every LZ4F_compressBegin (an
  // allocation per commit, found by tests/compression/alloc_test); a
  // transaction below 64 KiB is one block either way, so the ratio is the
  // same for all but large transactions.
  p.frameInfo.blockMode = LZ4F_blockIndependent;
  p.frameInfo.contentChecksumFlag = LZ4F_noContentChecksum;
  p.frameInfo.frameType = LZ4F_frame;
  p.frameInfo.contentSize = 0;
  p.frameInfo.blockChecksumFlag = LZ4F_noBlockChecksum;
  p.compressionLevel = level;
  p.autoFlush = 1;  // compress straight from the input, no staging copy
  return p;
}

int Log2Ceil(uint64_t n) {
  int l = 0;
  while (l < 63 && (1ull << l) < n) ++l;
  return l;
}

size_t FirstCapacity(size_t input_size, uint64_t size_hint, size_t limit) {
  uint64_t plausible =
      static_cast<uint64_t>(input_size) * kPlausibleRatio + (64u << 10);
  uint64_t want = plausible;
  if (size_hint != 0 && size_hint < plausible) want = size_hint + 1;
  if (size_hint == 0) want = std::min<uint64_t>(plausible, input_size * 4 + 1);
  want = std::max<uint64_t>(want, kMinOutput);
  return static_cast<size_t>(std::min<uint64_t>(want, limit));
}

// Grows `out` for more output: *full when it already holds `limit` bytes of
// room (the caller's max_output + 1: one byte past the cap detects "too
// much" without decompressing further); ResourceExhausted when the memory
// cannot be had.
absl::Status Grow(ByteBuffer* out, size_t limit, bool* full) {
  *full = out->capacity() >= limit;
  if (*full) return absl::OkStatus();
  size_t cap = out->capacity();
  size_t next = std::max(cap * 2, cap + kMinOutput);
  absl::Status s = out->Reserve(std::min(next, limit));
  if (!s.ok()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "decompressed data: ", s.message(), " after ", out->size(),
        " bytes of output"));
  }
  return absl::OkStatus();
}

// The first buffer of a decompression (FirstCapacity bytes).
absl::Status FirstBuffer(ByteBuffer* out, size_t n) {
  out->clear();
  absl::Status s = out->Reserve(n);
  if (!s.ok()) {
    return absl::ResourceExhaustedError(
        absl::StrCat("decompressed data: ", s.message()));
  }
  return absl::OkStatus();
}

absl::Status TooLarge(size_t max_output) {
  return absl::DataLossError(absl::StrCat(
      "decompressed data exceeds the limit of ", max_output, " bytes"));
}

absl::Status DecompressZstd(absl::string_view input, uint64_t size_hint,
                            size_t max_output, ByteBuffer* out) {
  Lease<ZSTD_DCtx> lease(&ZstdDPool(), &NewZstdD);
  ZSTD_DCtx* d = lease.get();
  if (d == nullptr) return NoContext("zstd decompression");
  ZSTD_DCtx_reset(d, ZSTD_reset_session_and_parameters);
  int wlog = std::min(kZstdMaxWindowLog,
                      std::max(kZstdMinWindowLogLimit, Log2Ceil(max_output)));
  size_t r = ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, wlog);
  if (ZSTD_isError(r)) {
    return absl::InternalError(absl::StrCat("zstd: ", ZSTD_getErrorName(r)));
  }
  const size_t limit = max_output + 1;
  BINLOG_IO_RETURN_IF_ERROR(
      FirstBuffer(out, FirstCapacity(input.size(), size_hint, limit)));
  ZSTD_inBuffer in{input.data(), input.size(), 0};
  for (;;) {
    if (out->size() == out->capacity()) {
      bool full = false;
      BINLOG_IO_RETURN_IF_ERROR(Grow(out, limit, &full));
      if (full) return TooLarge(max_output);
    }
    ZSTD_outBuffer o{out->data(), out->capacity(), out->size()};
    size_t in_before = in.pos;
    size_t out_before = o.pos;
    r = ZSTD_decompressStream(d, &o, &in);
    out->set_size(o.pos);
    if (ZSTD_isError(r)) {
      return absl::DataLossError(
          absl::StrCat("zstd: ", ZSTD_getErrorName(r)));
    }
    if (out->size() > max_output) return TooLarge(max_output);
    if (r == 0) {
      if (in.pos != in.size) {
        return absl::DataLossError(absl::StrCat(
            "zstd: ", in.size - in.pos, " bytes after the end of the frame"));
      }
      return absl::OkStatus();
    }
    if (o.pos < o.size && in.pos == in.size) {
      return absl::DataLossError("zstd: the frame is truncated");
    }
    if (o.pos < o.size && in.pos == in_before && o.pos == out_before) {
      return absl::DataLossError("zstd: the decoder made no progress");
    }
  }
}

absl::Status DecompressLz4(absl::string_view input, uint64_t size_hint,
                           size_t max_output, ByteBuffer* out) {
  Lease<LZ4F_dctx> lease(&Lz4DPool(), &NewLz4D);
  LZ4F_dctx* d = lease.get();
  if (d == nullptr) return NoContext("lz4 decompression");
  LZ4F_resetDecompressionContext(d);
  const size_t limit = max_output + 1;
  BINLOG_IO_RETURN_IF_ERROR(
      FirstBuffer(out, FirstCapacity(input.size(), size_hint, limit)));
  const char* src = input.data();
  size_t src_left = input.size();
  for (;;) {
    if (out->size() == out->capacity()) {
      bool full = false;
      BINLOG_IO_RETURN_IF_ERROR(Grow(out, limit, &full));
      if (full) return TooLarge(max_output);
    }
    size_t room = out->capacity() - out->size();
    size_t dst_size = room;
    size_t src_size = src_left;
    size_t r = LZ4F_decompress(d, out->data() + out->size(), &dst_size,
                               src, &src_size, nullptr);
    if (LZ4F_isError(r)) {
      return absl::DataLossError(
          absl::StrCat("lz4: ", LZ4F_getErrorName(r)));
    }
    src += src_size;
    src_left -= src_size;
    out->set_size(out->size() + dst_size);
    if (out->size() > max_output) return TooLarge(max_output);
    if (r == 0) {
      if (src_left != 0) {
        return absl::DataLossError(absl::StrCat(
            "lz4: ", src_left, " bytes after the end of the frame"));
      }
      return absl::OkStatus();
    }
    if (dst_size < room && src_left == 0) {
      return absl::DataLossError("lz4: the frame is truncated");
    }
    if (dst_size < room && src_size == 0 && dst_size == 0) {
      return absl::DataLossError("lz4: the decoder made no progress");
    }
  }
}

}  // namespace

int DefaultCodecLevel(Codec codec) {
  switch (codec) {
    case Codec::kZstd: return 3;
    case Codec::kLz4: return 0;
    case Codec::kNone: return 0;
  }
  return 0;
}

absl::Status ValidateCodecLevel(Codec codec, int level) {
  int lo = 0, hi = 0;
  switch (codec) {
    case Codec::kNone:
      break;
    case Codec::kZstd:
      lo = ZSTD_minCLevel();
      hi = ZSTD_maxCLevel();
      break;
    case Codec::kLz4:
      lo = -16;
      hi = 12;
      break;
  }
  if (level < lo || level > hi) {
    return absl::InvalidArgumentError(
        absl::StrCat(CodecName(codec), " compression level ", level,
                     " outside [", lo, ", ", hi, "]"));
  }
  return absl::OkStatus();
}

size_t MaxCompressedSize(Codec codec, size_t input_size) {
  switch (codec) {
    case Codec::kNone:
      return input_size;
    case Codec::kZstd:
      return ZSTD_compressBound(input_size);
    case Codec::kLz4: {
      LZ4F_preferences_t p = Lz4Preferences(0);
      // + slack for the frame header variants (LZ4F_HEADER_SIZE_MAX is 19).
      return LZ4F_compressFrameBound(input_size, &p) + 32;
    }
  }
  return input_size;
}

absl::StatusOr<size_t> Compress(Codec codec, int level,
                                absl::string_view input, char* out,
                                size_t out_capacity) {
  if (codec == Codec::kNone) {
    return absl::InvalidArgumentError("Compress with codec none");
  }
  absl::Status ls = ValidateCodecLevel(codec, level);
  if (!ls.ok()) return ls;
  if (level == 0) level = DefaultCodecLevel(codec);
  if (out_capacity < MaxCompressedSize(codec, input.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "compression output of ", out_capacity, " bytes is below the bound ",
        MaxCompressedSize(codec, input.size())));
  }
  if (codec == Codec::kZstd) {
    Lease<ZSTD_CCtx> lease(&ZstdCPool(), &NewZstdC);
    ZSTD_CCtx* z = lease.get();
    if (z == nullptr) return NoContext("zstd compression");
    ZSTD_CCtx_reset(z, ZSTD_reset_session_and_parameters);
    size_t r = ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, level);
    // As MySQL's frames: no content size (the payload header has it) and
    // no checksum (the event's CRC32 covers the compressed bytes).
    if (!ZSTD_isError(r)) r = ZSTD_CCtx_setParameter(z, ZSTD_c_contentSizeFlag, 0);
    if (!ZSTD_isError(r)) r = ZSTD_CCtx_setParameter(z, ZSTD_c_checksumFlag, 0);
    ZSTD_outBuffer o{out, out_capacity, 0};
    ZSTD_inBuffer in{input.data(), input.size(), 0};
    if (!ZSTD_isError(r)) r = ZSTD_compressStream2(z, &o, &in, ZSTD_e_end);
    if (ZSTD_isError(r)) {
      if (ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation) {
        return NoContext("zstd compression");
      }
      return absl::InternalError(absl::StrCat("zstd: ", ZSTD_getErrorName(r)));
    }
    if (r != 0) {
      return absl::InternalError("zstd: frame not finished within its bound");
    }
    return o.pos;
  }
  // lz4
  Lease<LZ4F_cctx> lease(&Lz4CPool(), &NewLz4C);
  LZ4F_cctx* lc = lease.get();
  if (lc == nullptr) return NoContext("lz4 compression");
  LZ4F_preferences_t p = Lz4Preferences(level);
  size_t pos = LZ4F_compressBegin(lc, out, out_capacity, &p);
  if (!LZ4F_isError(pos) && !input.empty()) {
    size_t n = LZ4F_compressUpdate(lc, out + pos, out_capacity - pos,
                                   input.data(), input.size(), nullptr);
    pos = LZ4F_isError(n) ? n : pos + n;
  }
  if (!LZ4F_isError(pos)) {
    size_t n = LZ4F_compressEnd(lc, out + pos, out_capacity - pos, nullptr);
    pos = LZ4F_isError(n) ? n : pos + n;
  }
  if (LZ4F_isError(pos)) {
    // A failed call leaves the context mid-frame; drop it.
    lease.Discard();
    return absl::InternalError(absl::StrCat("lz4: ", LZ4F_getErrorName(pos)));
  }
  return pos;
}

void ByteBuffer::Free::operator()(char* p) const { std::free(p); }

absl::Status ByteBuffer::Reserve(size_t n) {
  if (n <= capacity_) return absl::OkStatus();
  char* p = static_cast<char*>(std::realloc(data_.get(), n));
  if (p == nullptr) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot allocate ", n, " bytes (holding ", capacity_, ")"));
  }
  data_.release();  // realloc freed or kept it
  data_.reset(p);
  capacity_ = n;
  return absl::OkStatus();
}

absl::Status Decompress(Codec codec, absl::string_view input,
                        uint64_t size_hint, size_t max_output,
                        ByteBuffer* out) {
  switch (codec) {
    case Codec::kNone:
      if (input.size() > max_output) return TooLarge(max_output);
      BINLOG_IO_RETURN_IF_ERROR(FirstBuffer(out, input.size()));
      if (!input.empty()) std::memcpy(out->data(), input.data(), input.size());
      out->set_size(input.size());
      return absl::OkStatus();
    case Codec::kZstd:
      return DecompressZstd(input, size_hint, max_output, out);
    case Codec::kLz4:
      return DecompressLz4(input, size_hint, max_output, out);
  }
  return absl::InvalidArgumentError("unknown codec");
}

uint64_t CodecContextsCreated() {
  return g_contexts_created.load(std::memory_order_relaxed);
}

}  // namespace io
}  // namespace binlog
