// libFuzzer target: the at-rest Reader and the event decoders on arbitrary
// bytes. The input is written to a file and read with Reader::OpenFiles,
// once verifying checksums and log_pos with compressed transactions
// expanded (PayloadMode::kDecoded, the default), and once reporting
// checksums without the log_pos check, payloads raw (the file is listed
// twice so the move from one file to the next runs too). Every event the reader returns
// is decoded with the decoders binlogtool and recovery use (GTID sets and
// MariaDB GTID states that decode must survive their own encoding and text
// form) and fed to the transaction boundary parser.
//
// Windows and prefetch. The reader reads a file in windows of
// ReaderOptions::buffer_size (64 KiB here, the minimum) and, with
// ReaderOptions::prefetch, reads the next window in a helper thread. Inputs
// are at most 64 KiB (run_fuzzers.sh -max_len), so the input's last byte
// (c) chooses: bit 0 turns prefetch on; bit 1 grows the file past two
// windows (Grow: the input's whole events after its first are tiled after
// it, each copy with log_pos moved to its new end and its CRC32 recomputed
// when the original's was valid, then the input's trailing bytes, so a torn
// tail stays at the end), so events straddle window boundaries and the
// prefetch thread runs; the grown size varies with c so the boundaries
// fall at different places in the events.
//
// Besides sanitizer reports, the target aborts when the reader breaks its
// contract (binlog/reader.h): an event whose bytes disagree with its header
// or its offsets, offsets that go backwards within a file, an event past the
// end of the file, an inner payload event without log_pos 0, or a DataLoss
// error that does not stay put.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "binlog/checksum.h"
#include "binlog/event.h"
#include "binlog/format.h"
#include "binlog/gtid.h"
#include "binlog/reader.h"
#include "binlog/statement_events.h"
#include "binlog/transaction_boundary.h"
#include "tests/fuzz/fuzz_util.h"

namespace binlog {
namespace fuzz {
namespace {

void DecodeEvent(const Event& ev, const FormatDescription& fde,
                 TransactionBoundaryParser* parser) {
  absl::string_view body = ev.body();
  switch (ev.header.type) {
    case kQueryEvent:
    case kExecuteLoadQueryEvent: {
      auto q = DecodeQuery(body, fde.PostHeaderLen(ev.header.type));
      if (q.ok()) DecodeQueryStatusVars(q->status_vars).status().IgnoreError();
      break;
    }
    case kXidEvent:
      DecodeXid(body).status().IgnoreError();
      break;
    case kXaPrepareEvent:
      DecodeXaPrepare(body).status().IgnoreError();
      break;
    case kGtidEvent:
    case kAnonymousGtidEvent:
      DecodeMySqlGtidEvent(body).status().IgnoreError();
      break;
    case kPreviousGtidsEvent: {
      // A set that decodes survives its own encoding and text form.
      auto s = GtidSet::DecodePreviousGtidsBody(body);
      if (s.ok()) {
        auto again = GtidSet::DecodePreviousGtidsBody(s->EncodePreviousGtidsBody());
        FUZZ_CHECK(again.ok() && *again == *s);
        auto text = GtidSet::Parse(s->ToString());
        FUZZ_CHECK(text.ok() && *text == *s);
      }
      break;
    }
    case kMariaGtidListEvent: {
      auto s = MariaGtidState::DecodeGtidListBody(body);
      if (s.ok()) {
        auto text = MariaGtidState::Parse(s->StateToString());
        FUZZ_CHECK(text.ok() && *text == *s);
      }
      break;
    }
    case kRotateEvent:
      DecodeRotate(body).status().IgnoreError();
      break;
    case kFormatDescriptionEvent:
      DecodeFormatDescription(ev.data).status().IgnoreError();
      break;
    case kMariaGtidEvent:
      DecodeMariaGtid(body).status().IgnoreError();
      break;
    default:
      break;
  }
  if (ev.data.size() >= kHeaderSize + kChecksumSize) {
    (void)EventChecksumMatches(ev.data);
  }
  parser->Feed(ev.header, body);
}

void ReadEverything(const std::vector<std::string>& paths,
                    const ReaderOptions& options, uint64_t file_size) {
  auto reader = Reader::OpenFiles(paths, options);
  if (!reader.ok()) return;
  Reader* r = reader->get();
  TransactionBoundaryParser parser;
  uint64_t last_file = 0;
  uint64_t last_end = 0;
  for (int i = 0; i < 1000000; ++i) {
    Event ev;
    absl::Status s = r->Next(&ev);
    if (absl::IsOutOfRange(s)) break;
    if (!s.ok()) {
      // A reader stays at a malformed event (binlog/reader.h).
      if (absl::IsDataLoss(s)) {
        uint64_t pos = r->position();
        Event again;
        absl::Status s2 = r->Next(&again);
        FUZZ_CHECK(absl::IsDataLoss(s2));
        FUZZ_CHECK(r->position() == pos);
      }
      break;
    }
    FUZZ_CHECK(ev.data.size() == ev.header.event_size);
    FUZZ_CHECK(ev.data.size() >= kHeaderSize);
    FUZZ_CHECK(ev.end_offset <= file_size);
    if (ev.file_number != last_file) {
      parser = TransactionBoundaryParser(
          r->format_description().PostHeaderLen(kQueryEvent));
    }
    if (ev.from_payload) {
      // An inner event of a compressed transaction: it carries the
      // payload event's position (binlog/reader.h) and log_pos 0.
      FUZZ_CHECK(ev.payload_index < ev.payload_events);
      FUZZ_CHECK(ev.header.log_pos == 0);
      FUZZ_CHECK(ev.offset < ev.end_offset);
    } else {
      FUZZ_CHECK(ev.end_offset == ev.offset + ev.data.size());
      if (ev.file_number == last_file) FUZZ_CHECK(ev.offset >= last_end);
      if (options.check_log_pos && ev.checksum != ChecksumState::kBad &&
          !(ev.header.flags & kFlagArtificial) &&
          !r->format_description().relay_log &&
          !(ev.header.log_pos == 0 &&
            LogPosMayBeZero(r->format_description(), ev.header.type))) {
        // Artificial events (flag 0x20), relay logs (whose events keep the
        // source's log_pos) and the cache events of MariaDB 11.4+ files
        // (log_pos 0, LogPosMayBeZero) aside, log_pos is the end offset
        // (binlog/reader.h).
        FUZZ_CHECK(ev.header.log_pos == static_cast<uint32_t>(ev.end_offset));
      }
    }
    last_file = ev.file_number;
    last_end = ev.end_offset;
    DecodeEvent(ev, r->format_description(), &parser);
  }
  for (const TornTail& t : r->torn_tails()) {
    FUZZ_CHECK(t.offset <= file_size);
    FUZZ_CHECK(t.offset + t.trailing_bytes <= file_size);
  }
}

constexpr size_t kWindow = 64 << 10;  // ReaderOptions::buffer_size minimum

// The input's events after its first, tiled until the file reaches
// `target` bytes (see the file comment). Inputs with fewer than two whole
// events are returned unchanged.
std::string Grow(const uint8_t* data, size_t size, size_t target) {
  std::string in(reinterpret_cast<const char*>(data), size);
  std::vector<std::pair<size_t, size_t>> events;  // (offset, length)
  size_t pos = kMagicSize;
  while (pos + kHeaderSize <= size) {
    uint32_t len = LoadLe32(in.data() + pos + kEventSizeOffset);
    if (len < kHeaderSize || len > size - pos) break;
    events.push_back({pos, len});
    pos += len;
  }
  if (events.size() < 2) return in;
  std::string out = in.substr(0, pos);
  const std::string tail = in.substr(pos);
  while (out.size() < target) {
    for (size_t i = 1; i < events.size() && out.size() < target; ++i) {
      std::string ev = in.substr(events[i].first, events[i].second);
      const bool crc_ok =
          ev.size() >= kHeaderSize + kChecksumSize && EventChecksumMatches(ev);
      StoreLe32(&ev[kLogPosOffset], static_cast<uint32_t>(out.size() + ev.size()));
      if (crc_ok) {
        StoreLe32(&ev[ev.size() - kChecksumSize],
                  Crc32(ev.data(), ev.size() - kChecksumSize));
      }
      out += ev;
    }
  }
  out += tail;
  return out;
}

}  // namespace
}  // namespace fuzz
}  // namespace binlog

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace binlog;
  static const std::string path = fuzz::ScratchDir() + "/fuzz.000001";
  const uint8_t c = size > 0 ? data[size - 1] : 0;
  const bool prefetch = (c & 1) != 0;
  uint64_t file_size = size;
  if ((c & 2) != 0) {
    // Past two windows, by a c-dependent amount (window boundaries land at
    // different offsets of the tiled events).
    const std::string grown =
        fuzz::Grow(data, size, 2 * fuzz::kWindow + 1 + c * 131u);
    fuzz::WriteWholeFile(path, grown);
    file_size = grown.size();
  } else {
    fuzz::WriteWholeFile(path, data, size);
  }

  ReaderOptions verify;
  verify.checksum_mode = ChecksumMode::kVerify;
  verify.buffer_size = fuzz::kWindow;  // the minimum: refills on larger files
  verify.prefetch = prefetch;
  fuzz::ReadEverything({path}, verify, file_size);

  ReaderOptions report;
  report.checksum_mode = ChecksumMode::kReport;
  report.check_log_pos = false;
  report.payloads = PayloadMode::kRaw;
  report.buffer_size = fuzz::kWindow;
  report.prefetch = !prefetch;  // both settings on every grown input
  fuzz::ReadEverything({path, path}, report, file_size);
  return 0;
}
