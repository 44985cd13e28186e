// File: binlog/gtid.h
//
// Global transaction identifiers: their types, their text forms, the GTID
// events that carry them and the file-header events that carry GTID sets.
// One home for the encoders and decoders that the log, recovery, readers,
// binlogtool and the tests use alike.
//
// Defines:
//   Uuid               a MySQL source UUID (16 bytes, text 8-4-4-4-12)
//   Tag                a GTID tag (MySQL 8.3+: "uuid:tag:gno"), normalized
//   Tsid               a transaction source: UUID and tag (empty: untagged)
//   GtidSet            a MySQL GTID set: (UUID, tag) -> disjoint GNO
//                      intervals, the text form servers print
//                      ("uuid:1-5:7:tag:1-3,uuid2:3") and the Previous_gtids
//                      body in both encodings (untagged, and the tagged one of
//                      8.3+; binlog-format reference 6.3, binlog/FORMAT.md)
//   MySqlGtidEvent     the MySQL Gtid / Anonymous_gtid event body (6.4), in
//                      the 8.0 layout (logical clocks, commit timestamps,
//                      transaction_length, server versions), and the
//                      Gtid_tagged_log_event (42) of 8.3+, in MySQL's field
//                      serialization (binlog/FORMAT.md "Tagged GTIDs")
//   MariaGtid, MariaGtidList   MariaDB Gtid (162) and Gtid_list (163)
//   MariaGtidState     MariaDB's binlog GTID state (gtid_binlog_state and
//                      gtid_binlog_pos), as the Gtid_list event carries it
//
// Behaviour follows MySQL 8.0 (GTID sets, text forms, event layout), MySQL
// 8.4 (tags, the tagged encodings) and MariaDB 10.11 (its GTID events), as
// the reference and binlog/FORMAT.md describe them.
//
// Errors: parsers and decoders return InvalidArgument for bad text and
// DataLoss for malformed event bodies, with a message; none reads outside
// its input.
// Thread safety: the functions are thread-safe; a GtidSet is
// thread-compatible (const methods may run concurrently).

#ifndef BINLOG_BINLOG_GTID_H_
#define BINLOG_BINLOG_GTID_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "binlog/format.h"

namespace binlog {

// A MySQL source UUID (server_uuid), 16 raw bytes in text order.
struct Uuid {
  uint8_t bytes[16] = {};

  // 8-4-4-4-12 hex digits, either case, dashes required.
  static absl::StatusOr<Uuid> Parse(absl::string_view text);
  // Lowercase text form, as servers print it.
  std::string ToString() const;
  bool IsZero() const;

  friend bool operator==(const Uuid& a, const Uuid& b);
  friend bool operator!=(const Uuid& a, const Uuid& b) { return !(a == b); }
  friend bool operator<(const Uuid& a, const Uuid& b);
};

// Longest tag MySQL accepts (mysql::gtid::tag_max_length).
inline constexpr size_t kMaxTagLength = 32;

// A GTID tag (MySQL 8.3+, WL#15294): 1 to 32 characters, a letter or '_'
// first, then letters, digits or '_' (ASCII only). MySQL normalizes tags to
// lower case, so "Blue_1" and "blue_1" are the same tag; a Tag holds the
// normalized form. The empty Tag (the default) means "no tag": an untagged
// GTID, as 8.0 knows them.
//
// The text is held inline (kMaxTagLength bytes and a length, no heap): a
// Tag is copied into every Tsid, CommitGtid and AssignedIdentity, several
// times per commit in the log's serial section, which must not allocate.
//
// Thread safety: a plain value.
class Tag {
 public:
  Tag() = default;

  // Parses a tag as MySQL does (SET gtid_next, GTID set text): ASCII
  // whitespace around it is ignored, letters are lowered. "" (or only
  // whitespace) is the empty tag. InvalidArgument for a character outside
  // the grammar, a digit first, or more than kMaxTagLength characters.
  static absl::StatusOr<Tag> Parse(absl::string_view text);

  bool empty() const { return size_ == 0; }
  // The normalized text ("" for the empty tag), valid as long as the Tag.
  absl::string_view str() const { return absl::string_view(text_, size_); }

  friend bool operator==(const Tag& a, const Tag& b) { return a.str() == b.str(); }
  friend bool operator!=(const Tag& a, const Tag& b) { return a.str() != b.str(); }
  // MySQL's order: by the normalized text, byte by byte; the empty tag first.
  friend bool operator<(const Tag& a, const Tag& b) { return a.str() < b.str(); }

 private:
  char text_[kMaxTagLength] = {};
  uint8_t size_ = 0;
};

// A transaction source identifier (MySQL's TSID): the source UUID and a
// tag, empty for untagged GTIDs. Each TSID has its own GNO sequence.
// Ordered by UUID bytes, then tag (MySQL's order: a UUID's untagged GTIDs
// first, then its tags alphabetically).
struct Tsid {
  Uuid uuid;
  Tag tag;

  Tsid() = default;
  explicit Tsid(const Uuid& u) : uuid(u) {}
  Tsid(const Uuid& u, Tag t) : uuid(u), tag(std::move(t)) {}

  // "uuid" or "uuid:tag".
  std::string ToString() const;

  friend bool operator==(const Tsid& a, const Tsid& b) {
    return a.uuid == b.uuid && a.tag == b.tag;
  }
  friend bool operator!=(const Tsid& a, const Tsid& b) { return !(a == b); }
  friend bool operator<(const Tsid& a, const Tsid& b) {
    if (a.uuid != b.uuid) return a.uuid < b.uuid;
    return a.tag < b.tag;
  }
};

// A closed GNO interval [first, last], 1 <= first <= last < 2^63.
struct GnoInterval {
  int64_t first = 0;
  int64_t last = 0;
  friend bool operator==(const GnoInterval& a, const GnoInterval& b) {
    return a.first == b.first && a.last == b.last;
  }
};

// A MySQL GTID set. Intervals per TSID (UUID and tag) are kept sorted,
// disjoint and not adjacent (1-3 and 4-5 merge into 1-5), as the servers
// normalize them. The untagged API (a Uuid where a Tsid could be) works on
// the UUID's untagged GTIDs and behaves as it did before tags existed; the
// Tsid overloads reach tagged ones.
class GtidSet {
 public:
  GtidSet() = default;

  // The text form MySQL accepts in gtid_executed / gtid_purged /
  // SOURCE_AUTO_POSITION: UUID sets separated by commas, each
  // "uuid:item[:item...]" where an item is an interval "n" or "n-m"
  // (decimal digits, 1 <= n <= m <= 2^63 - 2) or a tag (Tag::Parse's
  // grammar, lowered) that applies to the intervals after it up to the next
  // tag ("uuid:1-5:blue:1-3:red:7": untagged 1-5, blue 1-3, red 7). Spaces
  // and newlines around the separators are ignored; "" is the empty set.
  // Intervals may overlap or come in any order. InvalidArgument for
  // anything else. Stricter than MySQL's parser on purpose: it silently
  // skips an "n-m" with m < n, an empty UUID set ("a:1,,b:2", a trailing
  // comma), a UUID without intervals and a tag without intervals, which are
  // refused here as likely typos.
  static absl::StatusOr<GtidSet> Parse(absl::string_view text);

  // The text form MySQL prints: UUIDs in ascending byte order, lowercase;
  // per UUID its untagged intervals first, then each tag in ascending order
  // followed by its intervals ("uuid:1-10:blue:1-3:red:5"); intervals
  // ascending, "n" for a one-GTID interval; UUID sets separated by
  // `separator` (MySQL's @@gtid_executed and mysqlbinlog use ",\n"; "," is
  // the compact form). "" for the empty set.
  std::string ToString(absl::string_view separator = ",") const;

  bool empty() const { return sets_.empty(); }
  // Number of GTIDs (saturates at 2^63 - 1).
  int64_t Count() const;
  // Whether any GTID in the set has a tag (then EncodePreviousGtidsBody
  // writes the tagged encoding).
  bool HasTags() const;

  // Adds one GTID / an interval. REQUIRES: 1 <= gno (<= last) < 2^63.
  // The Uuid forms add untagged GTIDs.
  void Add(const Uuid& uuid, int64_t gno);
  void AddInterval(const Uuid& uuid, int64_t first, int64_t last);
  void Add(const Tsid& tsid, int64_t gno);
  void AddInterval(const Tsid& tsid, int64_t first, int64_t last);

  bool Contains(const Uuid& uuid, int64_t gno) const;  // untagged
  bool Contains(const Tsid& tsid, int64_t gno) const;
  // Set operations, over every TSID.
  void Union(const GtidSet& other);
  void Subtract(const GtidSet& other);
  bool IsSubsetOf(const GtidSet& other) const;
  bool Intersects(const GtidSet& other) const;

  // The smallest GNO >= 1 of `uuid`'s untagged GTIDs (or of `tsid`) not in
  // the set: the next automatic GNO MySQL would assign (it fills gaps
  // first; each TSID has its own sequence). 2^63 - 1 (one past the largest
  // GNO) when every GNO is taken; MySQL then refuses to commit.
  int64_t FirstFreeGno(const Uuid& uuid) const;
  int64_t FirstFreeGno(const Tsid& tsid) const;

  // The intervals of `uuid`'s untagged GTIDs / of `tsid` (empty if none).
  const std::vector<GnoInterval>& Intervals(const Uuid& uuid) const;
  const std::vector<GnoInterval>& Intervals(const Tsid& tsid) const;
  // Every UUID with GTIDs (tagged or not), ascending, each once.
  std::vector<Uuid> Uuids() const;
  // Every TSID with GTIDs, in ToString's order.
  std::vector<Tsid> Tsids() const;

  // Previous_gtids_log_event body (reference 6.3; binlog/FORMAT.md), also
  // the GTID set of COM_BINLOG_DUMP_GTID. Without tags, the untagged
  // encoding 8.0 reads: n_sids (8 bytes), then per UUID the 16 bytes,
  // n_intervals and [start, end) pairs (end exclusive). With any tag, MySQL
  // 8.3+'s tagged encoding: the 8-byte word (1 << 56) | (n << 8) | 1, then
  // per TSID the UUID, the tag (a varlen length and its characters; empty
  // for untagged GTIDs), n_intervals and the pairs. TSIDs in ToString's
  // order.
  std::string EncodePreviousGtidsBody() const;
  // Size of that body.
  size_t PreviousGtidsBodySize() const;
  // Decodes either encoding (the top byte of the first word says which:
  // 0 untagged, 1 tagged). DataLoss for a malformed body, an unknown
  // format byte, or a tag outside the grammar (tags are normalized).
  static absl::StatusOr<GtidSet> DecodePreviousGtidsBody(absl::string_view body);

  friend bool operator==(const GtidSet& a, const GtidSet& b) {
    return a.sets_ == b.sets_;
  }
  friend bool operator!=(const GtidSet& a, const GtidSet& b) {
    return !(a == b);
  }

 private:
  std::map<Tsid, std::vector<GnoInterval>> sets_;
};

// The body of a MySQL Gtid (33) or Anonymous_gtid (34) event. Decoding
// accepts every layout servers wrote (5.6 ends after the GNO, 5.7 after the
// logical clocks, 8.0 adds commit timestamps, transaction_length and server
// versions); the has_* flags say what the event carried. Encoding writes
// the 8.0 layout.
struct MySqlGtidEvent {
  static constexpr uint8_t kFlagMayHaveSbr = 0x01;

  uint8_t flags = 0;
  Uuid uuid;           // all zero for Anonymous_gtid
  int64_t gno = 0;     // 0 for Anonymous_gtid
  bool has_logical_clock = false;
  int64_t last_committed = 0;
  int64_t sequence_number = 0;
  bool has_commit_timestamps = false;
  uint64_t immediate_commit_timestamp = 0;  // microseconds since the epoch
  uint64_t original_commit_timestamp = 0;
  bool has_transaction_length = false;
  uint64_t transaction_length = 0;  // bytes of the transaction, this event
                                    // and every checksum included
  bool has_server_versions = false;
  uint32_t immediate_server_version = 0;  // e.g. 80036
  uint32_t original_server_version = 0;
  // The binlog group commit ticket (8.0.33+, written by MySQL only when
  // non-zero). DecodeMySqlGtidEvent reads it when its 8 bytes follow the
  // versions; EncodeMySqlGtidEventBody does not write it; the tagged codec
  // does both.
  uint64_t commit_group_ticket = 0;
  // The GTID's tag. Only the Gtid_tagged_log_event (42) carries one; an
  // event decoded from type 42 has `tagged` set (its tag is normally not
  // empty: MySQL writes type 42 for tagged GTIDs only).
  Tag tag;
  bool tagged = false;

  bool anonymous() const { return gno == 0 && uuid.IsZero(); }
  Tsid tsid() const { return Tsid(uuid, tag); }
  // "uuid:gno", "uuid:tag:gno" or "ANONYMOUS".
  std::string ToString() const;
};
absl::StatusOr<MySqlGtidEvent> DecodeMySqlGtidEvent(absl::string_view body);

// Gtid_tagged_log_event (42), MySQL 8.3+: the same fields in MySQL's field
// serialization (binlog/FORMAT.md "Tagged GTIDs"): the format version 1,
// the message size, the last non-ignorable field id (0), then the fields
// that are present, each a varlen field id and its value: 0 gtid_flags,
// 1 UUID (16 varlen bytes), 2 gno (signed), 3 tag (varlen length and
// characters), 4 last_committed, 5 sequence_number (signed),
// 6 immediate_commit_timestamp, 7 original_commit_timestamp (only when it
// differs), 8 transaction_length, 9 immediate_server_version,
// 10 original_server_version (only when it differs), 11 commit_group_ticket
// (only when non-zero).
//
// The decoder follows MySQL's: fields in id order, a missing one keeps its
// default (an original_* its immediate_* value); unknown later fields are
// skipped. DataLoss for a malformed body, a version other than 1, an
// unknown non-ignorable field, a value out of its field's range, a GNO
// outside 1 .. 2^63-2, or a tag outside the grammar (tags are normalized).
// The result has `tagged` set and the has_* flags of the fields present.
absl::StatusOr<MySqlGtidEvent> DecodeMySqlGtidTaggedEvent(absl::string_view body);

// The body MySQL 8.4 writes for `g` as a Gtid_tagged_log_event: every field
// (the has_* flags are not consulted; the original timestamp and version
// only when they differ from the immediate ones, the ticket only when
// non-zero), `transaction_length` as given. REQUIRES: g.tag.size() <= 32.
std::string EncodeMySqlGtidTaggedEventBody(const MySqlGtidEvent& g);
size_t MySqlGtidTaggedEventBodySize(const MySqlGtidEvent& g);
void EncodeMySqlGtidTaggedEventBodyTo(const MySqlGtidEvent& g, char* out);

// transaction_length for a tagged event: the value L with
// L == `rest` + MySqlGtidTaggedEventBodySize(g with transaction_length L),
// where `rest` is every other byte of the transaction (this event's header
// and footer and the events after it). The body's size depends on L's
// varlen length, so it is the fixpoint MySQL computes
// (Gtid_event::update_tagged_transaction_length).
uint64_t MySqlGtidTaggedTransactionLength(const MySqlGtidEvent& g,
                                          uint64_t rest);

// Whether `type` opens a MySQL transaction with its GTID: Gtid (33),
// Anonymous_gtid (34) or Gtid_tagged (42).
inline bool IsMySqlGtidEventType(uint8_t type) {
  return type == kGtidEvent || type == kAnonymousGtidEvent ||
         type == kGtidTaggedEvent;
}
// Decodes any of those by its event type: type 42 with
// DecodeMySqlGtidTaggedEvent, 33 and 34 with DecodeMySqlGtidEvent.
// InvalidArgument for another type.
absl::StatusOr<MySqlGtidEvent> DecodeAnyMySqlGtidEvent(uint8_t type,
                                                       absl::string_view body);

// The 8.0 body of `g` (every field, original timestamp and version written
// only when they differ from the immediate ones, as MySQL does). The type
// 33/34 layout has no tag: a GTID with a tag goes out as type 42
// (EncodeMySqlGtidTaggedEventBody), as MySQL writes it; this encoder
// ignores `tag`.
// `transaction_length` is written as given. Size: 42 + 7 (+7) + 1..9 + 4
// (+4) bytes.
std::string EncodeMySqlGtidEventBody(const MySqlGtidEvent& g);
// Size of that body for `g`.
size_t MySqlGtidEventBodySize(const MySqlGtidEvent& g);
// Writes the body into `out` (MySqlGtidEventBodySize(g) bytes).
void EncodeMySqlGtidEventBodyTo(const MySqlGtidEvent& g, char* out);

// Body offsets of the fields the log fills in its serial section.
inline constexpr size_t kGtidFlagsOffset = 0;
inline constexpr size_t kGtidUuidOffset = 1;
inline constexpr size_t kGtidGnoOffset = 17;
inline constexpr size_t kGtidLastCommittedOffset = 26;
inline constexpr size_t kGtidSequenceNumberOffset = 34;
inline constexpr size_t kGtidImmediateTimestampOffset = 42;

// MariaDB Gtid_event (162). The server_id part of the GTID is the event
// header's server_id.
struct MariaGtid {
  static constexpr uint8_t kFlagStandalone = 0x01;
  static constexpr uint8_t kFlagGroupCommitId = 0x02;
  static constexpr uint8_t kFlagTransactional = 0x04;
  static constexpr uint8_t kFlagAllowParallel = 0x08;
  static constexpr uint8_t kFlagWaited = 0x10;
  static constexpr uint8_t kFlagDdl = 0x20;
  static constexpr uint8_t kFlagPreparedXa = 0x40;
  static constexpr uint8_t kFlagCompletedXa = 0x80;

  uint64_t seq_no = 0;
  uint32_t domain_id = 0;
  uint8_t flags2 = 0;
  bool has_commit_id = false;  // kFlagGroupCommitId
  uint64_t commit_id = 0;
  bool has_xid = false;  // kFlagPreparedXa / kFlagCompletedXa
  uint32_t xid_format_id = 0;
  std::string xid_gtrid;
  std::string xid_bqual;

  // "domain-server-seq".
  std::string ToString(uint32_t server_id) const;
};
absl::StatusOr<MariaGtid> DecodeMariaGtid(absl::string_view body);

// MariaDB Gtid_list_event (163).
struct MariaGtidListEntry {
  uint32_t domain_id = 0;
  uint32_t server_id = 0;
  uint64_t seq_no = 0;
};
struct MariaGtidList {
  uint32_t flags = 0;  // top 4 bits of the count word
  std::vector<MariaGtidListEntry> entries;
  // "0-1-57,1-2-3" (empty for an empty list), entries in event order.
  std::string ToString() const;
};
// Decodes the body (reference 6.11): a word holding the count (low 28 bits)
// and flags (top 4 bits), then count x (domain 4, server 4, seq_no 8).
// Bytes after the entries are ignored (an empty list has 2 zero bytes).
absl::StatusOr<MariaGtidList> DecodeMariaGtidList(absl::string_view body);
// The body MariaDB 10.11 writes for `list`: the count word, the entries, and
// for an empty list 2 zero bytes (a 29-byte event with CRC, as the servers
// write it). REQUIRES: entries.size() < 2^28, flags < 16.
std::string EncodeMariaGtidListBody(const MariaGtidList& list);

// MariaDB Binlog_checkpoint (161): the base name of the oldest binlog file
// that may hold transactions whose engine commits are not yet durable
// (crash recovery scans from it). Body: 4-byte length, then the name.
// DataLoss if the name runs past the body. The view points into `body`.
absl::StatusOr<absl::string_view> DecodeBinlogCheckpoint(
    absl::string_view body);
std::string EncodeBinlogCheckpointBody(absl::string_view file_name);

// MariaDB's binlog GTID state, following MariaDB 10.11's rpl_binlog_state:
// per (domain, server) the seq_no of the last GTID logged, and per domain
// which of those was logged last.
//
// Two text forms, both "domain-server-seq" lists separated by commas with
// domains ascending:
//   ToString()       @@gtid_binlog_pos: per domain the most recent GTID
//                    ("0-1-100,1-2-5");
//   StateToString()  @@gtid_binlog_state: per domain every server's last
//                    GTID, the domain's most recent one last, the others by
//                    ascending server_id ("0-2-90,0-1-100,1-2-5").
// The Gtid_list event at the start of each MariaDB binlog file carries the
// state (Entries(), same order).
//
// Contains() follows the rule MariaDB applies to skip GTIDs already applied
// (gtid_ignore_duplicates, rpl_slave_state::check_duplicate_gtid): D-S-N is
// contained if domain D has logged some GTID with seq_no >= N, whatever its
// server_id. Within a domain seq_nos are meant to grow (gtid_strict_mode
// enforces it); without strict mode a lower seq_no may be logged later, and
// it then becomes the domain's position while the domain's highest seq_no
// (which the next locally generated GTID follows) stays.
//
// Thread safety: thread-compatible.
class MariaGtidState {
 public:
  MariaGtidState() = default;

  // Parses either text form (and any list of D-S-N): entries are applied in
  // order with Add, so the last entry of a domain becomes its position and a
  // repeated (domain, server) keeps its last seq_no. Spaces around commas are
  // ignored; "" is the empty state. InvalidArgument for anything else (an
  // empty entry, a missing part, a number out of range, a sign).
  static absl::StatusOr<MariaGtidState> Parse(absl::string_view text);

  std::string ToString() const;       // @@gtid_binlog_pos
  std::string StateToString() const;  // @@gtid_binlog_state

  bool empty() const { return domains_.empty(); }

  // Records that GTID domain-server-seq was logged (after every GTID logged
  // before it).
  void Add(uint32_t domain_id, uint32_t server_id, uint64_t seq_no);
  void Add(const MariaGtidListEntry& gtid) {
    Add(gtid.domain_id, gtid.server_id, gtid.seq_no);
  }

  // See the class comment: the domain's highest seq_no is >= seq_no.
  bool Contains(uint32_t domain_id, uint32_t server_id, uint64_t seq_no) const;

  // The most recent GTID of `domain_id`; false if the domain has none.
  bool Position(uint32_t domain_id, MariaGtidListEntry* out) const;
  // The seq_no MariaDB gives the next GTID it generates in `domain_id`:
  // the domain's highest seq_no + 1 (1 for a new domain).
  uint64_t NextSeqNo(uint32_t domain_id) const;

  // Per domain the most recent GTID, domains ascending (ToString's list).
  std::vector<MariaGtidListEntry> Positions() const;
  // The whole state, in StateToString's order.
  std::vector<MariaGtidListEntry> Entries() const;

  // The Gtid_list event body for this state (EncodeMariaGtidListBody of
  // Entries()), and the state a Gtid_list body describes (its entries added
  // in order). Decoding fails like DecodeMariaGtidList.
  std::string EncodeGtidListBody() const;
  static absl::StatusOr<MariaGtidState> DecodeGtidListBody(
      absl::string_view body);

  // Equal when both text forms are equal (a domain's highest seq_no, which
  // only NextSeqNo and Contains show, is not compared).
  friend bool operator==(const MariaGtidState& a, const MariaGtidState& b);
  friend bool operator!=(const MariaGtidState& a, const MariaGtidState& b) {
    return !(a == b);
  }

 private:
  struct Domain {
    std::map<uint32_t, uint64_t> last_seq;  // server_id -> last seq_no
    uint32_t last_server = 0;               // server of the most recent GTID
    uint64_t highest_seq = 0;
  };
  std::map<uint32_t, Domain> domains_;
};

}  // namespace binlog

#endif  // BINLOG_BINLOG_GTID_H_
