#include "tests/testutil/format_variants.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "binlog/event.h"
#include "binlog/format.h"
#include "binlog/gtid.h"

namespace binlog {
namespace testutil {
namespace {

void FixChecksum(char* ev, size_t size) {
  StoreLe32(ev + size - kChecksumSize,
            ComputeEventChecksum(absl::string_view(ev, size)));
}

// An event with a 19-byte header and no footer.
std::string Event(uint8_t type, uint32_t timestamp, uint32_t server_id,
                  uint32_t log_pos, uint16_t flags, absl::string_view body) {
  EventHeader h;
  h.timestamp = timestamp;
  h.type = type;
  h.server_id = server_id;
  h.event_size = static_cast<uint32_t>(kHeaderSize + body.size());
  h.log_pos = log_pos;
  h.flags = flags;
  std::string out(kHeaderSize, '\0');
  EncodeHeader(h, out.data());
  out.append(body.data(), body.size());
  return out;
}

std::string QueryBody(absl::string_view db, absl::string_view query) {
  std::string b(13, '\0');
  StoreLe32(b.data(), 7);  // thread id
  b[8] = static_cast<char>(db.size());
  absl::StrAppend(&b, db, absl::string_view("\0", 1), query);
  return b;
}

std::string ServerVersionField(absl::string_view v, size_t len) {
  std::string f(v.substr(0, len));
  f.resize(len, '\0');
  return f;
}

}  // namespace

absl::StatusOr<Variant> AsMariaDb114(absl::string_view file) {
  Variant out;
  out.bytes = std::string(file);
  char* p = out.bytes.data();
  const size_t n = out.bytes.size();
  if (n < kMagicSize + kHeaderSize ||
      std::memcmp(p, kBinlogMagic, kMagicSize) != 0) {
    return absl::DataLossError("not a binlog file");
  }
  bool checksums = false;
  bool in_transaction = false;
  uint8_t query_post_header = kQueryPostHeaderSize;
  FormatDescription maria114;
  maria114.unpositioned_cache_events = true;
  size_t pos = kMagicSize;
  while (pos + kHeaderSize <= n) {
    EventHeader h = DecodeHeader(absl::string_view(p + pos, kHeaderSize));
    if (h.event_size < kHeaderSize || pos + h.event_size > n) break;
    char* ev = p + pos;
    absl::string_view event(ev, h.event_size);
    if (h.type == kFormatDescriptionEvent && pos == kMagicSize) {
      auto fd = DecodeFormatDescription(event);
      if (!fd.ok()) return fd.status();
      checksums = fd->has_checksums();
      query_post_header = fd->PostHeaderLen(kQueryEvent);
      const std::string v =
          ServerVersionField("11.4.5-MariaDB-log", kFdeServerVersionLen);
      std::memcpy(ev + kFdeServerVersionOffset, v.data(), v.size());
      if (fd->checksum_alg != ChecksumAlg::kUndefined) {
        FixChecksum(ev, h.event_size);  // servers write it even when off
      }
      pos += h.event_size;
      continue;
    }
    absl::string_view body = EventBody(event, checksums);
    bool zero = false;
    switch (h.type) {
      case kMariaGtidEvent: {
        auto g = DecodeMariaGtid(body);
        in_transaction =
            g.ok() && (g->flags2 & MariaGtid::kFlagStandalone) == 0;
        break;
      }
      case kXidEvent:
      case kXaPrepareEvent:
        in_transaction = false;
        break;
      case kQueryEvent: {
        auto q = DecodeQuery(body, query_post_header);
        if (q.ok() && (q->query == "COMMIT" || q->query == "ROLLBACK")) {
          in_transaction = false;  // the group's end: written directly
        } else {
          zero = in_transaction;
        }
        break;
      }
      default:
        zero = in_transaction && LogPosMayBeZero(maria114, h.type);
        break;
    }
    if (zero) {
      StoreLe32(ev + kLogPosOffset, 0);
      if (checksums) FixChecksum(ev, h.event_size);
      ++out.count;
    }
    pos += h.event_size;
  }
  return out;
}

Variant MySql55RelayLog(int transactions, uint32_t source_pos) {
  constexpr uint32_t kTs = 1400000000;
  constexpr uint32_t kReplicaId = 2;
  constexpr uint32_t kSourceId = 1;
  // MySQL 5.5's Format_description: 27 post-header lengths, no checksum
  // algorithm byte (servers before 5.6.1 have none): 103 bytes.
  static constexpr uint8_t kPostHeaders55[27] = {
      56, 13, 0, 8, 0, 18, 0, 4, 4, 4, 4, 18, 0, 0,
      84, 0, 4, 26, 8, 0, 0, 0, 8, 8, 8, 2, 0};
  auto fde = [&](uint32_t server_id, uint32_t log_pos) {
    std::string b(2, '\0');
    StoreLe16(b.data(), 4);
    b += ServerVersionField("5.5.62-log", kFdeServerVersionLen);
    std::string ts(4, '\0');
    StoreLe32(ts.data(), kTs);
    b += ts;
    b += static_cast<char>(kHeaderSize);
    b.append(reinterpret_cast<const char*>(kPostHeaders55),
             sizeof(kPostHeaders55));
    return Event(kFormatDescriptionEvent, kTs, server_id, log_pos, 0, b);
  };
  Variant out;
  out.bytes.assign(kBinlogMagic, kMagicSize);
  auto add = [&](std::string ev) {
    out.bytes += ev;
    ++out.count;
  };
  // The replica's own header: log_pos is its end in this file.
  add(fde(kReplicaId, kMagicSize + 103));
  // The source's Rotate, as 5.0-5.5 replicas store it: log_pos 0, no
  // artificial flag, the source's file and position.
  std::string rot(8, '\0');
  StoreLe64(rot.data(), kMagicSize);
  rot += "mysql-bin.000007";
  add(Event(kRotateEvent, 0, kSourceId, 0, 0, rot));
  // The source's Format_description with the source's position.
  add(fde(kSourceId, kMagicSize + 103));
  uint32_t spos = source_pos;
  for (int i = 0; i < transactions; ++i) {
    std::string begin = QueryBody("db", "BEGIN");
    spos += static_cast<uint32_t>(kHeaderSize + begin.size());
    add(Event(kQueryEvent, kTs + i, kSourceId, spos, 0, begin));
    std::string ins = QueryBody(
        "db", absl::StrCat("INSERT INTO t VALUES (", i, ", 'row ", i, "')"));
    spos += static_cast<uint32_t>(kHeaderSize + ins.size());
    add(Event(kQueryEvent, kTs + i, kSourceId, spos, 0, ins));
    std::string xid(8, '\0');
    StoreLe64(xid.data(), 100 + i);
    spos += static_cast<uint32_t>(kHeaderSize + xid.size());
    add(Event(kXidEvent, kTs + i, kSourceId, spos, 0, xid));
  }
  // The relay log's own rotation: its end in this file, the relay flag.
  std::string next(8, '\0');
  StoreLe64(next.data(), kMagicSize);
  next += "relay-bin.000003";
  const uint32_t end =
      static_cast<uint32_t>(out.bytes.size() + kHeaderSize + next.size());
  add(Event(kRotateEvent, kTs, kReplicaId, end, kFlagRelayLog, next));
  return out;
}

Variant MySql40Binlog() {
  constexpr uint32_t kTs = 1100000000;
  Variant out;
  out.bytes.assign(kBinlogMagic, kMagicSize);
  std::string b(2, '\0');
  StoreLe16(b.data(), 3);
  b += ServerVersionField("4.0.27-log", kFdeServerVersionLen);
  std::string ts(4, '\0');
  StoreLe32(ts.data(), kTs);
  b += ts;
  out.bytes += Event(kStartEventV3, kTs, 1,
                     static_cast<uint32_t>(kMagicSize + kHeaderSize + b.size()),
                     0, b);
  std::string q = QueryBody("db", "CREATE TABLE t (a INT)");
  out.bytes += Event(kQueryEvent, kTs, 1,
                     static_cast<uint32_t>(out.bytes.size() + kHeaderSize +
                                           q.size()),
                     0, q);
  out.count = 2;
  return out;
}

}  // namespace testutil
}  // namespace binlog
