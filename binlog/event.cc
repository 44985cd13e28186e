#include "binlog/event.h"

#include <cstring>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "binlog/byte_reader.h"
#include "binlog/checksum.h"

namespace binlog {

void EncodeHeader(const EventHeader& h, char* out) {
  StoreLe32(out + kTimestampOffset, h.timestamp);
  out[kTypeOffset] = static_cast<char>(h.type);
  StoreLe32(out + kServerIdOffset, h.server_id);
  StoreLe32(out + kEventSizeOffset, h.event_size);
  StoreLe32(out + kLogPosOffset, h.log_pos);
  StoreLe16(out + kFlagsOffset, h.flags);
}

const char* ChecksumStateName(ChecksumState s) {
  switch (s) {
    case ChecksumState::kNone: return "none";
    case ChecksumState::kOk: return "ok";
    case ChecksumState::kBad: return "bad";
  }
  return "none";
}

uint32_t ComputeEventChecksum(absl::string_view event) {
  size_t covered = event.size() - kChecksumSize;
  if (static_cast<uint8_t>(event[kTypeOffset]) == kFormatDescriptionEvent &&
      (event[kFlagsOffset] & kFlagBinlogInUse)) {
    // The FDE checksum is defined with the in-use bit clear: checksum the
    // bytes before the flag, the flag byte cleared, then the rest.
    char flag = static_cast<char>(event[kFlagsOffset] & ~kFlagBinlogInUse);
    uint32_t c = Crc32(event.data(), kFlagsOffset);
    c = Crc32Extend(c, &flag, 1);
    return Crc32Extend(c, event.data() + kFlagsOffset + 1,
                       covered - kFlagsOffset - 1);
  }
  return Crc32(event.data(), covered);
}

bool EventChecksumMatches(absl::string_view event) {
  uint32_t stored = LoadLe32(event.data() + event.size() - kChecksumSize);
  return stored == ComputeEventChecksum(event);
}

uint8_t FormatDescription::PostHeaderLen(uint8_t type) const {
  if (type == 0 || type > post_header_len.size()) return 0;
  return post_header_len[type - 1];
}

// The leading "X.Y.Z" of a server version, parsed the way the servers do
// (strtoul per part): the first number must be present and followed by '.',
// a missing or non-numeric later part is 0, and any part >= 256 makes the
// whole version 0.0.0.
void ParseServerVersion(absl::string_view v, int out[3]) {
  out[0] = out[1] = out[2] = 0;
  size_t i = 0;
  for (int part = 0; part < 3; ++part) {
    long n = 0;
    size_t start = i;
    while (i < v.size() && v[i] >= '0' && v[i] <= '9') {
      if (n < 1000) n = n * 10 + (v[i] - '0');
      ++i;
    }
    if (part == 0 && (i == start || i >= v.size() || v[i] != '.')) return;
    if (n > 255) {
      out[0] = out[1] = out[2] = 0;
      return;
    }
    out[part] = static_cast<int>(n);
    if (i >= v.size() || v[i] != '.') return;
    ++i;
  }
}

bool ServerVersionHasChecksumAlg(absl::string_view server_version) {
  int v[3];
  ParseServerVersion(server_version, v);
  bool maria = server_version.find("MariaDB") != absl::string_view::npos ||
               server_version.find("-maria-") != absl::string_view::npos;
  int threshold[3] = {5, 6, 1};
  if (maria) {
    threshold[0] = 5;
    threshold[1] = 3;
    threshold[2] = 0;
  }
  for (int i = 0; i < 3; ++i) {
    if (v[i] != threshold[i]) return v[i] > threshold[i];
  }
  return true;
}

bool ServerVersionWritesUnpositionedCacheEvents(
    absl::string_view server_version) {
  if (server_version.find("MariaDB") == absl::string_view::npos) return false;
  int v[3];
  ParseServerVersion(server_version, v);
  return v[0] > 11 || (v[0] == 11 && v[1] >= 4);
}

bool LogPosMayBeZero(const FormatDescription& fde, uint8_t type) {
  if (!fde.unpositioned_cache_events) return false;
  switch (type) {
    case kFormatDescriptionEvent:
    case kRotateEvent:
    case kStopEvent:
    case kMariaGtidListEvent:
    case kMariaBinlogCheckpointEvent:
    case kMariaStartEncryptionEvent:
    case kMariaGtidEvent:
    case kXidEvent:
    case kXaPrepareEvent:
    case kIncidentEvent:
      return false;
    default:
      return true;
  }
}

absl::StatusOr<FormatDescription> DecodeFormatDescription(
    absl::string_view event) {
  if (event.size() < kFdePostHeaderOffset) {
    return absl::DataLossError(absl::StrCat(
        "format description event too short: ", event.size(), " bytes"));
  }
  if (event.size() > kMaxFormatDescriptionSize) {
    return absl::DataLossError(absl::StrCat("format description event of ", event.size(),
                                            " bytes (at most ", kMaxFormatDescriptionSize,
                                            ")"));
  }
  EventHeader h = DecodeHeader(event);
  if (h.type != kFormatDescriptionEvent) {
    return absl::DataLossError(absl::StrCat(
        "expected FORMAT_DESCRIPTION_EVENT, found type ", h.type));
  }
  FormatDescription fd;
  fd.in_use = (h.flags & kFlagBinlogInUse) != 0;
  fd.relay_log = (h.flags & kFlagRelayLog) != 0;
  fd.binlog_version = LoadLe16(event.data() + kFdeBinlogVersionOffset);
  if (fd.binlog_version != 4) {
    return absl::DataLossError(absl::StrCat("unsupported binlog version ",
                                            fd.binlog_version, " (need 4)"));
  }
  absl::string_view ver = event.substr(kFdeServerVersionOffset,
                                       kFdeServerVersionLen - 1);
  size_t nul = ver.find('\0');
  if (nul != absl::string_view::npos) ver = ver.substr(0, nul);
  fd.server_version = std::string(ver);
  int parsed[3];
  ParseServerVersion(fd.server_version, parsed);
  if (parsed[0] == 0 && parsed[1] == 0 && parsed[2] == 0) {
    // Servers would read this as version 0.0.0 (no checksums at all). No
    // server writes such a version, and a damaged version byte would
    // silently turn checksum verification off, so it is corruption.
    return absl::DataLossError(absl::StrCat(
        "server version '", absl::CHexEscape(fd.server_version),
        "' in the format description does not parse as X.Y.Z"));
  }
  fd.unpositioned_cache_events =
      ServerVersionWritesUnpositionedCacheEvents(fd.server_version);
  fd.create_timestamp = LoadLe32(event.data() + kFdeCreateTimestampOffset);
  fd.common_header_len = static_cast<uint8_t>(event[kFdeHeaderLenOffset]);
  if (fd.common_header_len < kHeaderSize) {
    return absl::DataLossError(absl::StrCat(
        "format description declares a common header of ",
        fd.common_header_len, " bytes (need >= 19)"));
  }
  size_t n;
  if (ServerVersionHasChecksumAlg(fd.server_version)) {
    if (event.size() < kFdePostHeaderOffset + 1 + kChecksumSize) {
      return absl::DataLossError("format description event too short");
    }
    n = event.size() - kFdePostHeaderOffset - 1 - kChecksumSize;
    uint8_t alg = static_cast<uint8_t>(event[kFdePostHeaderOffset + n]);
    if (alg != 0 && alg != 1) {
      return absl::DataLossError(
          absl::StrCat("unknown checksum algorithm ", alg));
    }
    fd.checksum_alg = static_cast<ChecksumAlg>(alg);
  } else {
    n = event.size() - kFdePostHeaderOffset;
    fd.checksum_alg = ChecksumAlg::kUndefined;
  }
  fd.post_header_len.assign(event.begin() + kFdePostHeaderOffset,
                            event.begin() + kFdePostHeaderOffset + n);
  return fd;
}

absl::StatusOr<RotateInfo> DecodeRotate(absl::string_view body) {
  if (body.size() < kRotatePostHeaderSize) {
    return absl::DataLossError("rotate event body too short");
  }
  RotateInfo r;
  r.position = LoadLe64(body.data());
  absl::string_view name = body.substr(kRotatePostHeaderSize);
  if (name.size() > 511) name = name.substr(0, 511);
  r.next_file = std::string(name);
  return r;
}

absl::StatusOr<RotateInfo> DecodeRotateAnyChecksum(absl::string_view event,
                                                   bool* has_checksum) {
  *has_checksum = false;
  if (event.size() < kHeaderSize + kRotatePostHeaderSize ||
      LoadLe32(event.data() + kEventSizeOffset) != event.size()) {
    return absl::DataLossError("malformed Rotate event");
  }
  *has_checksum = event.size() >= kHeaderSize + kRotatePostHeaderSize + kChecksumSize &&
                  EventChecksumMatches(event);
  return DecodeRotate(EventBody(event, *has_checksum));
}

namespace {
// Heartbeat_log_event_v2 field types (MySQL's codecs::binary::Heartbeat).
constexpr uint64_t kHbEndMark = 0;
constexpr uint64_t kHbLogFilename = 1;
constexpr uint64_t kHbLogPosition = 2;
}  // namespace

absl::StatusOr<HeartbeatV2> DecodeHeartbeatV2(absl::string_view body) {
  ByteReader r(body);
  HeartbeatV2 hb;
  for (;;) {
    uint64_t type, length;
    if (!r.PackedInt(&type)) {
      return absl::DataLossError(
          "Heartbeat_log_event_v2 ends without its end mark");
    }
    if (type == kHbEndMark) return hb;
    absl::string_view value;
    if (!r.PackedInt(&length) || !r.Bytes(length, &value)) {
      return absl::DataLossError(absl::StrCat(
          "Heartbeat_log_event_v2 field ", type, " runs past the event"));
    }
    if (type == kHbLogFilename) {
      hb.has_log_filename = true;
      hb.log_filename = std::string(value);
    } else if (type == kHbLogPosition) {
      ByteReader v(value);
      if (!v.PackedInt(&hb.log_position)) {
        return absl::DataLossError(
            "Heartbeat_log_event_v2 position is not a packed integer");
      }
      hb.has_log_position = true;
    }
  }
}

std::string EncodeHeartbeatV2Body(absl::string_view log_filename,
                                  uint64_t log_position) {
  std::string out(3 * 9 + log_filename.size() + 2 * 9 + 1, '\0');
  char* p = out.data();
  p = StorePackedInt(p, kHbLogFilename);
  p = StorePackedInt(p, log_filename.size());
  std::memcpy(p, log_filename.data(), log_filename.size());
  p += log_filename.size();
  p = StorePackedInt(p, kHbLogPosition);
  p = StorePackedInt(p, PackedIntSize(log_position));
  p = StorePackedInt(p, log_position);
  p = StorePackedInt(p, kHbEndMark);
  out.resize(static_cast<size_t>(p - out.data()));
  return out;
}

absl::StatusOr<QueryInfo> DecodeQuery(absl::string_view body,
                                      uint8_t post_header_len) {
  if (post_header_len < kQueryPostHeaderSize ||
      body.size() < post_header_len) {
    return absl::DataLossError("query event too short");
  }
  QueryInfo q;
  q.thread_id = LoadLe32(body.data());
  q.exec_time = LoadLe32(body.data() + 4);
  uint8_t db_len = static_cast<uint8_t>(body[8]);
  q.error_code = LoadLe16(body.data() + 9);
  uint16_t status_len = LoadLe16(body.data() + 11);
  size_t db_off = static_cast<size_t>(post_header_len) + status_len;
  if (db_off + db_len + 1 > body.size()) {
    return absl::DataLossError("query event: status block or db past end");
  }
  q.status_vars = body.substr(post_header_len, status_len);
  q.db = body.substr(db_off, db_len);
  q.query = body.substr(db_off + db_len + 1);
  return q;
}

}  // namespace binlog
