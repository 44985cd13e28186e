#include "binlog/gtid.h"

#include <algorithm>
#include <map>
#include <cstring>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "binlog/byte_reader.h"
#include "binlog/format.h"

namespace binlog {
namespace {

constexpr int64_t kMaxGno = std::numeric_limits<int64_t>::max() - 1;

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

const std::vector<GnoInterval>& EmptyIntervals() {
  static const std::vector<GnoInterval>* empty = new std::vector<GnoInterval>();
  return *empty;
}

// Inserts [first, last] into sorted, disjoint, non-adjacent `v`, merging.
void InsertInterval(std::vector<GnoInterval>* v, int64_t first, int64_t last) {
  // Fast path: appending at (or extending) the end, the common case of
  // GTIDs assigned in order.
  if (v->empty() || first > v->back().last + 1) {
    v->push_back(GnoInterval{first, last});
    return;
  }
  if (first >= v->back().first) {
    v->back().last = std::max(v->back().last, last);
    return;
  }
  // General case: find the intervals that overlap or touch [first, last].
  auto lo = std::lower_bound(
      v->begin(), v->end(), first,
      [](const GnoInterval& iv, int64_t f) { return iv.last + 1 < f; });
  auto hi = lo;
  int64_t nf = first, nl = last;
  while (hi != v->end() && hi->first <= last + 1) {
    nf = std::min(nf, hi->first);
    nl = std::max(nl, hi->last);
    ++hi;
  }
  if (lo == hi) {
    v->insert(lo, GnoInterval{first, last});
    return;
  }
  lo->first = nf;
  lo->last = nl;
  v->erase(lo + 1, hi);
}

// v minus [first, last].
void RemoveInterval(std::vector<GnoInterval>* v, int64_t first, int64_t last) {
  std::vector<GnoInterval> out;
  out.reserve(v->size() + 1);
  for (const GnoInterval& iv : *v) {
    if (iv.last < first || iv.first > last) {
      out.push_back(iv);
      continue;
    }
    if (iv.first < first) out.push_back(GnoInterval{iv.first, first - 1});
    if (iv.last > last) out.push_back(GnoInterval{last + 1, iv.last});
  }
  *v = std::move(out);
}

// A decimal number of digits only (no sign, no spaces), into [0, max].
template <typename T>
bool ParseDecimal(absl::string_view text, T max, T* out) {
  if (text.empty()) return false;
  T v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    T d = static_cast<T>(c - '0');
    if (v > (max - d) / 10) return false;
    v = static_cast<T>(v * 10 + d);
  }
  *out = v;
  return true;
}

bool IntervalsContain(const std::vector<GnoInterval>& v, int64_t gno) {
  auto it = std::lower_bound(
      v.begin(), v.end(), gno,
      [](const GnoInterval& iv, int64_t g) { return iv.last < g; });
  return it != v.end() && it->first <= gno;
}

}  // namespace

// ---------------------------------------------------------------------------
// Uuid

absl::StatusOr<Uuid> Uuid::Parse(absl::string_view text) {
  Uuid u;
  if (text.size() != 36) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' is not a UUID (8-4-4-4-12 hex digits)"));
  }
  int byte = 0;
  for (size_t i = 0; i < 36;) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (text[i] != '-') {
        return absl::InvalidArgumentError(
            absl::StrCat("'", text, "' is not a UUID (dash expected at ", i, ")"));
      }
      ++i;
      continue;
    }
    int hi = HexValue(text[i]);
    int lo = HexValue(text[i + 1]);
    if (hi < 0 || lo < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", text, "' is not a UUID (bad hex digit at ", i, ")"));
    }
    u.bytes[byte++] = static_cast<uint8_t>(hi << 4 | lo);
    i += 2;
  }
  return u;
}

std::string Uuid::ToString() const {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  s.reserve(36);
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s.push_back('-');
    s.push_back(kHex[bytes[i] >> 4]);
    s.push_back(kHex[bytes[i] & 15]);
  }
  return s;
}

bool Uuid::IsZero() const {
  for (uint8_t b : bytes) {
    if (b != 0) return false;
  }
  return true;
}

bool operator==(const Uuid& a, const Uuid& b) {
  return std::memcmp(a.bytes, b.bytes, 16) == 0;
}

bool operator<(const Uuid& a, const Uuid& b) {
  return std::memcmp(a.bytes, b.bytes, 16) < 0;
}

// ---------------------------------------------------------------------------
// Tag, Tsid

namespace {

bool IsTagChar(char c, size_t pos) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         (pos > 0 && c >= '0' && c <= '9');
}

// `text` (already stripped) checked against the grammar and lowered.
absl::StatusOr<std::string> NormalizeTag(absl::string_view text) {
  if (text.size() > kMaxTagLength) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tag '", text, "' is longer than ", kMaxTagLength, " characters"));
  }
  std::string out(text);
  for (size_t i = 0; i < out.size(); ++i) {
    if (!IsTagChar(out[i], i)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tag '", text, "': ",
          i == 0 && absl::ascii_isdigit(static_cast<unsigned char>(out[i]))
              ? "a tag starts with a letter or '_'"
              : "letters, digits and '_' only"));
    }
    out[i] = absl::ascii_tolower(static_cast<unsigned char>(out[i]));
  }
  return out;
}

}  // namespace

absl::StatusOr<Tag> Tag::Parse(absl::string_view text) {
  absl::StatusOr<std::string> n = NormalizeTag(absl::StripAsciiWhitespace(text));
  if (!n.ok()) return n.status();
  Tag t;
  std::memcpy(t.text_, n->data(), n->size());  // <= kMaxTagLength
  t.size_ = static_cast<uint8_t>(n->size());
  return t;
}

std::string Tsid::ToString() const {
  if (tag.empty()) return uuid.ToString();
  return absl::StrCat(uuid.ToString(), ":", tag.str());
}

// ---------------------------------------------------------------------------
// GtidSet

absl::StatusOr<GtidSet> GtidSet::Parse(absl::string_view text) {
  GtidSet set;
  text = absl::StripAsciiWhitespace(text);
  if (text.empty()) return set;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    part = absl::StripAsciiWhitespace(part);
    if (part.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("GTID set '", text, "': empty UUID set"));
    }
    std::vector<absl::string_view> fields = absl::StrSplit(part, ':');
    absl::StatusOr<Uuid> uuid = Uuid::Parse(absl::StripAsciiWhitespace(fields[0]));
    if (!uuid.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("GTID set '", text, "': ", uuid.status().message()));
    }
    if (fields.size() < 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "GTID set '", text, "': '", part, "' has no interval"));
    }
    Tsid tsid(*uuid);
    bool tsid_has_interval = true;  // the untagged start needs none after a tag
    for (size_t i = 1; i < fields.size(); ++i) {
      absl::string_view iv = absl::StripAsciiWhitespace(fields[i]);
      // A letter or '_' first: a tag (MySQL 8.3+), for the intervals after it.
      if (!iv.empty() &&
          (absl::ascii_isalpha(static_cast<unsigned char>(iv[0])) ||
           iv[0] == '_')) {
        if (!tsid_has_interval) {
          return absl::InvalidArgumentError(absl::StrCat(
              "GTID set '", text, "': tag '", tsid.tag.str(),
              "' has no interval"));
        }
        absl::StatusOr<Tag> tag = Tag::Parse(iv);
        if (!tag.ok()) {
          return absl::InvalidArgumentError(
              absl::StrCat("GTID set '", text, "': ", tag.status().message()));
        }
        tsid.tag = std::move(*tag);
        tsid_has_interval = false;
        continue;
      }
      // Digits only: MySQL's strtoll would also take signs and hex, which
      // no server prints. Spaces around '-' are allowed, as MySQL skips them.
      int64_t first = 0, last = 0;
      constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
      size_t dash = iv.find('-');
      bool ok;
      if (dash == absl::string_view::npos) {
        ok = ParseDecimal(iv, kMax, &first);
        last = first;
      } else {
        ok = ParseDecimal(absl::StripAsciiWhitespace(iv.substr(0, dash)), kMax,
                          &first) &&
             ParseDecimal(absl::StripAsciiWhitespace(iv.substr(dash + 1)),
                          kMax, &last);
      }
      if (!ok) {
        return absl::InvalidArgumentError(absl::StrCat(
            "GTID set '", text, "': '", iv, "' is not an interval n or n-m",
            " nor a tag"));
      }
      if (last < first) {
        return absl::InvalidArgumentError(absl::StrCat(
            "GTID set '", text, "': interval '", iv, "' ends before it starts"));
      }
      if (first < 1 || last > kMaxGno) {
        return absl::InvalidArgumentError(absl::StrCat(
            "GTID set '", text, "': interval '", iv, "' outside 1 .. 2^63-2"));
      }
      set.AddInterval(tsid, first, last);
      tsid_has_interval = true;
    }
    if (!tsid_has_interval) {
      return absl::InvalidArgumentError(absl::StrCat(
          "GTID set '", text, "': tag '", tsid.tag.str(), "' has no interval"));
    }
  }
  return set;
}

std::string GtidSet::ToString(absl::string_view separator) const {
  std::string s;
  const Uuid* prev = nullptr;
  for (const auto& [tsid, ivs] : sets_) {
    if (prev == nullptr || *prev != tsid.uuid) {
      if (prev != nullptr) s.append(separator.data(), separator.size());
      s += tsid.uuid.ToString();
      prev = &tsid.uuid;
    }
    if (!tsid.tag.empty()) absl::StrAppend(&s, ":", tsid.tag.str());
    for (const GnoInterval& iv : ivs) {
      if (iv.first == iv.last) {
        absl::StrAppend(&s, ":", iv.first);
      } else {
        absl::StrAppend(&s, ":", iv.first, "-", iv.last);
      }
    }
  }
  return s;
}

int64_t GtidSet::Count() const {
  int64_t n = 0;
  for (const auto& [tsid, ivs] : sets_) {
    for (const GnoInterval& iv : ivs) {
      int64_t add = iv.last - iv.first + 1;
      if (n > std::numeric_limits<int64_t>::max() - add) {
        return std::numeric_limits<int64_t>::max();
      }
      n += add;
    }
  }
  return n;
}

bool GtidSet::HasTags() const {
  for (const auto& [tsid, ivs] : sets_) {
    if (!tsid.tag.empty()) return true;
  }
  return false;
}

void GtidSet::Add(const Uuid& uuid, int64_t gno) { AddInterval(Tsid(uuid), gno, gno); }

void GtidSet::AddInterval(const Uuid& uuid, int64_t first, int64_t last) {
  AddInterval(Tsid(uuid), first, last);
}

void GtidSet::Add(const Tsid& tsid, int64_t gno) { AddInterval(tsid, gno, gno); }

void GtidSet::AddInterval(const Tsid& tsid, int64_t first, int64_t last) {
  InsertInterval(&sets_[tsid], first, last);
}

bool GtidSet::Contains(const Uuid& uuid, int64_t gno) const {
  return Contains(Tsid(uuid), gno);
}

bool GtidSet::Contains(const Tsid& tsid, int64_t gno) const {
  auto it = sets_.find(tsid);
  return it != sets_.end() && IntervalsContain(it->second, gno);
}

void GtidSet::Union(const GtidSet& other) {
  if (&other == this) return;  // the loop below would grow what it walks
  for (const auto& [tsid, ivs] : other.sets_) {
    std::vector<GnoInterval>& mine = sets_[tsid];
    for (const GnoInterval& iv : ivs) InsertInterval(&mine, iv.first, iv.last);
  }
}

void GtidSet::Subtract(const GtidSet& other) {
  if (&other == this) {  // the loop below would erase what it walks
    sets_.clear();
    return;
  }
  for (const auto& [tsid, ivs] : other.sets_) {
    auto it = sets_.find(tsid);
    if (it == sets_.end()) continue;
    for (const GnoInterval& iv : ivs) RemoveInterval(&it->second, iv.first, iv.last);
    if (it->second.empty()) sets_.erase(it);
  }
}

bool GtidSet::IsSubsetOf(const GtidSet& other) const {
  for (const auto& [tsid, ivs] : sets_) {
    auto it = other.sets_.find(tsid);
    if (it == other.sets_.end()) return false;
    const std::vector<GnoInterval>& theirs = it->second;
    for (const GnoInterval& iv : ivs) {
      // Intervals are non-adjacent, so a subset interval lies inside one.
      auto j = std::lower_bound(
          theirs.begin(), theirs.end(), iv.first,
          [](const GnoInterval& t, int64_t f) { return t.last < f; });
      if (j == theirs.end() || j->first > iv.first || j->last < iv.last) {
        return false;
      }
    }
  }
  return true;
}

bool GtidSet::Intersects(const GtidSet& other) const {
  for (const auto& [tsid, ivs] : sets_) {
    auto it = other.sets_.find(tsid);
    if (it == other.sets_.end()) continue;
    for (const GnoInterval& a : ivs) {
      for (const GnoInterval& b : it->second) {
        if (a.first <= b.last && b.first <= a.last) return true;
      }
    }
  }
  return false;
}

int64_t GtidSet::FirstFreeGno(const Uuid& uuid) const {
  return FirstFreeGno(Tsid(uuid));
}

int64_t GtidSet::FirstFreeGno(const Tsid& tsid) const {
  auto it = sets_.find(tsid);
  if (it == sets_.end() || it->second.empty() || it->second.front().first > 1) {
    return 1;
  }
  return it->second.front().last + 1;
}

const std::vector<GnoInterval>& GtidSet::Intervals(const Uuid& uuid) const {
  return Intervals(Tsid(uuid));
}

const std::vector<GnoInterval>& GtidSet::Intervals(const Tsid& tsid) const {
  auto it = sets_.find(tsid);
  return it == sets_.end() ? EmptyIntervals() : it->second;
}

std::vector<Uuid> GtidSet::Uuids() const {
  std::vector<Uuid> out;
  for (const auto& [tsid, ivs] : sets_) {
    if (out.empty() || out.back() != tsid.uuid) out.push_back(tsid.uuid);
  }
  return out;
}

std::vector<Tsid> GtidSet::Tsids() const {
  std::vector<Tsid> out;
  out.reserve(sets_.size());
  for (const auto& [tsid, ivs] : sets_) out.push_back(tsid);
  return out;
}

namespace {
// The first word of a tagged GTID-set encoding: format byte 1 at both ends,
// the entry count in between (Gtid_set::encode of MySQL 8.3+).
constexpr uint64_t kTaggedFormat = 1;
}  // namespace

size_t GtidSet::PreviousGtidsBodySize() const {
  const bool tagged = HasTags();
  size_t size = 8;
  for (const auto& [tsid, ivs] : sets_) {
    size += 16 + 8 + 16 * ivs.size();
    if (tagged) size += VarlenSize(tsid.tag.str().size()) + tsid.tag.str().size();
  }
  return size;
}

std::string GtidSet::EncodePreviousGtidsBody() const {
  const bool tagged = HasTags();
  std::string out(PreviousGtidsBodySize(), '\0');
  char* p = out.data();
  const uint64_t n = sets_.size();
  StoreLe64(p, tagged ? (kTaggedFormat << 56) | (n << 8) | kTaggedFormat : n);
  p += 8;
  for (const auto& [tsid, ivs] : sets_) {
    std::memcpy(p, tsid.uuid.bytes, 16);
    p += 16;
    if (tagged) {
      const absl::string_view t = tsid.tag.str();
      p = StoreVarlen(p, t.size());
      std::memcpy(p, t.data(), t.size());
      p += t.size();
    }
    StoreLe64(p, ivs.size());
    p += 8;
    for (const GnoInterval& iv : ivs) {
      StoreLe64(p, static_cast<uint64_t>(iv.first));
      StoreLe64(p + 8, static_cast<uint64_t>(iv.last) + 1);  // exclusive
      p += 16;
    }
  }
  return out;
}

absl::StatusOr<GtidSet> GtidSet::DecodePreviousGtidsBody(absl::string_view body) {
  ByteReader r(body);
  uint64_t head;
  if (!r.Le64(&head)) {
    return absl::DataLossError("Previous_gtids event shorter than 8 bytes");
  }
  const uint64_t format = head >> 56;
  if (format > kTaggedFormat) {
    return absl::DataLossError(absl::StrCat(
        "Previous_gtids event in an unknown GTID set format ", format));
  }
  const bool tagged = format == kTaggedFormat;
  // Untagged: the count is the low 56 bits (the format byte is 0). Tagged:
  // bits 8..55; the low byte repeats the format and is not checked, as
  // MySQL does not check it.
  const uint64_t count = tagged ? (head >> 8) & 0xffffffffffffull : head;
  // An entry takes at least 24 bytes (25 tagged).
  const size_t min_entry = tagged ? 25 : 24;
  if (count > r.remaining() / min_entry) {
    return absl::DataLossError(absl::StrCat(
        "Previous_gtids event announces ", count, " UUIDs; it has room for ",
        r.remaining() / min_entry));
  }
  // Intervals are gathered per TSID and sorted before they are added:
  // added in the order of the body, intervals in descending order (or a
  // TSID repeated with lower intervals) would each be inserted at the
  // front, a quadratic cost a replica's request could impose (a 4 MiB
  // body holds 262,144 intervals). Sorted, each one appends or merges at
  // the end.
  std::map<Tsid, std::vector<GnoInterval>> intervals;
  for (uint64_t i = 0; i < count; ++i) {
    absl::string_view sid;
    if (!r.Bytes(16, &sid)) {
      return absl::DataLossError("Previous_gtids event ends inside a UUID set");
    }
    Tsid tsid;
    std::memcpy(tsid.uuid.bytes, sid.data(), 16);
    if (tagged) {
      uint64_t len;
      absl::string_view text;
      if (!r.Varlen(&len) || len > kMaxTagLength || !r.Bytes(len, &text)) {
        return absl::DataLossError(
            "Previous_gtids event holds a malformed tag (longer than 32 "
            "characters or past the end)");
      }
      absl::StatusOr<std::string> t = NormalizeTag(text);
      if (!t.ok()) {
        return absl::DataLossError(absl::StrCat(
            "Previous_gtids event holds a bad tag: ", t.status().message()));
      }
      absl::StatusOr<Tag> tag = Tag::Parse(*t);  // cannot fail: normalized
      tsid.tag = std::move(*tag);
    }
    uint64_t n;
    if (!r.Le64(&n) || n > r.remaining() / 16) {
      return absl::DataLossError("Previous_gtids event ends inside a UUID set");
    }
    std::vector<GnoInterval>& ivs = intervals[tsid];
    for (uint64_t k = 0; k < n; ++k) {
      uint64_t start = 0, end = 0;
      r.Le64(&start);
      r.Le64(&end);  // room checked above
      if (start < 1 || end <= start || end - 1 > static_cast<uint64_t>(kMaxGno)) {
        return absl::DataLossError(absl::StrCat(
            "Previous_gtids event holds a bad interval [", start, ", ", end, ")"));
      }
      ivs.push_back(GnoInterval{static_cast<int64_t>(start), static_cast<int64_t>(end - 1)});
    }
  }
  GtidSet set;
  for (auto& [tsid, ivs] : intervals) {
    std::sort(ivs.begin(), ivs.end(), [](const GnoInterval& a, const GnoInterval& b) {
      return a.first < b.first;
    });
    for (const GnoInterval& iv : ivs) set.AddInterval(tsid, iv.first, iv.last);
  }
  return set;
}

// ---------------------------------------------------------------------------
// MySQL Gtid events

std::string MySqlGtidEvent::ToString() const {
  if (anonymous()) return "ANONYMOUS";
  if (!tag.empty()) return absl::StrCat(uuid.ToString(), ":", tag.str(), ":", gno);
  return absl::StrCat(uuid.ToString(), ":", gno);
}

absl::StatusOr<MySqlGtidEvent> DecodeMySqlGtidEvent(absl::string_view body) {
  ByteReader r(body);
  MySqlGtidEvent g;
  absl::string_view sid;
  uint64_t gno;
  if (!r.U8(&g.flags) || !r.Bytes(16, &sid) || !r.Le64(&gno)) {
    return absl::DataLossError("Gtid event shorter than 25 bytes");
  }
  std::memcpy(g.uuid.bytes, sid.data(), 16);
  g.gno = static_cast<int64_t>(gno);
  // Logical clocks (5.7+): type 2, last_committed, sequence_number.
  // As MySQL 8.0 reads it: a type byte other than 2 ends the event; type 2
  // without both clocks is a malformed event.
  uint8_t lt_type;
  uint64_t last, seq;
  if (!r.U8(&lt_type) || lt_type != 2) return g;
  if (!r.Le64(&last) || !r.Le64(&seq)) {
    return absl::DataLossError("Gtid event ends inside its logical clocks");
  }
  g.has_logical_clock = true;
  g.last_committed = static_cast<int64_t>(last);
  g.sequence_number = static_cast<int64_t>(seq);
  // Commit timestamps (8.0.1+): 7 bytes; bit 55 says the original follows.
  uint64_t ts;
  if (!r.LeN(7, &ts)) return g;
  constexpr uint64_t kOriginalFollows = uint64_t{1} << 55;
  g.has_commit_timestamps = true;
  if (ts & kOriginalFollows) {
    g.immediate_commit_timestamp = ts & ~kOriginalFollows;
    if (!r.LeN(7, &g.original_commit_timestamp)) {
      return absl::DataLossError("Gtid event ends inside original_commit_timestamp");
    }
  } else {
    g.immediate_commit_timestamp = ts;
    g.original_commit_timestamp = ts;
  }
  if (!r.PackedInt(&g.transaction_length)) return g;
  g.has_transaction_length = true;
  uint32_t version;
  if (!r.Le32(&version)) return g;
  g.has_server_versions = true;
  constexpr uint32_t kOriginalVersionFollows = uint32_t{1} << 31;
  if (version & kOriginalVersionFollows) {
    g.immediate_server_version = version & ~kOriginalVersionFollows;
    if (!r.Le32(&g.original_server_version)) {
      return absl::DataLossError("Gtid event ends inside original_server_version");
    }
  } else {
    g.immediate_server_version = version;
    g.original_server_version = version;
  }
  // 8.0.33+: the group commit ticket, when set.
  uint64_t ticket;
  if (r.Le64(&ticket)) g.commit_group_ticket = ticket;
  return g;
}

size_t MySqlGtidEventBodySize(const MySqlGtidEvent& g) {
  size_t n = 42 + 7 + PackedIntSize(g.transaction_length) + 4;
  if (g.original_commit_timestamp != g.immediate_commit_timestamp) n += 7;
  if (g.original_server_version != g.immediate_server_version) n += 4;
  return n;
}

void EncodeMySqlGtidEventBodyTo(const MySqlGtidEvent& g, char* p) {
  p[kGtidFlagsOffset] = static_cast<char>(g.flags);
  std::memcpy(p + kGtidUuidOffset, g.uuid.bytes, 16);
  StoreLe64(p + kGtidGnoOffset, static_cast<uint64_t>(g.gno));
  p[25] = 2;  // LOGICAL_TIMESTAMP_TYPECODE
  StoreLe64(p + kGtidLastCommittedOffset, static_cast<uint64_t>(g.last_committed));
  StoreLe64(p + kGtidSequenceNumberOffset, static_cast<uint64_t>(g.sequence_number));
  char* q = p + kGtidImmediateTimestampOffset;
  constexpr uint64_t kOriginalFollows = uint64_t{1} << 55;
  if (g.original_commit_timestamp != g.immediate_commit_timestamp) {
    StoreLeN(q, g.immediate_commit_timestamp | kOriginalFollows, 7);
    StoreLeN(q + 7, g.original_commit_timestamp, 7);
    q += 14;
  } else {
    StoreLeN(q, g.immediate_commit_timestamp, 7);
    q += 7;
  }
  q = StorePackedInt(q, g.transaction_length);
  constexpr uint32_t kOriginalVersionFollows = uint32_t{1} << 31;
  if (g.original_server_version != g.immediate_server_version) {
    StoreLe32(q, g.immediate_server_version | kOriginalVersionFollows);
    StoreLe32(q + 4, g.original_server_version);
  } else {
    StoreLe32(q, g.immediate_server_version);
  }
}

std::string EncodeMySqlGtidEventBody(const MySqlGtidEvent& g) {
  std::string out(MySqlGtidEventBodySize(g), '\0');
  EncodeMySqlGtidEventBodyTo(g, out.data());
  return out;
}

// ---------------------------------------------------------------------------
// Gtid_tagged_log_event (42)

namespace {

// MySQL's serialization format version (serialization_format_version), the
// id of a top-level message.
constexpr uint64_t kSerializationVersion = 1;

enum TaggedField : uint64_t {
  kTfFlags = 0,
  kTfUuid = 1,
  kTfGno = 2,
  kTfTag = 3,
  kTfLastCommitted = 4,
  kTfSequenceNumber = 5,
  kTfImmediateTimestamp = 6,
  kTfOriginalTimestamp = 7,
  kTfTransactionLength = 8,
  kTfImmediateVersion = 9,
  kTfOriginalVersion = 10,
  kTfCommitGroupTicket = 11,
  kTfCount = 12,
};

// Calls put(id, kind, value) for each field present, in id order; kind is
// 'u' (unsigned varlen), 's' (signed varlen), 'b' (the UUID bytes) or 't'
// (the tag).
template <typename Put>
void ForEachTaggedField(const MySqlGtidEvent& g, Put put) {
  put(kTfFlags, 'u', g.flags);
  put(kTfUuid, 'b', 0);
  put(kTfGno, 's', static_cast<uint64_t>(g.gno));
  put(kTfTag, 't', 0);
  put(kTfLastCommitted, 's', static_cast<uint64_t>(g.last_committed));
  put(kTfSequenceNumber, 's', static_cast<uint64_t>(g.sequence_number));
  put(kTfImmediateTimestamp, 'u', g.immediate_commit_timestamp);
  if (g.original_commit_timestamp != g.immediate_commit_timestamp) {
    put(kTfOriginalTimestamp, 'u', g.original_commit_timestamp);
  }
  put(kTfTransactionLength, 'u', g.transaction_length);
  put(kTfImmediateVersion, 'u', g.immediate_server_version);
  if (g.original_server_version != g.immediate_server_version) {
    put(kTfOriginalVersion, 'u', g.original_server_version);
  }
  if (g.commit_group_ticket != 0) put(kTfCommitGroupTicket, 'u', g.commit_group_ticket);
}

size_t TaggedFieldsSize(const MySqlGtidEvent& g) {
  size_t n = 0;
  ForEachTaggedField(g, [&](uint64_t id, char kind, uint64_t v) {
    n += VarlenSize(id);
    switch (kind) {
      case 'u': n += VarlenSize(v); break;
      case 's': n += VarlenSize(VarlenZigZag(static_cast<int64_t>(v))); break;
      case 'b':
        for (uint8_t b : g.uuid.bytes) n += VarlenSize(b);
        break;
      case 't': n += VarlenSize(g.tag.str().size()) + g.tag.str().size(); break;
    }
  });
  return n;
}

// The message size field: the whole message, this field included. MySQL
// computes the field's own length from the fields' size; the two agree
// unless the fields take 125-127 bytes, where the total needs one byte
// more; the length written here is always the real one.
uint64_t TaggedMessageSize(size_t fields) {
  const uint64_t fixed = VarlenSize(kSerializationVersion) + VarlenSize(0) + fields;
  uint64_t total = fixed + VarlenSize(fields);
  while (fixed + VarlenSize(total) != total) total = fixed + VarlenSize(total);
  return total;
}

}  // namespace

size_t MySqlGtidTaggedEventBodySize(const MySqlGtidEvent& g) {
  return TaggedMessageSize(TaggedFieldsSize(g));
}

void EncodeMySqlGtidTaggedEventBodyTo(const MySqlGtidEvent& g, char* p) {
  const size_t fields = TaggedFieldsSize(g);
  p = StoreVarlen(p, kSerializationVersion);
  p = StoreVarlen(p, TaggedMessageSize(fields));
  p = StoreVarlen(p, 0);  // last non-ignorable field id: none
  ForEachTaggedField(g, [&](uint64_t id, char kind, uint64_t v) {
    p = StoreVarlen(p, id);
    switch (kind) {
      case 'u': p = StoreVarlen(p, v); break;
      case 's': p = StoreVarlen(p, VarlenZigZag(static_cast<int64_t>(v))); break;
      case 'b':
        for (uint8_t b : g.uuid.bytes) p = StoreVarlen(p, b);
        break;
      case 't': {
        const absl::string_view t = g.tag.str();
        p = StoreVarlen(p, t.size());
        std::memcpy(p, t.data(), t.size());
        p += t.size();
        break;
      }
    }
  });
}

std::string EncodeMySqlGtidTaggedEventBody(const MySqlGtidEvent& g) {
  std::string out(MySqlGtidTaggedEventBodySize(g), '\0');
  EncodeMySqlGtidTaggedEventBodyTo(g, out.data());
  return out;
}

uint64_t MySqlGtidTaggedTransactionLength(const MySqlGtidEvent& g,
                                          uint64_t rest) {
  // The fields' size without transaction_length's value, computed once
  // (no copy of `g`: the log calls this in its serial section, where
  // copying a long tag would allocate).
  const size_t others = TaggedFieldsSize(g) - VarlenSize(g.transaction_length);
  uint64_t length = rest;
  for (;;) {
    const uint64_t next = rest + TaggedMessageSize(others + VarlenSize(length));
    if (next == length) return length;
    length = next;  // grows at most by the varlen's few extra bytes
  }
}

absl::StatusOr<MySqlGtidEvent> DecodeMySqlGtidTaggedEvent(absl::string_view body) {
  auto bad = [](absl::string_view what) {
    return absl::DataLossError(
        absl::StrCat("Gtid_tagged_log_event: ", what));
  };
  ByteReader r(body);
  uint64_t version, size, last_non_ignorable;
  if (!r.Varlen(&version) || !r.Varlen(&size) || !r.Varlen(&last_non_ignorable)) {
    return bad("ends inside its message header");
  }
  if (version != kSerializationVersion) {
    return bad(absl::StrCat("serialization format version ", version,
                            " (1 expected)"));
  }
  if (size < r.pos() || size > body.size()) {
    return bad(absl::StrCat("message size ", size, " outside ", r.pos(), " .. ",
                            body.size()));
  }
  if (last_non_ignorable > kTfCount) {
    return bad(absl::StrCat("unknown non-ignorable field ",
                            last_non_ignorable - 1));
  }
  MySqlGtidEvent g;
  g.tagged = true;
  bool has_original_ts = false, has_original_version = false;
  bool has_gno = false;
  for (uint64_t id = 0; id < kTfCount; ++id) {
    // As MySQL reads it: a field is missing when the message ends where it
    // would start or another id stands there.
    if (r.pos() == size || r.empty()) continue;
    ByteReader peek(r.Rest());
    uint64_t found;
    if (!peek.Varlen(&found)) return bad("ends inside a field id");
    if (found != id) continue;
    r.Skip(peek.pos());
    uint64_t v = 0;
    auto unsigned_max = [&](uint64_t max, absl::string_view name) -> absl::Status {
      if (!r.Varlen(&v)) return bad(absl::StrCat("ends inside ", name));
      if (v > max) return bad(absl::StrCat(name, " ", v, " out of range"));
      return absl::OkStatus();
    };
    auto signed_field = [&](int64_t* out, absl::string_view name) -> absl::Status {
      if (!r.Varlen(&v)) return bad(absl::StrCat("ends inside ", name));
      *out = VarlenUnZigZag(v);
      return absl::OkStatus();
    };
    absl::Status st;
    switch (id) {
      case kTfFlags:
        st = unsigned_max(0xff, "gtid_flags");
        g.flags = static_cast<uint8_t>(v);
        break;
      case kTfUuid:
        for (uint8_t& b : g.uuid.bytes) {
          st = unsigned_max(0xff, "the UUID");
          if (!st.ok()) break;
          b = static_cast<uint8_t>(v);
        }
        break;
      case kTfGno:
        st = signed_field(&g.gno, "gno");
        has_gno = true;
        break;
      case kTfTag: {
        absl::string_view text;
        st = unsigned_max(kMaxTagLength, "the tag length");
        if (st.ok() && !r.Bytes(v, &text)) st = bad("ends inside the tag");
        if (!st.ok()) break;
        absl::StatusOr<Tag> tag = Tag::Parse(text);
        // Parse strips whitespace, which the grammar does not allow here.
        if (!tag.ok() || tag->str().size() != text.size()) {
          return bad(absl::StrCat("bad tag '", absl::CHexEscape(text), "'"));
        }
        g.tag = std::move(*tag);
        break;
      }
      case kTfLastCommitted:
        st = signed_field(&g.last_committed, "last_committed");
        g.has_logical_clock = true;
        break;
      case kTfSequenceNumber:
        st = signed_field(&g.sequence_number, "sequence_number");
        g.has_logical_clock = true;
        break;
      case kTfImmediateTimestamp:
        st = unsigned_max(~uint64_t{0}, "immediate_commit_timestamp");
        g.immediate_commit_timestamp = v;
        g.has_commit_timestamps = true;
        break;
      case kTfOriginalTimestamp:
        st = unsigned_max(~uint64_t{0}, "original_commit_timestamp");
        g.original_commit_timestamp = v;
        has_original_ts = true;
        break;
      case kTfTransactionLength:
        st = unsigned_max(~uint64_t{0}, "transaction_length");
        g.transaction_length = v;
        g.has_transaction_length = true;
        break;
      case kTfImmediateVersion:
        st = unsigned_max(0xffffffffu, "immediate_server_version");
        g.immediate_server_version = static_cast<uint32_t>(v);
        g.has_server_versions = true;
        break;
      case kTfOriginalVersion:
        st = unsigned_max(0xffffffffu, "original_server_version");
        g.original_server_version = static_cast<uint32_t>(v);
        has_original_version = true;
        break;
      case kTfCommitGroupTicket:
        st = unsigned_max(~uint64_t{0}, "commit_group_ticket");
        g.commit_group_ticket = v;
        break;
    }
    if (!st.ok()) return st;
  }
  if (!has_original_ts) g.original_commit_timestamp = g.immediate_commit_timestamp;
  if (!has_original_version) g.original_server_version = g.immediate_server_version;
  if (!has_gno || g.gno < 1 || g.gno > kMaxGno) {
    return bad(has_gno ? absl::StrCat("GNO ", g.gno, " outside 1 .. 2^63-2")
                       : std::string("no GNO"));
  }
  return g;
}

absl::StatusOr<MySqlGtidEvent> DecodeAnyMySqlGtidEvent(uint8_t type,
                                                       absl::string_view body) {
  if (type == kGtidTaggedEvent) return DecodeMySqlGtidTaggedEvent(body);
  if (type == kGtidEvent || type == kAnonymousGtidEvent) {
    return DecodeMySqlGtidEvent(body);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("event type ", static_cast<int>(type), " is not a MySQL GTID event"));
}

// ---------------------------------------------------------------------------
// MariaDB

std::string MariaGtid::ToString(uint32_t server_id) const {
  return absl::StrCat(domain_id, "-", server_id, "-", seq_no);
}

absl::StatusOr<MariaGtid> DecodeMariaGtid(absl::string_view body) {
  ByteReader r(body);
  MariaGtid g;
  if (!r.Le64(&g.seq_no) || !r.Le32(&g.domain_id) || !r.U8(&g.flags2)) {
    return absl::DataLossError("MariaDB Gtid event shorter than 13 bytes");
  }
  if (g.flags2 & MariaGtid::kFlagGroupCommitId) {
    if (!r.Le64(&g.commit_id)) {
      return absl::DataLossError("MariaDB Gtid event ends inside its commit id");
    }
    g.has_commit_id = true;
  }
  if (g.flags2 & (MariaGtid::kFlagPreparedXa | MariaGtid::kFlagCompletedXa)) {
    uint8_t gtrid_len, bqual_len;
    absl::string_view gtrid, bqual;
    if (!r.Le32(&g.xid_format_id) || !r.U8(&gtrid_len) || !r.U8(&bqual_len) ||
        gtrid_len > 64 || bqual_len > 64 || !r.Bytes(gtrid_len, &gtrid) ||
        !r.Bytes(bqual_len, &bqual)) {
      return absl::DataLossError("MariaDB Gtid event ends inside its XA xid");
    }
    g.xid_gtrid = std::string(gtrid);
    g.xid_bqual = std::string(bqual);
    g.has_xid = true;
  }
  return g;
}

std::string MariaGtidList::ToString() const {
  std::string s;
  for (const auto& e : entries) {
    if (!s.empty()) s.push_back(',');
    absl::StrAppend(&s, e.domain_id, "-", e.server_id, "-", e.seq_no);
  }
  return s;
}

std::string EncodeMariaGtidListBody(const MariaGtidList& list) {
  size_t n = list.entries.size();
  std::string out(4 + 16 * n + (n == 0 ? 2 : 0), '\0');
  char* p = out.data();
  StoreLe32(p, static_cast<uint32_t>(n) | (list.flags << 28));
  p += 4;
  for (const MariaGtidListEntry& e : list.entries) {
    StoreLe32(p, e.domain_id);
    StoreLe32(p + 4, e.server_id);
    StoreLe64(p + 8, e.seq_no);
    p += 16;
  }
  return out;
}

absl::StatusOr<absl::string_view> DecodeBinlogCheckpoint(
    absl::string_view body) {
  ByteReader r(body);
  uint32_t len;
  absl::string_view name;
  if (!r.Le32(&len) || !r.Bytes(len, &name)) {
    return absl::DataLossError("Binlog_checkpoint file name runs past the end");
  }
  return name;
}

std::string EncodeBinlogCheckpointBody(absl::string_view file_name) {
  std::string out(4, '\0');
  StoreLe32(out.data(), static_cast<uint32_t>(file_name.size()));
  out.append(file_name.data(), file_name.size());
  return out;
}

absl::StatusOr<MariaGtidList> DecodeMariaGtidList(absl::string_view body) {
  ByteReader r(body);
  uint32_t word;
  if (!r.Le32(&word)) {
    return absl::DataLossError("Gtid_list event shorter than 4 bytes");
  }
  MariaGtidList list;
  list.flags = word >> 28;
  uint32_t count = word & 0x0fffffff;
  if (count > r.remaining() / 16) {
    return absl::DataLossError(absl::StrCat("Gtid_list event announces ", count,
                                            " entries; it has room for ",
                                            r.remaining() / 16));
  }
  list.entries.resize(count);
  for (auto& e : list.entries) {  // room checked above
    r.Le32(&e.domain_id);
    r.Le32(&e.server_id);
    r.Le64(&e.seq_no);
  }
  return list;
}

// ---------------------------------------------------------------------------
// MariaGtidState

absl::StatusOr<MariaGtidState> MariaGtidState::Parse(absl::string_view text) {
  MariaGtidState state;
  text = absl::StripAsciiWhitespace(text);
  if (text.empty()) return state;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    part = absl::StripAsciiWhitespace(part);
    std::vector<absl::string_view> f = absl::StrSplit(part, '-');
    uint32_t domain = 0, server = 0;
    uint64_t seq = 0;
    if (f.size() != 3 ||
        !ParseDecimal(f[0], std::numeric_limits<uint32_t>::max(), &domain) ||
        !ParseDecimal(f[1], std::numeric_limits<uint32_t>::max(), &server) ||
        !ParseDecimal(f[2], std::numeric_limits<uint64_t>::max(), &seq)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "MariaDB GTID list '", text, "': '", part,
          "' is not domain-server-seq"));
    }
    state.Add(domain, server, seq);
  }
  return state;
}

void MariaGtidState::Add(uint32_t domain_id, uint32_t server_id,
                         uint64_t seq_no) {
  Domain& d = domains_[domain_id];
  d.last_seq[server_id] = seq_no;
  d.last_server = server_id;
  d.highest_seq = std::max(d.highest_seq, seq_no);
}

bool MariaGtidState::Contains(uint32_t domain_id, uint32_t /*server_id*/,
                              uint64_t seq_no) const {
  auto it = domains_.find(domain_id);
  return it != domains_.end() && it->second.highest_seq >= seq_no;
}

bool MariaGtidState::Position(uint32_t domain_id,
                              MariaGtidListEntry* out) const {
  auto it = domains_.find(domain_id);
  if (it == domains_.end()) return false;
  const Domain& d = it->second;
  *out = MariaGtidListEntry{domain_id, d.last_server,
                            d.last_seq.at(d.last_server)};
  return true;
}

uint64_t MariaGtidState::NextSeqNo(uint32_t domain_id) const {
  auto it = domains_.find(domain_id);
  return it == domains_.end() ? 1 : it->second.highest_seq + 1;
}

std::vector<MariaGtidListEntry> MariaGtidState::Positions() const {
  std::vector<MariaGtidListEntry> out;
  out.reserve(domains_.size());
  for (const auto& [domain, d] : domains_) {
    out.push_back({domain, d.last_server, d.last_seq.at(d.last_server)});
  }
  return out;
}

std::vector<MariaGtidListEntry> MariaGtidState::Entries() const {
  std::vector<MariaGtidListEntry> out;
  for (const auto& [domain, d] : domains_) {
    for (const auto& [server, seq] : d.last_seq) {
      if (server != d.last_server) out.push_back({domain, server, seq});
    }
    out.push_back({domain, d.last_server, d.last_seq.at(d.last_server)});
  }
  return out;
}

std::string MariaGtidState::ToString() const {
  MariaGtidList list;
  list.entries = Positions();
  return list.ToString();
}

std::string MariaGtidState::StateToString() const {
  MariaGtidList list;
  list.entries = Entries();
  return list.ToString();
}

std::string MariaGtidState::EncodeGtidListBody() const {
  MariaGtidList list;
  list.entries = Entries();
  return EncodeMariaGtidListBody(list);
}

absl::StatusOr<MariaGtidState> MariaGtidState::DecodeGtidListBody(
    absl::string_view body) {
  absl::StatusOr<MariaGtidList> list = DecodeMariaGtidList(body);
  if (!list.ok()) return list.status();
  MariaGtidState state;
  for (const MariaGtidListEntry& e : list->entries) state.Add(e);
  return state;
}

bool operator==(const MariaGtidState& a, const MariaGtidState& b) {
  if (a.domains_.size() != b.domains_.size()) return false;
  for (auto i = a.domains_.begin(), j = b.domains_.begin();
       i != a.domains_.end(); ++i, ++j) {
    if (i->first != j->first || i->second.last_seq != j->second.last_seq ||
        i->second.last_server != j->second.last_server) {
      return false;
    }
  }
  return true;
}

}  // namespace binlog
