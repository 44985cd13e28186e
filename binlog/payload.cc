// Transaction_payload encoding and decoding. See payload.h.
//
// Packing (committing thread, before the group-commit pipeline):
//   1. Copy the inner events (all but the leading Gtid) into a scratch
//      buffer with event_size minus the footer, log_pos 0 and no footer:
//      the exact byte stream MySQL compresses. One memcpy of the
//      transaction; the codec then reads it in one pass.
//   2. Compress it into the same scratch buffer, after the inner stream,
//      with a pooled codec context (io/codec.h).
//   3. Write the Gtid event (transaction_length rewritten if it has one)
//      and the Transaction_payload event (TLV header + frame) into the
//      packed TransactionBuffer; Binlog::Commit then seals that buffer
//      (checksums) like any other.
// Every buffer involved grows to the working size once and is reused, so
// steady-state commits allocate nothing.

#include "binlog/payload.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "binlog/event.h"
#include "binlog/format.h"
#include "binlog/status_macros.h"
#include "binlog/transaction_internal.h"

namespace binlog {
namespace internal {

struct PackState {
  explicit PackState(bool checksums) : packed(checksums) {}
  TransactionBuffer packed;
  io::ByteBuffer scratch;  // inner events, then the compressed frame
};

namespace {

void DeletePackState(PackState* p) { delete p; }

// Types that never go inside a payload: file-level events, GTIDs (a second
// transaction), incidents (MySQL does not compress those), nested payloads.
bool AllowedInside(uint8_t type) {
  switch (type) {
    case kFormatDescriptionEvent:
    case kRotateEvent:
    case kStopEvent:
    case kPreviousGtidsEvent:
    case kGtidEvent:
    case kAnonymousGtidEvent:
    case kGtidTaggedEvent:
    case kTransactionPayloadEvent:
    case kIncidentEvent:
    case kHeartbeatEvent:
    case kHeartbeatEventV2:
      return false;
    default:
      return type < kMariaAnnotateRowsEvent;
  }
}

// Where the transaction_length field of a MySQL Gtid event body starts
// (reference section 6.4), or 0 if the event ends before it (the 5.6/5.7
// layouts, and AppendGtid's).
size_t TransactionLengthOffset(absl::string_view body) {
  constexpr size_t kFixed = 42;  // flags .. sequence_number
  constexpr size_t kTsSize = 7;
  if (body.size() <= kFixed + kTsSize) return 0;
  size_t pos = kFixed;
  uint64_t ts = LoadLeN(body.data() + pos, kTsSize);
  pos += kTsSize;
  if (ts & (1ull << 55)) pos += kTsSize;  // original_commit_timestamp follows
  return pos < body.size() ? pos : 0;
}

}  // namespace

absl::StatusOr<TransactionBuffer*> PayloadPacker::Pack(
    TransactionBuffer* txn, const PayloadCompression& c) {
  using Internal = TransactionBufferInternal;
  Internal::written(txn) = nullptr;
  const auto& events = Internal::events(txn);
  if (c.codec == io::Codec::kNone || events.size() < 2) return txn;
  const char* b = Internal::bytes(txn);
  const bool checksums = Internal::checksums(txn);
  const size_t footer = checksums ? kChecksumSize : 0;
  const EventHeader gtid =
      DecodeHeader(absl::string_view(b + events[0].offset, kHeaderSize));
  if (gtid.type != kGtidEvent && gtid.type != kAnonymousGtidEvent &&
      gtid.type != kGtidTaggedEvent) {
    return txn;
  }
  size_t inner = 0;          // bytes of the inner stream (no footers)
  size_t inner_written = 0;  // bytes they take written plainly
  for (size_t i = 1; i < events.size(); ++i) {
    const auto& e = events[i];
    uint8_t type = static_cast<uint8_t>(b[e.offset + kTypeOffset]);
    size_t size = e.end - e.offset;
    if (!AllowedInside(type) || size < kHeaderSize + footer) return txn;
    inner += size - footer;
    inner_written += size;
  }
  if (inner < c.threshold) return txn;
  // A payload readers would refuse to expand (ReaderOptions::
  // max_payload_size defaults to this limit) is not written: the events go
  // out plainly instead.
  if (inner > kMaxPayloadSize) return txn;

  Internal::PackStatePtr& pack = Internal::pack_state(txn);
  if (pack == nullptr) {
    pack = Internal::PackStatePtr(new PackState(checksums), &DeletePackState);
  }
  PackState& ps = *pack;
  const size_t bound = io::MaxCompressedSize(c.codec, inner);
  // Without the memory for compressing, the events go out plainly (a
  // payload is an option of the format, not a duty).
  if (!ps.scratch.Reserve(inner + bound).ok()) return txn;
  char* s = ps.scratch.data();
  size_t pos = 0;
  for (size_t i = 1; i < events.size(); ++i) {
    const auto& e = events[i];
    size_t n = e.end - e.offset - footer;
    std::memcpy(s + pos, b + e.offset, n);
    StoreLe32(s + pos + kEventSizeOffset, static_cast<uint32_t>(n));
    StoreLe32(s + pos + kLogPosOffset, 0);
    pos += n;
  }
  BINLOG_ASSIGN_OR_RETURN(
      size_t csize,
      io::Compress(c.codec, c.level, absl::string_view(s, inner), s + inner,
                   bound));

  const uint64_t type_value = c.codec == io::Codec::kZstd
                                  ? kPayloadCompressionZstd
                                  : kPayloadCompressionLz4;
  // Each field: type (1 byte), length (1 byte: values are at most 9 bytes),
  // value as a packed integer.
  const size_t tlv = (2 + PackedIntSize(type_value)) +
                     (2 + PackedIntSize(inner)) + (2 + PackedIntSize(csize)) +
                     1;
  const size_t payload_event = kHeaderSize + tlv + csize + footer;
  // Incompressible data: the plain events are smaller and cheaper to read.
  if (payload_event >= inner_written) return txn;

  // The Gtid event, with transaction_length (if present) for the new size.
  // A tagged Gtid event (MySQL 8.4) is copied as it is: it is the log's
  // reservation, whose real encoding, transaction_length over the packed
  // transaction included, the log writes when it assigns the identity
  // (TransactionBuffer::AssignIdentity); MySQL 8.4 also writes it outside
  // the payload, before it.
  absl::string_view gbody(b + events[0].offset + kHeaderSize,
                          events[0].end - events[0].offset - kHeaderSize - footer);
  size_t len_at = gtid.type == kGtidTaggedEvent ? 0 : TransactionLengthOffset(gbody);
  size_t old_width = 0;
  uint64_t total = 0;
  size_t new_width = 0;
  if (len_at != 0) {
    absl::string_view rest = gbody.substr(len_at);
    uint64_t old_value;
    if (ConsumePackedInt(&rest, &old_value)) {
      old_width = gbody.size() - len_at - rest.size();
      // Self-referential: the field's own width counts.
      size_t gtid_fixed = kHeaderSize + gbody.size() - old_width + footer;
      new_width = PackedIntSize(gtid_fixed + 1 + payload_event);
      for (;;) {
        total = gtid_fixed + new_width + payload_event;
        size_t w = PackedIntSize(total);
        if (w == new_width) break;
        new_width = w;
      }
    } else {
      len_at = 0;  // not a field we understand: leave the event alone
    }
  }
  TransactionBuffer& out = ps.packed;
  out.Clear();
  if (len_at == 0) {
    char* g = out.AppendEvent(gtid.type, gtid.server_id, gtid.timestamp,
                              gtid.flags, gbody.size());
    std::memcpy(g, gbody.data(), gbody.size());
  } else {
    size_t suffix = gbody.size() - len_at - old_width;
    char* g = out.AppendEvent(gtid.type, gtid.server_id, gtid.timestamp,
                              gtid.flags, len_at + new_width + suffix);
    std::memcpy(g, gbody.data(), len_at);
    StorePackedInt(g + len_at, total);
    std::memcpy(g + len_at + new_width, gbody.data() + len_at + old_width,
                suffix);
  }
  char* p = out.AppendEvent(kTransactionPayloadEvent, gtid.server_id,
                            gtid.timestamp, 0, tlv + csize);
  // MySQL's order: compression type, uncompressed size, payload size, end.
  *p++ = static_cast<char>(kPayloadCompressionTypeField);
  *p++ = static_cast<char>(PackedIntSize(type_value));
  p = StorePackedInt(p, type_value);
  *p++ = static_cast<char>(kPayloadUncompressedSizeField);
  *p++ = static_cast<char>(PackedIntSize(inner));
  p = StorePackedInt(p, inner);
  *p++ = static_cast<char>(kPayloadSizeField);
  *p++ = static_cast<char>(PackedIntSize(csize));
  p = StorePackedInt(p, csize);
  *p++ = static_cast<char>(kPayloadHeaderEndMark);
  std::memcpy(p, s + inner, csize);
  Internal::written(txn) = &out;
  return &out;
}

}  // namespace internal

const char* PayloadCompressionName(uint64_t type) {
  switch (type) {
    case kPayloadCompressionZstd: return "ZSTD";
    case kPayloadCompressionLz4: return "LZ4";
    case kPayloadCompressionNone: return "NONE";
    default: return "UNKNOWN";
  }
}

bool ConsumePackedInt(absl::string_view* in, uint64_t* v) {
  if (in->empty()) return false;
  uint8_t first = static_cast<uint8_t>((*in)[0]);
  size_t n;
  if (first < 251) {
    *v = first;
    in->remove_prefix(1);
    return true;
  }
  switch (first) {
    case 0xfc: n = 2; break;
    case 0xfd: n = 3; break;
    case 0xfe: n = 8; break;
    default: return false;  // 0xfb (NULL) and 0xff are not integers
  }
  if (in->size() < 1 + n) return false;
  *v = LoadLeN(in->data() + 1, n);
  in->remove_prefix(1 + n);
  return true;
}

absl::StatusOr<PayloadHeader> DecodePayloadHeader(absl::string_view body) {
  auto bad = [](absl::string_view what) {
    return absl::DataLossError(
        absl::StrCat("Transaction_payload header: ", what));
  };
  PayloadHeader h;
  absl::string_view in = body;
  bool have_type = false, have_size = false;
  for (;;) {
    if (in.empty()) return bad("no end mark before the end of the event");
    uint64_t type;
    if (!ConsumePackedInt(&in, &type)) return bad("malformed field type");
    if (type == kPayloadHeaderEndMark) break;
    uint64_t len;
    if (!ConsumePackedInt(&in, &len)) {
      return bad(absl::StrCat("malformed length of field ", type));
    }
    if (len > in.size()) {
      return bad(absl::StrCat("field ", type, " of ", len,
                              " bytes runs past the end of the event"));
    }
    absl::string_view value = in.substr(0, static_cast<size_t>(len));
    in.remove_prefix(static_cast<size_t>(len));
    uint64_t* target = nullptr;
    bool* seen = nullptr;
    bool seen_uncompressed = h.has_uncompressed_size;
    switch (type) {
      case kPayloadSizeField:
        target = &h.payload_size;
        seen = &have_size;
        break;
      case kPayloadCompressionTypeField:
        target = &h.compression_type;
        seen = &have_type;
        break;
      case kPayloadUncompressedSizeField:
        target = &h.uncompressed_size;
        seen = &seen_uncompressed;
        break;
      default:
        continue;  // unknown fields are skipped, as MySQL's reader does
    }
    if (*seen) return bad(absl::StrCat("field ", type, " appears twice"));
    absl::string_view v = value;
    if (!ConsumePackedInt(&v, target) || !v.empty()) {
      return bad(absl::StrCat("field ", type, " is not one packed integer of ",
                              len, " bytes"));
    }
    *seen = true;
    if (type == kPayloadUncompressedSizeField) h.has_uncompressed_size = true;
  }
  if (!have_type) return bad("no compression type field");
  if (!have_size) return bad("no payload size field");
  h.header_size = body.size() - in.size();
  if (h.payload_size > in.size()) {
    return bad(absl::StrCat("payload size ", h.payload_size,
                            " runs past the end of the event (", in.size(),
                            " bytes follow the header)"));
  }
  if (h.payload_size < in.size()) {
    return bad(absl::StrCat(in.size() - h.payload_size,
                            " bytes after the payload of ", h.payload_size,
                            " bytes"));
  }
  return h;
}

absl::Status DecodePayload(absl::string_view body, size_t max_size,
                           PayloadHeader* header, io::ByteBuffer* out,
                           size_t* inner_events) {
  BINLOG_ASSIGN_OR_RETURN(*header, DecodePayloadHeader(body));
  const PayloadHeader& h = *header;
  io::Codec codec;
  switch (h.compression_type) {
    case kPayloadCompressionZstd: codec = io::Codec::kZstd; break;
    case kPayloadCompressionLz4: codec = io::Codec::kLz4; break;
    case kPayloadCompressionNone: codec = io::Codec::kNone; break;
    default:
      return absl::DataLossError(absl::StrCat(
          "Transaction_payload: unknown compression type ",
          h.compression_type));
  }
  if (h.has_uncompressed_size && h.uncompressed_size > max_size) {
    return absl::DataLossError(absl::StrCat(
        "Transaction_payload: declared uncompressed size ",
        h.uncompressed_size, " is above the limit of ", max_size, " bytes"));
  }
  size_t cap = h.has_uncompressed_size
                   ? static_cast<size_t>(h.uncompressed_size)
                   : max_size;
  absl::string_view data = body.substr(h.header_size);
  absl::Status s = io::Decompress(codec, data, h.uncompressed_size, cap, out);
  if (!s.ok()) {
    // Out of memory is not damage: say so (a memory limit, not the file).
    const absl::StatusCode code = absl::IsResourceExhausted(s)
                                      ? absl::StatusCode::kResourceExhausted
                                      : absl::StatusCode::kDataLoss;
    return absl::Status(code, absl::StrCat(
        "Transaction_payload (", PayloadCompressionName(h.compression_type),
        ", ", h.payload_size, " bytes",
        h.has_uncompressed_size
            ? absl::StrCat(", declared uncompressed size ", h.uncompressed_size)
            : std::string(),
        "): ", s.message()));
  }
  if (h.has_uncompressed_size && out->size() != h.uncompressed_size) {
    return absl::DataLossError(absl::StrCat(
        "Transaction_payload: decompressed to ", out->size(),
        " bytes but declares an uncompressed size of ", h.uncompressed_size));
  }
  // The inner events must tile the decompressed bytes exactly.
  absl::string_view rest = out->view();
  size_t n = 0;
  size_t at = 0;
  while (!rest.empty()) {
    auto bad = [&](absl::string_view what) {
      return absl::DataLossError(absl::StrCat(
          "Transaction_payload: inner event ", n + 1, " at byte ", at,
          " of the decompressed data: ", what));
    };
    if (rest.size() < kHeaderSize) {
      return bad(absl::StrCat("only ", rest.size(),
                              " bytes left, less than an event header"));
    }
    EventHeader eh = DecodeHeader(rest);
    if (eh.event_size < kHeaderSize) {
      return bad(absl::StrCat("event_size ", eh.event_size,
                              " is below the header size"));
    }
    if (eh.event_size > rest.size()) {
      return bad(absl::StrCat("event_size ", eh.event_size, " runs past the ",
                              rest.size(), " bytes left"));
    }
    if (eh.log_pos != 0) {
      return bad(absl::StrCat("log_pos ", eh.log_pos,
                              " (events inside a payload have log_pos 0)"));
    }
    if (!AllowedInsidePayload(eh.type)) {
      return bad(absl::StrCat(EventTypeName(eh.type),
                              " cannot be inside a Transaction_payload"));
    }
    rest.remove_prefix(eh.event_size);
    at += eh.event_size;
    ++n;
  }
  if (n == 0) {
    return absl::DataLossError("Transaction_payload: holds no events");
  }
  *inner_events = n;
  return absl::OkStatus();
}

bool AllowedInsidePayload(uint8_t type) { return internal::AllowedInside(type); }

absl::Status ValidatePayloadCompression(const PayloadCompression& c) {
  if (c.codec == io::Codec::kNone) return absl::OkStatus();  // level unused
  return io::ValidateCodecLevel(c.codec, c.level);
}

}  // namespace binlog
