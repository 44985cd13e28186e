// File: binlog/event.h
//
// Decoding and validation of single events.
//
// Defines:
//   EventHeader         the decoded 19-byte common header
//   ChecksumState       what a reader learned about an event's CRC32 footer
//   DecodeHeader        parse 19 bytes
//   CheckEventChecksum  verify the CRC32 footer (FDE in-use bit handled)
//   FormatDescription   the decoded Format_description event
//   Rotate / Query decoding of the fields the library needs (the Query
//                       status variables: binlog/statement_events.h; GTID
//                       events: binlog/gtid.h)
//
// Errors: DataLoss for malformed bytes. Callers add the file and offset
// (the decoders only see bytes).
// Thread safety: all functions are thread-safe (no shared state).
// Lifetime: string_views in decoded structs (QueryInfo::db, ::query) point
// into the bytes passed in and are valid as long as those bytes are.

#ifndef BINLOG_BINLOG_EVENT_H_
#define BINLOG_BINLOG_EVENT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "binlog/format.h"
#include "binlog/gtid.h"

namespace binlog {

struct EventHeader {
  uint32_t timestamp = 0;
  uint8_t type = 0;
  uint32_t server_id = 0;
  uint32_t event_size = 0;
  uint32_t log_pos = 0;
  uint16_t flags = 0;
};

// Decodes the common header from the first 19 bytes of `bytes`.
// REQUIRES: bytes.size() >= kHeaderSize.
// Inline: a reader decodes one per event, and a call returning the struct
// through memory made the caller's wide copy of it stall on store
// forwarding (about a fifth of a small event's read time).
inline EventHeader DecodeHeader(absl::string_view bytes) {
  const char* p = bytes.data();
  EventHeader h;
  h.timestamp = LoadLe32(p + kTimestampOffset);
  h.type = static_cast<uint8_t>(p[kTypeOffset]);
  h.server_id = LoadLe32(p + kServerIdOffset);
  h.event_size = LoadLe32(p + kEventSizeOffset);
  h.log_pos = LoadLe32(p + kLogPosOffset);
  h.flags = LoadLe16(p + kFlagsOffset);
  return h;
}

// DecodeHeader into `*out`, field by field: for a header that is decoded
// into its final place (an Event's), where building it on the stack and
// copying it would stall the copy on store forwarding again.
// REQUIRES: p[0, 19) readable.
inline void DecodeHeaderInto(const char* p, EventHeader* out) {
  out->timestamp = LoadLe32(p + kTimestampOffset);
  out->type = static_cast<uint8_t>(p[kTypeOffset]);
  out->server_id = LoadLe32(p + kServerIdOffset);
  out->event_size = LoadLe32(p + kEventSizeOffset);
  out->log_pos = LoadLe32(p + kLogPosOffset);
  out->flags = LoadLe16(p + kFlagsOffset);
}

// Encodes `h` into out[0, 19).
void EncodeHeader(const EventHeader& h, char* out);

enum class ChecksumState {
  kNone,  // the file has no checksums, or the check was skipped
          // (ChecksumMode::kSkip; ring bytes, ReaderOptions::
          // verify_published_checksums)
  kOk,
  kBad,
};
const char* ChecksumStateName(ChecksumState s);  // "none", "ok", "bad"

// Verifies the CRC32 footer of a complete event (header..footer). For a
// Format_description event the in-use flag is cleared in a copy first, as
// servers compute that checksum with the flag clear.
// REQUIRES: event.size() >= kHeaderSize + kChecksumSize.
bool EventChecksumMatches(absl::string_view event);

// Computes the CRC32 footer value for a complete event (over all bytes but
// the last 4), with the FDE rule applied.
uint32_t ComputeEventChecksum(absl::string_view event);

// The decoded Format_description event.
struct FormatDescription {
  uint16_t binlog_version = 4;
  std::string server_version;
  uint32_t create_timestamp = 0;
  uint8_t common_header_len = kHeaderSize;
  std::vector<uint8_t> post_header_len;  // index = type - 1
  ChecksumAlg checksum_alg = ChecksumAlg::kOff;
  bool in_use = false;  // kFlagBinlogInUse in the header flags
  // kFlagRelayLog (LOG_EVENT_RELAY_LOG_F) in the header flags: the file is
  // a relay log (binlog/relay_log.h), whose events carry the source's
  // log_pos.
  bool relay_log = false;
  // Written by MariaDB 11.4 or later: the events a transaction or statement
  // wrote into the server's binlog cache carry log_pos 0 (see
  // LogPosMayBeZero).
  bool unpositioned_cache_events = false;

  bool has_checksums() const { return checksum_alg == ChecksumAlg::kCrc32; }
  // Post-header length declared for `type`, or 0 if not declared.
  uint8_t PostHeaderLen(uint8_t type) const;
};

// Decodes a complete Format_description event (header included). Applies
// the servers' version rule for whether an algorithm byte is present.
absl::StatusOr<FormatDescription> DecodeFormatDescription(
    absl::string_view event);

// Splits a server version string ("8.0.36-log", "10.11.19-MariaDB") into
// its three numbers, as the servers do (do_server_version_split): {0,0,0}
// if it does not start with "N.", or if a part is above 255.
void ParseServerVersion(absl::string_view server_version, int out[3]);

// True if "X.Y.Z..." parses to a version at or above the one where the
// checksum algorithm byte was introduced (MySQL 5.6.1, MariaDB 5.3.0).
bool ServerVersionHasChecksumAlg(absl::string_view server_version);

// True for a MariaDB server version at or above 11.4.0. From 11.4 MariaDB
// computes the checksums of the events a transaction (or a non-transactional
// statement) writes into its binlog cache when it writes them there, before
// their place in the file is known, and copies the cache into the file
// without filling in their log_pos: those events carry log_pos 0 (unless the
// server runs with binlog_legacy_event_pos=ON, or encrypts its binlog, or is
// a Galera node, where the old fix-up is kept). The events MariaDB writes to
// the file directly keep their end offset: the Format_description, Rotate,
// Stop, Gtid_list, Binlog_checkpoint and Start_encryption events, and each
// event group's Gtid event and its end (Xid, XA_prepare, or the COMMIT or
// ROLLBACK Query event), and Incident events.
bool ServerVersionWritesUnpositionedCacheEvents(
    absl::string_view server_version);

// True if an event of `type` may carry log_pos 0 in a file described by
// `fde`: the file's writer is MariaDB 11.4+ (unpositioned_cache_events) and
// `type` is one MariaDB can write through its binlog cache (anything but the
// directly written events listed above; a Query event can be either: the
// statements inside a group go through the cache, the group's COMMIT does
// not, so a Query with log_pos 0 is accepted). A reader that checks log_pos
// accepts exactly 0 for those events and still requires the end offset
// everywhere else.
bool LogPosMayBeZero(const FormatDescription& fde, uint8_t type);

// Body of an event without header and footer, given the file's checksum
// setting. REQUIRES: the event was validated (size >= header + footer).
inline absl::string_view EventBody(absl::string_view event, bool checksums) {
  size_t end = event.size() - (checksums ? kChecksumSize : 0);
  return event.substr(kHeaderSize, end - kHeaderSize);
}

// Rotate event fields.
struct RotateInfo {
  uint64_t position = 0;
  std::string next_file;
};
absl::StatusOr<RotateInfo> DecodeRotate(absl::string_view body);

// Decodes a whole Rotate event (header included) whose checksum setting the
// receiver does not know yet: the artificial Rotate a source sends ahead of
// a file's Format_description is checksummed with the setting of that file
// (or the one the replica announced), which arrives only after it. The
// footer is taken as present when the event is long enough for one and its
// last 4 bytes are the CRC32 of the rest; *has_checksum says which.
// DataLoss for an event whose event_size is not event.size() or whose body
// is too short.
absl::StatusOr<RotateInfo> DecodeRotateAnyChecksum(absl::string_view event,
                                                   bool* has_checksum);

// Heartbeat_log_event_v2 (41, MySQL 8.0.26+): what a source sends an idle
// replica that asked for it in its dump request; never stored in a binlog.
// Post-header length 0. Body (binlog/FORMAT.md): fields, each a packed
// integer type, a packed integer length and `length` bytes of value:
// type 1 the source's binlog file name, type 2 its position (a packed
// integer); type 0, alone, ends the fields. Unknown types are skipped by
// their length, as MySQL's decoder does.
struct HeartbeatV2 {
  bool has_log_filename = false;
  std::string log_filename;
  bool has_log_position = false;
  uint64_t log_position = 0;
};
// DataLoss if a field runs past the body or the end mark is missing; the
// bytes after the end mark are ignored.
absl::StatusOr<HeartbeatV2> DecodeHeartbeatV2(absl::string_view body);
// The body MySQL 8.4's Binlog_sender writes: file name, position, end mark.
std::string EncodeHeartbeatV2Body(absl::string_view log_filename,
                                  uint64_t log_position);

// Query event: the parts the library uses (database, statement).
struct QueryInfo {
  uint32_t thread_id = 0;
  uint32_t exec_time = 0;
  uint16_t error_code = 0;
  absl::string_view status_vars;  // input of DecodeQueryStatusVars
  absl::string_view db;
  absl::string_view query;
};
// `post_header_len` is the FDE's value for QUERY_EVENT (13 on v4 servers).
absl::StatusOr<QueryInfo> DecodeQuery(absl::string_view body,
                                      uint8_t post_header_len);

// MariaDB Gtid event (162): decoded by binlog/gtid.h's DecodeMariaGtid (one
// decoder for the library and the tools); the old name stays for callers.
using MariaGtidInfo = MariaGtid;

}  // namespace binlog

#endif  // BINLOG_BINLOG_EVENT_H_
