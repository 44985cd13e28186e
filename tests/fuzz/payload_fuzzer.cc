// libFuzzer target: Transaction_payload decoding (binlog/payload.h), the
// decompression path of compressed transactions. The input is a payload
// event body (TLV header + compressed frame, zstd or the lz4 extension);
// DecodePayload validates the header, decompresses under a cap and splits
// the inner events. The readers (tailing, at rest, binlogtool) reach it
// through Reader in PayloadMode::kDecoded, which reader_fuzzer and
// dump_fuzzer cover too, but only behind a valid file, FDE and event frame;
// this target hits the decoder directly, much faster.
//
// Besides sanitizer reports, it aborts when a successful decode breaks its
// promises: at least one inner event, events that tile the output exactly
// (19 <= event_size, log_pos 0, an allowed type), output within the cap
// and the declared uncompressed size.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/string_view.h"
#include "binlog/event.h"
#include "binlog/format.h"
#include "binlog/payload.h"
#include "io/codec.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

constexpr size_t kCap = 4 << 20;  // keeps one input's work small

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view body(reinterpret_cast<const char*>(data), size);
  auto header = binlog::DecodePayloadHeader(body);
  static binlog::io::ByteBuffer* out = new binlog::io::ByteBuffer();
  binlog::PayloadHeader h;
  size_t n = 0;
  absl::Status s = binlog::DecodePayload(body, kCap, &h, out, &n);
  if (!s.ok()) {
    FUZZ_CHECK(absl::IsDataLoss(s));
    return 0;
  }
  FUZZ_CHECK(header.ok());
  FUZZ_CHECK(n >= 1);
  FUZZ_CHECK(out->size() <= kCap);
  if (h.has_uncompressed_size) FUZZ_CHECK(out->size() <= h.uncompressed_size);
  absl::string_view rest = out->view();
  size_t events = 0;
  while (!rest.empty()) {
    FUZZ_CHECK(rest.size() >= binlog::kHeaderSize);
    binlog::EventHeader eh = binlog::DecodeHeader(rest);
    FUZZ_CHECK(eh.event_size >= binlog::kHeaderSize);
    FUZZ_CHECK(eh.event_size <= rest.size());
    FUZZ_CHECK(eh.log_pos == 0);
    FUZZ_CHECK(binlog::AllowedInsidePayload(eh.type));
    rest.remove_prefix(eh.event_size);
    ++events;
  }
  FUZZ_CHECK(events == n);
  return 0;
}
