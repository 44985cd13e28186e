// File: io/codec.h
//
// Compression codecs for Transaction_payload events: zstd (what MySQL 8.0.20+
// writes) and lz4 (this library's extension), over Debian's libzstd and
// liblz4.
//
// Frames.
//   zstd  one standard zstd frame (magic 28 b5 2f fd), written like MySQL's
//         binlog compressor writes it: no content size in the frame header
//         and no content checksum (the Transaction_payload header carries
//         the sizes and the event's CRC32 covers the bytes), so MySQL 8
//         mysqlbinlog and go-mysql decode our frames and we decode theirs.
//   lz4   one standard LZ4 frame (magic 04 22 4d 18, the format of the `lz4`
//         command-line tool, lz4_Frame_format.md): linked 64 KiB blocks, no
//         content size, no block or content checksums. `lz4 -d` decodes it.
//
// Contexts. Compression and decompression contexts (ZSTD_CCtx/ZSTD_DCtx,
// LZ4F_cctx/LZ4F_dctx) are expensive to create (zstd's level-3 context is
// about a megabyte of tables), so they are pooled process-wide, one pool per
// kind, and handed out last-in first-out: a call borrows the context used
// last (still in cache) and gives it back. The pools grow to the number of
// calls that really run at once and never shrink. In steady state
// Compress() allocates nothing, and Decompress() allocates only when its
// output buffer has to grow.
//
// Bounded decompression. Decompress() never trusts a size it is told: it
// decompresses in streaming fashion into a buffer that grows with the real
// output (doubling), and fails with DataLoss as soon as the output would
// pass the caller's `max_output`. A hostile "uncompressed size" of 4 GiB
// therefore costs nothing, and a frame that really inflates stops at the
// cap. zstd's window (the history buffer a frame declares) is limited to
// max(max_output rounded up to a power of two, 8 MiB) and never above
// 128 MiB (zstd's own default limit): every frame MySQL writes at levels
// 1-19 (window <= 8 MiB) decodes under any cap.
//
// Errors: Compress: InvalidArgument for a bad codec/level or a too small
// output; ResourceExhausted when the codec cannot allocate its context;
// Internal for a codec failure (a broken invariant). Decompress: DataLoss
// for anything wrong with the compressed bytes (garbage, truncated frame,
// trailing bytes, output past max_output), with the codec's message;
// ResourceExhausted when the output buffer cannot grow (a frame that
// really inflates to a size the process may not allocate, under a memory
// limit): no allocation here throws, whatever the build's exception
// setting.
//
// Thread safety: all functions are thread-safe.

#ifndef BINLOG_IO_CODEC_H_
#define BINLOG_IO_CODEC_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "io/types.h"

namespace binlog {
namespace io {

// Codec (kNone, kZstd, kLz4), CodecName and ParseCodec are in io/types.h.

// Level used when the caller passes 0: zstd 3 (MySQL's default
// binlog_transaction_compression_level_zstd), lz4 0 (LZ4's fast mode).
int DefaultCodecLevel(Codec codec);
// Levels accepted: zstd ZSTD_minCLevel()..22 (negative levels are zstd's
// fast modes); lz4 -16..12 (negative: acceleration, 0-2: fast mode,
// 3-12: LZ4-HC). 0 always means the default. kNone accepts only 0.
absl::Status ValidateCodecLevel(Codec codec, int level);

// Upper bound of Compress()'s output for `input_size` bytes of input.
size_t MaxCompressedSize(Codec codec, size_t input_size);

// Compresses `input` into out[0, out_capacity) as one frame and returns the
// number of bytes written. `level` 0 means DefaultCodecLevel(codec).
// REQUIRES: codec != kNone; out_capacity >= MaxCompressedSize(codec,
// input.size()) (InvalidArgument otherwise).
absl::StatusOr<size_t> Compress(Codec codec, int level,
                                absl::string_view input, char* out,
                                size_t out_capacity);

// A growable byte buffer that keeps its memory between uses, so a reader
// that decompresses payload after payload stops allocating once the buffer
// has reached its working size.
//
// Thread safety: thread-compatible.
class ByteBuffer {
 public:
  ByteBuffer() = default;
  ByteBuffer(const ByteBuffer&) = delete;
  ByteBuffer& operator=(const ByteBuffer&) = delete;

  char* data() { return data_.get(); }
  const char* data() const { return data_.get(); }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  absl::string_view view() const { return absl::string_view(data_.get(), size_); }

  // Makes capacity() >= n, keeping the first size() bytes (realloc: a large
  // buffer usually grows in place, without a second copy). Never throws:
  // ResourceExhausted, the buffer unchanged, when the memory cannot be had.
  absl::Status Reserve(size_t n);
  // REQUIRES: n <= capacity().
  void set_size(size_t n) { size_ = n; }
  void clear() { size_ = 0; }
  // Frees the memory.
  void Release() {
    data_.reset();
    size_ = capacity_ = 0;
  }

 private:
  struct Free {
    void operator()(char* p) const;
  };
  std::unique_ptr<char, Free> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

// Decompresses one complete frame `input` of `codec` into `*out`
// (replacing its contents). The frame must hold exactly `input` (no bytes
// after its end) and inflate to at most `max_output` bytes. `size_hint`, the
// size the caller expects (for example a declared uncompressed size), only
// sizes the first allocation, and never beyond what the input could
// plausibly inflate to. See the file comment for the error contract.
absl::Status Decompress(Codec codec, absl::string_view input,
                        uint64_t size_hint, size_t max_output,
                        ByteBuffer* out);

// Contexts created so far, all pools (for tests that check that
// steady-state calls reuse them).
uint64_t CodecContextsCreated();

}  // namespace io
}  // namespace binlog

#endif  // BINLOG_IO_CODEC_H_
