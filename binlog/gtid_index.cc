// GTID index files. See binlog/gtid_index.h and FORMAT.md, "GTID index
// files".

#include "binlog/gtid_index.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <system_error>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "binlog/checksum.h"
#include "binlog/event.h"
#include "binlog/format.h"
#include "binlog/reader.h"
#include "binlog/status_macros.h"
#include "binlog/transaction_boundary.h"
#include "binlog/transaction_scan.h"

namespace binlog {
namespace internal {
namespace {

// Version 3: entries only at GTID events (a reader checks the event there).
constexpr char kMagic[8] = {'B', 'L', 'G', 'I', 'D', 'X', '\0', '\3'};
constexpr int kVersion = kMagic[7];
constexpr size_t kFileHeaderSize = 44;  // FORMAT.md
constexpr size_t kRecordHeaderSize = 8;  // length, crc
// The format version of an index file (its magic's last byte), or -1
// when `data` does not begin as one.
int FormatVersion(absl::string_view data) {
  if (data.size() < sizeof(kMagic) ||
      data.substr(0, sizeof(kMagic) - 1) != absl::string_view(kMagic, sizeof(kMagic) - 1)) {
    return -1;
  }
  return static_cast<uint8_t>(data[sizeof(kMagic) - 1]);
}

// A temporary index file's name: `<file>.gidx.tmp.<16 hex digits>`.
constexpr absl::string_view kTmpSuffix = ".tmp.";

// A tag no other temporary name of this process has, and most likely no
// other process's: a random per-process prefix and a counter.
uint64_t UniqueTag() {
  // std::random_device, not absl's random library: the installed library's
  // consumers link the abseil libraries it lists, and absl/random is not
  // among them.
  static const uint64_t base = [] {
    std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32) ^ rd();
  }();
  static std::atomic<uint64_t> counter{0};
  return base + counter.fetch_add(1, std::memory_order_relaxed) * 0x9E3779B97F4A7C15ull;
}

// Reader reopens per seek at most (besides the last jump): the largest
// gaps between returned ranges are jumped over, the others read.
constexpr size_t kMaxJumps = 64;

// Returned ranges per entry before the builder stops adding entries to a
// file (a file that alternates returned and skipped events that often
// gains little from an index).
constexpr size_t kMaxRanges = 1 << 16;

void Put32(std::string* out, uint32_t v) {
  char b[4];
  for (int i = 0; i < 4; ++i) b[i] = static_cast<char>(v >> (8 * i));
  out->append(b, 4);
}
void Put64(std::string* out, uint64_t v) {
  char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>(v >> (8 * i));
  out->append(b, 8);
}

// Reads little-endian fields; any read past the end sets `bad`.
struct Cursor {
  absl::string_view in;
  bool bad = false;
  uint64_t Get(int n) {
    if (in.size() < static_cast<size_t>(n)) {
      bad = true;
      in = {};
      return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= uint64_t{static_cast<uint8_t>(in[i])} << (8 * i);
    in.remove_prefix(n);
    return v;
  }
  absl::string_view Bytes(size_t n) {
    if (in.size() < n) {
      bad = true;
      in = {};
      return {};
    }
    absl::string_view v = in.substr(0, n);
    in.remove_prefix(n);
    return v;
  }
};

std::string EncodeEntry(const GtidIndexEntry& e, LogFlavor flavor) {
  std::string p;
  Put64(&p, e.offset);
  Put32(&p, e.header_crc);
  Put64(&p, e.gtid_transactions);
  Put32(&p, static_cast<uint32_t>(e.returned.size()));
  for (const auto& r : e.returned) {
    Put64(&p, r.first);
    Put64(&p, r.second);
  }
  if (flavor == LogFlavor::kMariaDB) {
    Put32(&p, static_cast<uint32_t>(e.domains.size()));
    for (const GtidIndexDomain& d : e.domains) {
      Put32(&p, d.domain_id);
      Put32(&p, d.last_server_id);
      Put64(&p, d.last_seq_no);
      Put64(&p, d.max_seq_no);
      p.push_back(d.last_is_new_max ? 1 : 0);
    }
  } else {
    std::string set = e.gtids.EncodePreviousGtidsBody();
    Put32(&p, static_cast<uint32_t>(set.size()));
    p += set;
  }
  return p;
}

// One record's payload; false when it does not decode or breaks the order
// the entries before it set (`prev_offset`).
bool DecodeEntry(absl::string_view payload, LogFlavor flavor, uint64_t prev_offset,
                 uint64_t file_size, GtidIndexEntry* e) {
  Cursor c{payload};
  e->offset = c.Get(8);
  e->header_crc = static_cast<uint32_t>(c.Get(4));
  e->gtid_transactions = c.Get(8);
  const uint64_t n = c.Get(4);
  if (c.bad || n > c.in.size() / 16) return false;
  uint64_t at = prev_offset;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t b = c.Get(8), end = c.Get(8);
    if (b < at || end <= b || end > e->offset) return false;
    e->returned.emplace_back(b, end);
    at = end;
  }
  if (e->offset <= prev_offset || e->offset + kHeaderSize > file_size) return false;
  if (flavor == LogFlavor::kMariaDB) {
    const uint64_t nd = c.Get(4);
    if (c.bad || nd > c.in.size() / 25) return false;
    for (uint64_t i = 0; i < nd; ++i) {
      GtidIndexDomain d;
      d.domain_id = static_cast<uint32_t>(c.Get(4));
      d.last_server_id = static_cast<uint32_t>(c.Get(4));
      d.last_seq_no = c.Get(8);
      d.max_seq_no = c.Get(8);
      d.last_is_new_max = c.Get(1) != 0;
      if (d.last_seq_no > d.max_seq_no) return false;
      // Strictly increasing domain ids (the builder writes them so):
      // GrowsFrom and StateHolds rely on the order.
      if (!e->domains.empty() && d.domain_id <= e->domains.back().domain_id) return false;
      e->domains.push_back(d);
    }
  } else {
    const uint64_t len = c.Get(4);
    absl::string_view set = c.Bytes(len);
    if (c.bad) return false;
    absl::StatusOr<GtidSet> s = GtidSet::DecodePreviousGtidsBody(set);
    if (!s.ok()) return false;
    e->gtids = std::move(*s);
  }
  return !c.bad && c.in.empty();
}

// True when `e`'s state holds `prev`'s (the entry before it): states only
// grow along a file (MariaDB: no domain disappears, no highest seq_no
// goes down). The domains of both are sorted by domain_id (DecodeEntry):
// one walk over both, linear in their sizes.
bool GrowsFrom(const GtidIndexEntry& prev, const GtidIndexEntry& e) {
  if (e.gtid_transactions < prev.gtid_transactions) return false;
  if (!prev.gtids.IsSubsetOf(e.gtids)) return false;
  auto it = e.domains.begin();
  for (const GtidIndexDomain& d : prev.domains) {
    while (it != e.domains.end() && it->domain_id < d.domain_id) ++it;
    if (it == e.domains.end() || it->domain_id != d.domain_id ||
        it->max_seq_no < d.max_seq_no) {
      return false;
    }
  }
  return true;
}

absl::StatusOr<std::string> ReadRange(io::RandomAccessFile* f, uint64_t offset, size_t n) {
  std::string buf(n, '\0');
  size_t got = 0;
  BINLOG_RETURN_IF_ERROR(f->Read(offset, n, buf.data(), &got));
  if (got != n) {
    return absl::DataLossError(absl::StrCat(f->path(), ": short read at ", offset));
  }
  return buf;
}

// The CRC32 of the bytes [offset, offset + n) of `f`.
absl::StatusOr<uint32_t> CrcAt(io::RandomAccessFile* f, uint64_t offset, size_t n) {
  BINLOG_ASSIGN_OR_RETURN(std::string b, ReadRange(f, offset, n));
  return Crc32(b.data(), b.size());
}

}  // namespace

std::string GtidIndexPath(const std::string& binlog_path) {
  return binlog_path + ".gidx";
}

void SweepGtidIndexFiles(io::FileSystem* fs, const std::string& dir,
                         const std::string& basename,
                         const std::vector<std::string>& names,
                         const std::set<std::string>& binlog_names) {
  const std::string prefix = basename + ".";
  for (const std::string& name : names) {
    if (!absl::StartsWith(name, prefix)) continue;
    const size_t at = name.find(".gidx");
    if (at == std::string::npos) continue;
    const bool tmp = absl::StartsWith(absl::string_view(name).substr(at), ".gidx.tmp");
    const bool orphan = at + 5 == name.size() && binlog_names.count(name.substr(0, at)) == 0;
    if (tmp || orphan) fs->Remove(io::JoinPath(dir, name)).IgnoreError();
  }
}

absl::StatusOr<GtidIndex> BuildGtidIndex(io::FileSystem* fs, const std::string& path,
                                         LogFlavor flavor, uint64_t interval,
                                         const ReaderOptions& options,
                                         const std::atomic<bool>* cancel, uint64_t max_size) {
  if (interval == 0) return absl::InvalidArgumentError("GTID index interval 0");
  {
    // A file system that refuses the file an index (an encrypted file
    // through a decrypting one: binlog/keyring.h): none built either.
    absl::StatusOr<std::unique_ptr<io::RandomAccessFile>> probe =
        fs->OpenReadable(GtidIndexPath(path));
    if (absl::IsFailedPrecondition(probe.status())) return probe.status();
  }
  GtidIndex index;
  index.flavor = flavor;
  index.interval = interval;
  BINLOG_ASSIGN_OR_RETURN(index.file_size, fs->FileSize(path));
  ReaderOptions ro = options;
  // Checksums verified: a damaged event that still decodes must not put
  // a wrong GTID into an entry (a reader would jump over a transaction
  // the replica lacks). A DataLoss ends the entries before it.
  ro.checksum_mode = ChecksumMode::kVerify;
  ro.payloads = PayloadMode::kRaw;
  ro.start_file = 0;
  ro.start_offset = 0;
  BINLOG_ASSIGN_OR_RETURN(TransactionScan t, TransactionScan::Open(fs, path, ro));
  t.set_tolerate_unexpected(true);
  index.fde_end = t.header_end();
  const bool maria = flavor == LogFlavor::kMariaDB;

  // The GtidReader's state machine (binlog/gtid_reader.cc) run for a
  // replica that holds every GTID: `conditional` is its skipping_, true
  // from a GTID event to the end of its transaction; what it would return
  // even then goes to `pending`, the returned ranges of the next entry.
  TransactionBoundaryParser parser(t.format_description().PostHeaderLen(kQueryEvent));
  bool conditional = false;
  GtidSet gtids;
  std::map<uint32_t, GtidIndexDomain> domains;
  uint64_t transactions = 0;
  std::vector<std::pair<uint64_t, uint64_t>> pending = {{kMagicSize, t.header_end()}};
  uint64_t last_entry = kMagicSize;
  uint64_t encoded = kFileHeaderSize;  // the index's size so far
  bool in_header = true;
  bool cancelled = false;
  bool encrypted = false;
  using R = TransactionBoundaryParser::Result;
  absl::Status s = t.Run(
      [&](const Event& ev) -> R {
        if (ev.header.type == kFormatDescriptionEvent) return R::kOutside;
        return parser.Feed(ev.header, ev.body());
      },
      [&](const Event& ev, R r) -> absl::StatusOr<ScanNext> {
        if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) {
          cancelled = true;
          return ScanNext::kStop;
        }
        const uint8_t type = ev.header.type;
        // A later Format_description (a relay log's source) changes how
        // events parse: no entries past it.
        if (type == kFormatDescriptionEvent) return ScanNext::kStop;
        // An encrypted MariaDB file: its GTIDs stay out of a file in clear.
        if (type == kMariaStartEncryptionEvent) {
          encrypted = true;
          return ScanNext::kStop;
        }
        if (in_header && !maria && type == kPreviousGtidsEvent) {
          auto prev = GtidSet::DecodePreviousGtidsBody(ev.body());
          if (prev.ok()) gtids.Union(*prev);
        }
        if (r != R::kOutside) in_header = false;
        // The event's GTID, when it is a GTID event of the flavor that
        // decodes (MySQL: gno 0 is no GTID).
        absl::StatusOr<MySqlGtidEvent> my = absl::UnknownError("");
        absl::StatusOr<MariaGtid> mg = absl::UnknownError("");
        if (!maria && (type == kGtidEvent || type == kGtidTaggedEvent)) {
          my = DecodeAnyMySqlGtidEvent(type, ev.body());
          if (my.ok() && my->gno <= 0) my = absl::UnknownError("");
        } else if (maria && type == kMariaGtidEvent) {
          mg = DecodeMariaGtid(ev.body());
        }
        // An entry here, before this event: a transaction with a GTID
        // starts (kStarted: none was open), and its GTID is not in the
        // state (what a reader checks before it jumps here: FORMAT.md).
        if ((my.ok() || mg.ok()) && r == R::kStarted && !conditional &&
            ev.offset >= last_entry + interval) {
          bool fresh;
          if (my.ok()) {
            fresh = !gtids.Contains(my->tsid(), my->gno);
          } else {
            auto d = domains.find(mg->domain_id);
            fresh = d == domains.end() || mg->seq_no > d->second.max_seq_no;
          }
          if (fresh) {
            GtidIndexEntry e;
            e.offset = ev.offset;
            e.gtid_transactions = transactions;
            e.returned = std::move(pending);
            pending.clear();
            if (maria) {
              for (const auto& d : domains) e.domains.push_back(d.second);
            } else {
              e.gtids = gtids;
            }
            encoded += kRecordHeaderSize + EncodeEntry(e, flavor).size();
            // The shared limit: no entry the readers would refuse.
            if (encoded > max_size) return ScanNext::kStop;
            index.entries.push_back(std::move(e));
            last_entry = ev.offset;
          }
        }
        if (my.ok()) {
          conditional = true;
          gtids.Add(my->tsid(), my->gno);
          ++transactions;
        } else if (mg.ok()) {
          conditional = true;
          ++transactions;
          auto [it, fresh] = domains.try_emplace(mg->domain_id);
          GtidIndexDomain& d = it->second;
          d.domain_id = mg->domain_id;
          d.last_is_new_max = fresh || mg->seq_no > d.max_seq_no;
          d.max_seq_no = fresh ? mg->seq_no : std::max(d.max_seq_no, mg->seq_no);
          d.last_server_id = ev.header.server_id;
          d.last_seq_no = mg->seq_no;
        } else if ((!maria && (type == kGtidEvent || type == kGtidTaggedEvent)) ||
                   (maria && type == kMariaGtidEvent)) {
          conditional = false;  // no GTID to skip by: every replica gets it
        }
        if (!conditional) {
          if (!pending.empty() && pending.back().second == ev.offset) {
            pending.back().second = ev.end_offset;
          } else {
            pending.emplace_back(ev.offset, ev.end_offset);
          }
          if (pending.size() > kMaxRanges) return ScanNext::kStop;
        }
        if (r == R::kEnded || r == R::kOutside || r == R::kUnexpected) conditional = false;
        return ScanNext::kContinue;
      });
  // The entries so far stand: each ends before the damage, so a reader
  // that jumps to one still reads the damaged event (and reports it).
  if (!s.ok() && !absl::IsDataLoss(s)) return s;
  if (cancelled) return absl::CancelledError("GTID index build cancelled");
  if (encrypted) {
    return absl::FailedPreconditionError(path + ": encrypted: no GTID index");
  }
  t.Close();
  // The header CRC of each entry and the file's identity, from the bytes
  // on disk (what a reader checks).
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::RandomAccessFile> f, fs->OpenReadable(path));
  BINLOG_ASSIGN_OR_RETURN(index.fde_crc, CrcAt(f.get(), 0, index.fde_end));
  for (GtidIndexEntry& e : index.entries) {
    BINLOG_ASSIGN_OR_RETURN(e.header_crc, CrcAt(f.get(), e.offset, kHeaderSize));
  }
  return index;
}

std::string EncodeGtidIndex(const GtidIndex& index) {
  std::string out(kMagic, sizeof(kMagic));
  Put32(&out, index.flavor == LogFlavor::kMariaDB ? 1 : 0);
  Put32(&out, index.fde_crc);
  Put64(&out, index.interval);
  Put64(&out, index.file_size);
  Put64(&out, index.fde_end);
  // Each record's CRC continues the one before it (the header's first):
  // records of two indexes spliced together do not check out.
  uint32_t chain = Crc32(out.data(), out.size());
  Put32(&out, chain);
  for (const GtidIndexEntry& e : index.entries) {
    std::string p = EncodeEntry(e, index.flavor);
    Put32(&out, static_cast<uint32_t>(p.size()));
    chain = Crc32Extend(chain, p.data(), p.size());
    Put32(&out, chain);
    out += p;
  }
  return out;
}

absl::StatusOr<GtidIndex> DecodeGtidIndex(absl::string_view data) {
  if (data.size() < kFileHeaderSize ||
      data.substr(0, sizeof(kMagic)) != absl::string_view(kMagic, sizeof(kMagic))) {
    const int version = FormatVersion(data);
    if (version >= 0 && version != kVersion) {
      return absl::DataLossError(absl::StrCat("a GTID index of format version ", version,
                                              " (this library writes and reads version ",
                                              kVersion, ")"));
    }
    return absl::DataLossError("not a GTID index file");
  }
  if (data.size() > kMaxGtidIndexSize) {
    return absl::DataLossError(absl::StrCat("GTID index of ", data.size(), " bytes (at most ",
                                            kMaxGtidIndexSize, ")"));
  }
  Cursor c{data};
  c.Bytes(sizeof(kMagic));
  GtidIndex index;
  const uint64_t flavor = c.Get(4);
  index.fde_crc = static_cast<uint32_t>(c.Get(4));
  index.interval = c.Get(8);
  index.file_size = c.Get(8);
  index.fde_end = c.Get(8);
  const uint32_t crc = static_cast<uint32_t>(c.Get(4));
  if (crc != Crc32(data.data(), kFileHeaderSize - 4) || flavor > 1 ||
      index.fde_end > index.file_size || index.fde_end <= kMagicSize) {
    return absl::DataLossError("GTID index header does not check out");
  }
  // A reader reads the bytes [0, fde_end) to check them: a header naming a
  // Format_description no reader accepts is refused before that.
  if (index.fde_end - kMagicSize > kMaxFormatDescriptionSize) {
    return absl::DataLossError(absl::StrCat("GTID index names a Format_description of ",
                                            index.fde_end - kMagicSize, " bytes (at most ",
                                            kMaxFormatDescriptionSize, ")"));
  }
  index.flavor = flavor == 1 ? LogFlavor::kMariaDB : LogFlavor::kMySQL;
  uint64_t prev = kMagicSize;
  uint32_t chain = crc;
  // A torn or damaged record ends the entries: the ones before it stand.
  while (c.in.size() >= 8) {
    const uint32_t len = static_cast<uint32_t>(c.Get(4));
    const uint32_t rcrc = static_cast<uint32_t>(c.Get(4));
    if (len > c.in.size()) break;
    absl::string_view p = c.Bytes(len);
    if (Crc32Extend(chain, p.data(), p.size()) != rcrc) break;
    chain = rcrc;
    GtidIndexEntry e;
    if (!DecodeEntry(p, index.flavor, prev, index.file_size, &e)) break;
    if (!index.entries.empty() && !GrowsFrom(index.entries.back(), e)) break;
    if (index.entries.empty() &&
        (e.returned.empty() || e.returned.front().first != kMagicSize)) {
      break;  // the Format_description is always returned first
    }
    prev = e.offset;
    index.entries.push_back(std::move(e));
  }
  return index;
}

absl::Status WriteGtidIndex(io::FileSystem* fs, const std::string& path,
                            const GtidIndex& index) {
  const std::string final_path = GtidIndexPath(path);
  const std::string data = EncodeGtidIndex(index);
  // A name of this writer's own, created exclusively: writers of the same
  // index (the builder, readers, other processes) never write into each
  // other's temporary file.
  std::string tmp;
  {
    // The binlog file's own permissions (Options::file_mode).
    absl::StatusOr<uint32_t> mode = fs->Permissions(path);
    std::unique_ptr<io::WritableFile> f;
    for (int attempt = 0; f == nullptr; ++attempt) {
      tmp = absl::StrCat(final_path, kTmpSuffix, absl::Hex(UniqueTag(), absl::kZeroPad16));
      absl::StatusOr<std::unique_ptr<io::WritableFile>> o =
          fs->OpenWritable(tmp, io::OpenMode::kCreateNew,
                           mode.ok() ? *mode : io::kDefaultFilePermissions);
      if (o.ok()) {
        f = std::move(*o);
      } else if (!absl::IsAlreadyExists(o.status()) || attempt >= 8) {
        return o.status();
      }
    }
    absl::Status s = f->Write(0, data);
    absl::Status c = f->Close();
    if (s.ok()) s = c;
    if (!s.ok()) {
      fs->Remove(tmp).IgnoreError();
      return s;
    }
  }
  absl::Status r = fs->Rename(tmp, final_path);
  if (!r.ok()) fs->Remove(tmp).IgnoreError();
  // Swept meanwhile (Open removes leftover temporary files): a cache.
  if (absl::IsNotFound(r)) return absl::OkStatus();
  return r;
}

absl::StatusOr<GtidIndex> LoadGtidIndex(io::FileSystem* fs, const std::string& path,
                                        LogFlavor flavor) {
  const std::string ipath = GtidIndexPath(path);
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::RandomAccessFile> f, fs->OpenReadable(ipath));
  BINLOG_ASSIGN_OR_RETURN(uint64_t size, f->Size());
  if (size > kMaxGtidIndexSize) {
    return absl::DataLossError(absl::StrCat(ipath, ": ", size, " bytes (at most ",
                                            kMaxGtidIndexSize, ")"));
  }
  BINLOG_ASSIGN_OR_RETURN(std::string data, ReadRange(f.get(), 0, size));
  absl::StatusOr<GtidIndex> index = DecodeGtidIndex(data);
  if (!index.ok()) return absl::DataLossError(absl::StrCat(ipath, ": ", index.status().message()));
  if (index->flavor != flavor) return absl::DataLossError(ipath + ": another flavor");
  BINLOG_ASSIGN_OR_RETURN(uint64_t file_size, fs->FileSize(path));
  if (file_size != index->file_size) {
    return absl::DataLossError(absl::StrCat(ipath, ": built for ", index->file_size,
                                            " bytes, the file has ", file_size));
  }
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::RandomAccessFile> b, fs->OpenReadable(path));
  BINLOG_ASSIGN_OR_RETURN(uint32_t fde_crc, CrcAt(b.get(), 0, index->fde_end));
  if (fde_crc != index->fde_crc) {
    return absl::DataLossError(ipath + ": built for another Format_description");
  }
  return index;
}

namespace {

std::string DomainsText(const std::vector<GtidIndexDomain>& domains) {
  std::string out;
  for (const GtidIndexDomain& d : domains) {
    absl::StrAppend(&out, out.empty() ? "" : ",", d.domain_id, "-", d.last_server_id, "-",
                    d.last_seq_no, " (highest ", d.max_seq_no,
                    d.last_is_new_max ? ", new" : "", ")");
  }
  return out.empty() ? "none" : out;
}

std::string RangesText(const std::vector<std::pair<uint64_t, uint64_t>>& r) {
  std::string out;
  for (const auto& x : r) absl::StrAppend(&out, out.empty() ? "" : " ", "[", x.first, ",", x.second, ")");
  return out;
}

// What event starts at `offset` of `f`, for a message.
std::string EventThere(io::RandomAccessFile* f, uint64_t offset) {
  absl::StatusOr<std::string> h = ReadRange(f, offset, kHeaderSize);
  if (!h.ok()) return "no event";
  return absl::StrCat("a ", EventTypeName(DecodeHeader(*h).type), " event header");
}

// VerifyGtidIndex's checks of the index `data` of the binlog file `path`
// (of this library's format version): "" or the first discrepancy.
absl::StatusOr<std::string> IndexDiscrepancy(io::FileSystem* fs, const std::string& path,
                                             const ReaderOptions& options,
                                             absl::string_view data) {
  const std::string ipath = GtidIndexPath(path);
  LogFlavor flavor;
  std::unique_ptr<io::RandomAccessFile> bin;
  {
    ReaderOptions ro = options;
    ro.start_file = 0;
    ro.start_offset = 0;
    BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<Reader> r, Reader::OpenFiles({path}, ro, fs));
    Event ev;
    BINLOG_RETURN_IF_ERROR(r->Next(&ev));
    flavor = absl::StrContains(r->format_description().server_version, "MariaDB")
                 ? LogFlavor::kMariaDB
                 : LogFlavor::kMySQL;
    BINLOG_ASSIGN_OR_RETURN(bin, fs->OpenReadable(path));
  }
  absl::StatusOr<GtidIndex> stored = DecodeGtidIndex(data);
  if (!stored.ok()) return std::string(stored.status().message());
  const std::string canonical = EncodeGtidIndex(*stored);
  if (canonical.size() != data.size()) {
    return std::string(absl::StrCat(
        "record ", stored->entries.size(), " at byte ", canonical.size(),
        " does not check out (torn, damaged, out of order, MariaDB domains out of order or "
        "repeated, or a state that shrinks): readers "
        "ignore it and every record after it (", data.size() - canonical.size(),
        " bytes)"));
  }
  // The file's identity (size, Format_description, flavor): Load's checks.
  absl::StatusOr<GtidIndex> loaded = LoadGtidIndex(fs, path, flavor);
  if (!loaded.ok()) {
    absl::string_view m = loaded.status().message();
    if (absl::StartsWith(m, ipath + ": ")) m.remove_prefix(ipath.size() + 2);
    if (!absl::IsDataLoss(loaded.status())) return loaded.status();  // I/O
    return std::string(m);
  }
  if (stored->interval == 0) return std::string("interval 0");
  absl::StatusOr<GtidIndex> scan =
      BuildGtidIndex(fs, path, flavor, stored->interval, options);
  if (absl::IsFailedPrecondition(scan.status())) {
    return absl::StrCat("the file gets no GTID index (", scan.status().message(),
                        "): this one holds its GTID states in clear");
  }
  if (!scan.ok()) return scan.status();
  const auto& se = stored->entries;
  const auto& we = scan->entries;
  for (size_t i = 0; i < se.size(); ++i) {
    const std::string at = absl::StrCat("entry ", i, " at offset ", se[i].offset, ": ");
    if (i >= we.size() || we[i].offset != se[i].offset) {
      return std::string(absl::StrCat(
          at, EventThere(bin.get(), se[i].offset), "; a scan of the file puts ",
          i >= we.size() ? absl::StrCat("no entry ", i, " (", we.size(), " entries)")
                         : absl::StrCat("entry ", i, " at ", we[i].offset),
          " (entries sit at GTID events that start a transaction)"));
    }
    if (se[i].header_crc != we[i].header_crc) {
      return std::string(absl::StrCat(at, "the header CRC is not the event's"));
    }
    if (!(se[i].gtids == we[i].gtids)) {
      return std::string(absl::StrCat(at, "GTID state ", se[i].gtids.ToString(),
                                              ", a scan of the file has ",
                                              we[i].gtids.ToString()));
    }
    bool same_domains = se[i].domains.size() == we[i].domains.size();
    for (size_t k = 0; same_domains && k < se[i].domains.size(); ++k) {
      const GtidIndexDomain& a = se[i].domains[k];
      const GtidIndexDomain& b = we[i].domains[k];
      same_domains = a.domain_id == b.domain_id && a.last_server_id == b.last_server_id &&
                     a.last_seq_no == b.last_seq_no && a.max_seq_no == b.max_seq_no &&
                     a.last_is_new_max == b.last_is_new_max;
    }
    if (!same_domains) {
      return std::string(absl::StrCat(at, "GTID state ", DomainsText(se[i].domains),
                                              ", a scan of the file has ",
                                              DomainsText(we[i].domains)));
    }
    if (se[i].gtid_transactions != we[i].gtid_transactions) {
      return std::string(absl::StrCat(at, se[i].gtid_transactions,
                                              " GTID transactions before it, a scan of the "
                                              "file has ", we[i].gtid_transactions));
    }
    if (se[i].returned != we[i].returned) {
      return std::string(absl::StrCat(at, "returned ranges ",
                                              RangesText(se[i].returned),
                                              ", a scan of the file has ",
                                              RangesText(we[i].returned)));
    }
  }
  if (se.size() != we.size()) {
    return std::string(absl::StrCat(se.size(), " entries, a scan of the file has ",
                                            we.size()));
  }
  return std::string();
}

}  // namespace

absl::StatusOr<GtidIndexCheck> VerifyGtidIndex(io::FileSystem* fs, const std::string& path,
                                               const ReaderOptions& options) {
  using Verdict = GtidIndexCheck::Verdict;
  std::string data;
  {
    BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::RandomAccessFile> f,
                            fs->OpenReadable(GtidIndexPath(path)));
    BINLOG_ASSIGN_OR_RETURN(uint64_t size, f->Size());
    if (size > kMaxGtidIndexSize) {
      return GtidIndexCheck{Verdict::kBad,
                            absl::StrCat(size, " bytes (at most ", kMaxGtidIndexSize, ")")};
    }
    BINLOG_ASSIGN_OR_RETURN(data, ReadRange(f.get(), 0, size));
  }
  // What a library before this format version wrote: readers refuse it as
  // another format and rebuild it, as a missing one.
  const int version = FormatVersion(data);
  if (version >= 0 && version < kVersion) {
    return GtidIndexCheck{Verdict::kOlderVersion,
                          absl::StrCat("format version ", version,
                                       " (this library writes version ", kVersion, ")")};
  }
  BINLOG_ASSIGN_OR_RETURN(std::string what, IndexDiscrepancy(fs, path, options, data));
  if (what.empty()) return GtidIndexCheck{};
  return GtidIndexCheck{Verdict::kBad, std::move(what)};
}

absl::Status RemoveGtidIndex(io::FileSystem* fs, const std::string& path) {
  for (const std::string& p : {GtidIndexPath(path), GtidIndexPath(path) + ".tmp"}) {
    absl::Status r = fs->Remove(p);
    if (!r.ok() && !absl::IsNotFound(r)) return r;
  }
  return absl::OkStatus();
}

namespace {

GtidSeek SeekTo(const GtidIndex& index, size_t i) {
  GtidSeek s;
  for (size_t k = 0; k <= i; ++k) {
    for (const auto& r : index.entries[k].returned) {
      if (!s.returned.empty() && s.returned.back().second == r.first) {
        s.returned.back().second = r.second;
      } else {
        s.returned.push_back(r);
      }
    }
  }
  s.offset = index.entries[i].offset;
  s.skipped = index.entries[i].gtid_transactions;
  return s;
}

}  // namespace

GtidSeek FindGtidSeek(const GtidIndex& index, const GtidSet& have) {
  for (size_t i = index.entries.size(); i-- > 0;) {
    if (index.entries[i].gtids.IsSubsetOf(have)) return SeekTo(index, i);
  }
  return GtidSeek();
}

GtidSeek FindMariaGtidSeek(const GtidIndex& index, const MariaGtidState& position) {
  for (size_t i = index.entries.size(); i-- > 0;) {
    std::set<uint32_t> reached;
    bool usable = true;
    for (const GtidIndexDomain& d : index.entries[i].domains) {
      MariaGtidListEntry at;
      if (!position.Position(d.domain_id, &at)) {
        usable = false;  // a domain the replica lacks is sent whole
      } else if (d.max_seq_no < at.seq_no) {
        // every transaction of the domain skipped, the replica's own not met
      } else if (d.max_seq_no == at.seq_no && d.last_is_new_max &&
                 d.last_seq_no == at.seq_no && d.last_server_id == at.server_id) {
        reached.insert(d.domain_id);  // its own GTID the last one skipped
      } else {
        usable = false;
      }
      if (!usable) break;
    }
    if (usable) {
      GtidSeek s = SeekTo(index, i);
      s.reached = std::move(reached);
      return s;
    }
  }
  return GtidSeek();
}

namespace {

// A GTID event is under 200 bytes (MySQL's tagged one with a 32-character
// tag, MariaDB's with an XA XID); a header that claims more at a place
// where the index says a GTID event starts is not one.
constexpr uint32_t kMaxGtidEventSize = 1024;

// What the checks before a jump read of the binlog file.
struct JumpCheck {
  io::RandomAccessFile* f;
  LogFlavor flavor;
  FormatDescription fde;
};

// The event at `offset` when it is whole, at most `max` bytes, with a
// checksum that matches (when the file has them) and its end as log_pos
// (or 0; a relay log's events carry the source's).
absl::StatusOr<std::string> EventAt(const JumpCheck& c, uint64_t offset, uint64_t max) {
  BINLOG_ASSIGN_OR_RETURN(std::string h, ReadRange(c.f, offset, kHeaderSize));
  const EventHeader eh = DecodeHeader(h);
  if (eh.event_size < kHeaderSize || eh.event_size > max ||
      (!c.fde.relay_log && eh.log_pos != 0 && eh.log_pos != offset + eh.event_size)) {
    return absl::DataLossError("no event there");
  }
  return h;
}

// The GTID of the GTID event (of the index's flavor) at `offset`:
// NotFound when no such event starts there.
struct AnyGtid {
  bool maria = false;
  MySqlGtidEvent my;
  MariaGtid mg;
};
absl::StatusOr<AnyGtid> GtidAt(const JumpCheck& c, uint64_t offset) {
  const bool maria = c.flavor == LogFlavor::kMariaDB;
  BINLOG_ASSIGN_OR_RETURN(std::string h, EventAt(c, offset, kMaxGtidEventSize));
  const EventHeader eh = DecodeHeader(h);
  if (maria ? eh.type != kMariaGtidEvent
            : (eh.type != kGtidEvent && eh.type != kGtidTaggedEvent)) {
    return absl::NotFoundError("no GTID event there");
  }
  BINLOG_ASSIGN_OR_RETURN(std::string ev, ReadRange(c.f, offset, eh.event_size));
  if (c.fde.has_checksums() && !EventChecksumMatches(ev)) {
    return absl::NotFoundError("checksum mismatch");
  }
  const absl::string_view body = EventBody(ev, c.fde.has_checksums());
  AnyGtid g;
  g.maria = maria;
  if (maria) {
    BINLOG_ASSIGN_OR_RETURN(g.mg, DecodeMariaGtid(body));
  } else {
    BINLOG_ASSIGN_OR_RETURN(g.my, DecodeAnyMySqlGtidEvent(eh.type, body));
    if (g.my.gno <= 0) return absl::NotFoundError("GTID with gno 0");
  }
  return g;
}

// Whether entry `e`'s state holds `g` (MariaDB: its domain is there and
// its seq_no is not above the domain's highest). The domains are sorted
// by domain_id (DecodeEntry): a binary search.
bool StateHolds(const GtidIndexEntry& e, const AnyGtid& g) {
  if (!g.maria) return e.gtids.Contains(g.my.tsid(), g.my.gno);
  auto it = std::lower_bound(
      e.domains.begin(), e.domains.end(), g.mg.domain_id,
      [](const GtidIndexDomain& d, uint32_t id) { return d.domain_id < id; });
  return it != e.domains.end() && it->domain_id == g.mg.domain_id &&
         g.mg.seq_no <= it->max_seq_no;
}

// True when an event that belongs to no open transaction may start at
// `offset`, where a returned range begins: a transaction's first event
// or a file-level event.
bool StartsOutside(const JumpCheck& c, uint64_t offset) {
  absl::StatusOr<std::string> h = EventAt(c, offset, kMaxEventSize);
  if (!h.ok()) return false;
  switch (DecodeHeader(*h).type) {
    case kGtidEvent:
    case kGtidTaggedEvent:
    case kAnonymousGtidEvent:
    case kMariaGtidEvent:
    case kPreviousGtidsEvent:
    case kMariaGtidListEvent:
    case kMariaBinlogCheckpointEvent:
    case kRotateEvent:
    case kStopEvent:
    case kIncidentEvent:
      return true;
    default:
      return false;
  }
}

// The checks before a reader jumps by `s` (FORMAT.md "GTID index files",
// Checks): an index is a cache whose CRCs catch damage, not a forgery, so
// each jump is checked against the binlog file. Every gap jumped over
// begins with a GTID event that the entry's state holds; every range
// after a gap begins with an event outside any transaction; at the entry
// (where the reader goes on with the entry's state) the 19 bytes have the
// recorded CRC and a GTID event starts whose GTID the state does not hold
// (it comes after the state: an entry moved back over transactions, or a
// state of a later point, fails this).
bool SeekChecksOut(io::FileSystem* fs, const std::string& path, const GtidIndex& index,
                   const GtidSeek& s) {
  const GtidIndexEntry* entry = nullptr;
  for (const GtidIndexEntry& e : index.entries) {
    if (e.offset == s.offset) entry = &e;
  }
  if (entry == nullptr || s.returned.empty()) return false;
  auto f = fs->OpenReadable(path);
  if (!f.ok()) return false;
  JumpCheck c{f->get(), index.flavor, {}};
  {
    auto fde = ReadRange(c.f, kMagicSize, index.fde_end - kMagicSize);
    if (!fde.ok()) return false;
    auto fd = DecodeFormatDescription(*fde);
    if (!fd.ok()) return false;
    c.fde = std::move(*fd);
  }
  auto crc = CrcAt(c.f, s.offset, kHeaderSize);
  if (!crc.ok() || *crc != entry->header_crc) return false;
  absl::StatusOr<AnyGtid> at = GtidAt(c, s.offset);
  if (!at.ok() || StateHolds(*entry, *at)) return false;
  const auto& r = s.returned;
  for (size_t i = 0; i < r.size(); ++i) {
    const uint64_t from = r[i].second;
    const uint64_t to = i + 1 < r.size() ? r[i + 1].first : s.offset;
    if (from == to) continue;
    absl::StatusOr<AnyGtid> skipped = GtidAt(c, from);
    if (!skipped.ok() || !StateHolds(*entry, *skipped)) return false;
    if (i + 1 < r.size() && !StartsOutside(c, to)) return false;
  }
  return true;
}

}  // namespace

namespace {

// Fewer, cheaper jumps: a jump opens a reader (at rest: lists the
// directory too) and reads at least a buffer, so a gap between returned
// ranges shorter than `buffer_size` is read instead (the GTID reader skips
// its transactions as the full read does); of the rest, only the
// kMaxJumps largest are jumped over.
void MergeShortGaps(GtidSeek* s, uint64_t buffer_size) {
  auto& r = s->returned;
  if (r.size() < 2) return;
  std::vector<uint64_t> gaps;
  for (size_t i = 0; i + 1 < r.size(); ++i) {
    const uint64_t g = r[i + 1].first - r[i].second;
    if (g >= buffer_size) gaps.push_back(g);
  }
  uint64_t min_gap = buffer_size;
  if (gaps.size() > kMaxJumps) {
    std::nth_element(gaps.begin(), gaps.begin() + (kMaxJumps - 1), gaps.end(),
                     std::greater<uint64_t>());
    min_gap = std::max(min_gap, gaps[kMaxJumps - 1]);
  }
  std::vector<std::pair<uint64_t, uint64_t>> out;
  size_t kept = 0;
  for (const auto& range : r) {
    if (!out.empty()) {
      const uint64_t g = range.first - out.back().second;
      if (g < min_gap || kept >= kMaxJumps) {
        out.back().second = range.second;
        continue;
      }
      ++kept;
    }
    out.push_back(range);
  }
  r = std::move(out);
}

}  // namespace

GtidSeek PlanGtidSeek(io::FileSystem* fs, const std::string& path, bool closed,
                      LogFlavor flavor, const ReaderOptions& options, const GtidSet& have,
                      const MariaGtidState& position) {
  const uint64_t interval = options.gtid_index_interval;
  if (interval == 0) return GtidSeek();
  absl::StatusOr<GtidIndex> index = LoadGtidIndex(fs, path, flavor);
  bool built = false;
  for (;;) {
    if (!index.ok()) {
      // No index for this file, ever (an encrypted file through a
      // decrypting file system): nor a build.
      if (!closed || built || absl::IsFailedPrecondition(index.status())) return GtidSeek();
      index = BuildGtidIndex(fs, path, flavor, interval, options);
      if (!index.ok()) return GtidSeek();
      built = true;
      // A directory this process cannot write: the index serves this
      // reader only.
      WriteGtidIndex(fs, path, *index).IgnoreError();
    }
    GtidSeek s = flavor == LogFlavor::kMariaDB ? FindMariaGtidSeek(*index, position)
                                               : FindGtidSeek(*index, have);
    if (s.offset == 0) return s;
    // Checked as the reader will jump (the gaps read rather than jumped
    // over are read and checked event by event).
    MergeShortGaps(&s, options.buffer_size);
    if (SeekChecksOut(fs, path, *index, s)) return s;
    index = absl::DataLossError("the index does not match its file");
  }
}

GtidIndexBuilder::GtidIndexBuilder(io::FileSystem* fs, uint64_t interval,
                                   ReaderOptions options)
    : fs_(fs), interval_(interval), options_(std::move(options)) {}

absl::StatusOr<std::unique_ptr<GtidIndexBuilder>> GtidIndexBuilder::Start(
    io::FileSystem* fs, uint64_t interval, ReaderOptions options) {
  std::unique_ptr<GtidIndexBuilder> b(new GtidIndexBuilder(fs, interval, std::move(options)));
  // std::thread reports a failure to start as an exception: it stops here.
  try {
    b->thread_ = std::thread([raw = b.get()] { raw->Run(); });
  } catch (const std::system_error& e) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot start the GTID index builder's thread: ", e.what()));
  }
  return b;
}

void GtidIndexBuilder::Add(const std::string& path, LogFlavor flavor) {
  sync::MutexLock l(&mu_);
  if (stop_ || interval_ == 0) return;
  queue_.emplace_back(path, flavor);
  cv_.SignalAll();
}

void GtidIndexBuilder::Stop() {
  {
    sync::MutexLock l(&mu_);
    stop_ = true;
    queue_.clear();
    cv_.SignalAll();
  }
  cancel_.store(true, std::memory_order_relaxed);
  if (thread_.joinable()) thread_.join();
}

void GtidIndexBuilder::Cancel() {
  sync::MutexLock l(&mu_);
  queue_.clear();
  if (stop_) return;
  cancel_.store(true, std::memory_order_relaxed);
  while (busy_) cv_.Wait(&mu_);
  cancel_.store(false, std::memory_order_relaxed);
  cv_.SignalAll();
}

bool GtidIndexBuilder::WaitIdleFor(absl::Duration bound) {
  const absl::Time deadline = absl::Now() + bound;
  sync::MutexLock l(&mu_);
  while (!stop_ && (busy_ || !queue_.empty())) {
    if (cv_.WaitWithDeadline(&mu_, deadline)) break;
  }
  return stop_ || (!busy_ && queue_.empty());
}

void GtidIndexBuilder::Run() {
  for (;;) {
    std::string path;
    LogFlavor flavor;
    {
      sync::MutexLock l(&mu_);
      while (!stop_ && queue_.empty()) cv_.Wait(&mu_);
      if (stop_) return;
      path = std::move(queue_.front().first);
      flavor = queue_.front().second;
      queue_.pop_front();
      busy_ = true;
    }
    absl::StatusOr<GtidIndex> index =
        BuildGtidIndex(fs_, path, flavor, interval_, options_, &cancel_);
    absl::Status s = index.ok() ? WriteGtidIndex(fs_, path, *index) : index.status();
    if (s.ok()) {
      // Purged meanwhile: the index must not outlive its file.
      absl::StatusOr<bool> e = fs_->Exists(path);
      if (e.ok() && !*e) s = RemoveGtidIndex(fs_, path);
    }
    (s.ok() ? built_ : failed_).fetch_add(1, std::memory_order_relaxed);
    sync::MutexLock l(&mu_);
    busy_ = false;
    cv_.SignalAll();
  }
}

}  // namespace internal
}  // namespace binlog
