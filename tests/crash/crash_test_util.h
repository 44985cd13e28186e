// Shared pieces of the crash tests (power loss, kill -9, I/O errors): the
// transactions they write and the oracle that checks a log after a crash.
//
// Transactions. Every transaction has a unique id; its shape is fixed
// (Anonymous_gtid, BEGIN, Rows_query with a text derived from the id, Xid
// carrying the id) and its size is a function of the id (TxnPayloadForId),
// so anything found in a log can be checked byte for byte against what the
// writer built, whether or not the writer lived to report it.
//
// The oracle (VerifyLog) reads a closed log at rest and reports every
// violation of the durability contract (binlog/log.h):
//   - each acknowledged transaction is present, at the position Commit
//     returned, byte-equal (when the bytes are known), exactly once;
//     missing is allowed only for files a PurgeTo asked to delete;
//   - every transaction in the log is complete and well-formed and is one
//     the writer built (unacknowledged in-flight ones may appear). Damaged
//     unacknowledged transactions are listed in VerifyResult::corrupted
//     for the caller to judge: without checksums some damage is invisible
//     to any reader (stale sectors persisted out of order, or an event
//     header persisted over preallocated zeros);
//   - no id appears twice; reader errors and torn tails (none in a correct
//     log) are returned for the caller to report. Files are read one by one
//     (the index names them), so damage in one hides nothing after it.
//
// Thread safety: functions are thread-safe; AckLog is thread-safe.

#ifndef BINLOG_TESTS_CRASH_CRASH_TEST_UTIL_H_
#define BINLOG_TESTS_CRASH_CRASH_TEST_UTIL_H_

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "binlog/format.h"
#include "binlog/index_file.h"
#include "binlog/log.h"
#include "binlog/reader.h"
#include "binlog/transaction.h"
#include "binlog/transaction_boundary.h"
#include "io/file_system.h"
#include "sync/mutex.h"
#include "tests/binlog/log_test_util.h"

namespace binlog {
namespace crash_test {

// A CommitPosition with only its place set.
// A fresh directory for one log under test, on tmpfs (/dev/shm) when it is
// writable: fsync costs nothing there, and the fault-injecting file
// system, not the device, decides what is durable. BINLOG_POWER_LOSS_TMPFS=0
// puts it under TEST_TMPDIR instead.
inline std::string NewLogDir(const std::string& prefix, const std::string& tag) {
  static std::atomic<int> counter{0};
  const char* tmpfs = std::getenv("BINLOG_POWER_LOSS_TMPFS");
  bool use_shm = (tmpfs == nullptr || std::string(tmpfs) != "0") &&
                 ::access("/dev/shm", W_OK) == 0;
  if (!use_shm) return testing_util::NewTempDir(tag);
  // /dev/shm is shared by every test process, and under Bazel's sandbox
  // each has a PID namespace (the same small pid), so the pid alone lets
  // two tests that run at once (power_loss_test and
  // power_loss_encrypted_test) use, and remove, each other's directories.
  static const uint32_t nonce = std::random_device()();
  std::string dir = absl::StrCat("/dev/shm/", prefix, "_", ::getpid(), "_",
                                 nonce, "_", tag, "_", counter++);
  std::string cmd = absl::StrCat("rm -rf '", dir, "' && mkdir -p '", dir, "'");
  if (std::system(cmd.c_str()) != 0) std::abort();
  return dir;
}

inline void RemoveDir(const std::string& dir) {
  std::string cmd = absl::StrCat("rm -rf '", dir, "'");
  if (std::system(cmd.c_str()) != 0) std::abort();
}

inline CommitPosition Position(uint64_t file, uint64_t start, uint64_t end) {
  CommitPosition p;
  p.file_number = file;
  p.start = start;
  p.end = end;
  return p;
}


// 20 bytes .. 20 KiB of Rows_query text, mostly small: 70% up to 500 B,
// 25% up to 4 KiB, 5% up to 20 KiB (binlog transactions are mostly small,
// a few carry large row images).
inline uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

inline size_t TxnPayloadForId(uint64_t id) {
  uint64_t h = Mix(id);
  uint64_t bucket = h % 100;
  uint64_t r = h >> 8;
  if (bucket < 70) return 20 + r % 481;
  if (bucket < 95) return 500 + r % 3597;
  return 4096 + r % (20480 - 4096 + 1);
}

inline void BuildTxn(TransactionBuffer* txn, uint64_t id) {
  testing_util::BuildTransaction(txn, id, TxnPayloadForId(id));
}

// A transaction the writer was told is durable.
struct AckedTxn {
  uint64_t id = 0;
  CommitPosition pos;
  std::string bytes;  // as written, compressed or not (empty: unknown, e.g.
                      // kill -9 reports)
};

// Acknowledgements collected from several threads.
class AckLog {
 public:
  void Add(AckedTxn t) {
    sync::MutexLock l(&mu_);
    acked_.push_back(std::move(t));
  }
  // Files below `target` may legitimately vanish (PurgeTo was asked).
  void PurgeRequested(uint64_t target) {
    sync::MutexLock l(&mu_);
    purge_floor_ = std::max(purge_floor_, target);
  }
  std::vector<AckedTxn> acked() const {
    sync::MutexLock l(&mu_);
    return acked_;
  }
  uint64_t purge_floor() const {
    sync::MutexLock l(&mu_);
    return purge_floor_;
  }
  size_t size() const {
    sync::MutexLock l(&mu_);
    return acked_.size();
  }
  void Clear() {
    sync::MutexLock l(&mu_);
    acked_.clear();
    purge_floor_ = 0;
  }

 private:
  mutable sync::Mutex mu_;
  std::vector<AckedTxn> acked_ ABSL_GUARDED_BY(mu_);
  uint64_t purge_floor_ ABSL_GUARDED_BY(mu_) = 0;
};

struct FoundTxn {
  uint64_t id = 0;
  uint64_t file = 0;
  uint64_t start = 0;
  uint64_t end = 0;
  std::string bytes;  // for damaged ones (VerifyResult::corrupted): what
                      // is wrong
  bool checksums = true;  // its file has event checksums
};

// What VerifyLog puts in FoundTxn::bytes for a transaction that its file's
// end cuts off.
inline constexpr char kEndsWithItsFile[] = "ends with its file";

struct ReadError {
  std::string file_name;
  uint64_t offset = 0;
  std::string message;
  bool in_use = false;  // the file's in-use flag
};

// The whole file as its readers see it: through `fs` (a decrypting file
// system for encrypted logs, binlog/keyring.h), or the raw bytes.
inline std::string ReadPlainFile(io::FileSystem* fs, const std::string& path) {
  if (fs == nullptr) return testing_util::ReadFile(path);
  auto f = fs->OpenReadable(path);
  if (!f.ok()) return std::string();
  auto size = (*f)->Size();
  if (!size.ok()) return std::string();
  std::string out(*size, '\0');
  size_t got = 0;
  if (!(*f)->Read(0, out.size(), &out[0], &got).ok()) return std::string();
  out.resize(got);
  return out;
}

// What a violation of VerifyLog is about.
enum class ViolationKind {
  kIndexUnreadable,   // the index cannot be read
  kFileUnopenable,    // a file the index names cannot be opened
  kUnexpectedEvent,   // an event outside a transaction that does not belong
  kDuplicate,         // a transaction appears twice
  kAckedDamaged,      // an acknowledged transaction is damaged
  kAckedMissing,      // an acknowledged transaction is not in the log
  kAckedMoved,        // an acknowledged transaction is at another position
  kAckedBytesDiffer,  // an acknowledged transaction's bytes differ
  kOrderBroken,       // the log order is not position order (oracle bug)
};

inline const char* ViolationKindName(ViolationKind k) {
  switch (k) {
    case ViolationKind::kIndexUnreadable: return "index-unreadable";
    case ViolationKind::kFileUnopenable: return "file-unopenable";
    case ViolationKind::kUnexpectedEvent: return "unexpected-event";
    case ViolationKind::kDuplicate: return "duplicate";
    case ViolationKind::kAckedDamaged: return "acked-damaged";
    case ViolationKind::kAckedMissing: return "acked-missing";
    case ViolationKind::kAckedMoved: return "acked-moved";
    case ViolationKind::kAckedBytesDiffer: return "acked-bytes-differ";
    case ViolationKind::kOrderBroken: return "order-broken";
  }
  return "?";
}

struct VerifyResult {
  // Phrased violations (the first 20) and the kind of each (same index).
  std::vector<std::string> violations;
  std::vector<ViolationKind> violation_kinds;
  // Ids of the acknowledged transactions missing (all of them, uncapped).
  std::vector<uint64_t> missing_acked;
  // Ids of the acknowledged transactions found intact at their position.
  std::vector<uint64_t> acked_present;
  std::vector<FoundTxn> found;  // in log order
  uint64_t acked_checked = 0;
  uint64_t acked_purged = 0;
  uint64_t unacked_found = 0;
  // Transactions that are not what the writer built (content differs,
  // events missing or out of shape, cut by the end of their file) and that
  // no acknowledgement covers (see VerifyLog). A correct log has none; the
  // caller decides about the cases no reader can detect.
  std::vector<FoundTxn> corrupted;
  // Torn tails the reader recorded (other than the allowed zeros): a
  // correct log has none; TornTailViolation() phrases one.
  std::vector<TornTail> torn_tails;
  // Reader errors (the file's events after the error are not checked): a
  // correct log has none; ReadErrorViolation() phrases one.
  std::vector<ReadError> read_errors;
};

inline std::string ReadErrorViolation(const ReadError& e) {
  return absl::StrCat("reader error in ", e.file_name, " at ", e.offset, ": ",
                      e.message, e.in_use ? "" : " (in-use flag clear)");
}

inline std::string TornTailViolation(const TornTail& t) {
  return absl::StrCat("torn tail in ", t.file_name, " at ", t.offset, ": ",
                      t.reason, t.zeros ? " (zeros)" : "",
                      t.in_use ? "" : " in a file whose in-use flag is clear");
}

// One event of a transaction being parsed by VerifyLog.
struct EventRefLite {
  uint8_t type = 0;
  uint64_t file = 0;
  uint64_t start = 0;
  uint64_t end = 0;
  std::string bytes;
  std::string body;
};

// The Rows_query body BuildTxn writes for `id` (position independent).
inline std::string ExpectedRowsQueryBody(uint64_t id, bool checksums) {
  TransactionBuffer t(checksums);
  BuildTxn(&t, id);
  absl::string_view ev =
      t.data().substr(t.event_offset(2), t.event_offset(3) - t.event_offset(2));
  return std::string(EventBody(ev, checksums));
}

// Reads the closed log `<dir>/<basename>.*` and checks it against `acked`.
// `allow_zero_tails`: zeros after a file's last event are expected (the
// log runs with Options::trim_preallocated off, which leaves the unused
// preallocated space after the Rotate or Stop event).
inline VerifyResult VerifyLog(const std::string& dir,
                              const std::string& basename,
                              const std::vector<AckedTxn>& acked,
                              uint64_t purge_floor,
                              bool allow_zero_tails = false,
                              io::FileSystem* fs = nullptr) {
  VerifyResult res;
  auto fail = [&](ViolationKind kind, std::string v) {
    if (res.violations.size() < 20) {
      res.violations.push_back(std::move(v));
      res.violation_kinds.push_back(kind);
    }
  };
  // File by file (transactions never span files), so damage in one file
  // does not hide the files after it.
  auto numbers = ReadIndex(io::FileSystem::Default(), dir, basename);
  if (!numbers.ok()) {
    fail(ViolationKind::kIndexUnreadable,
         absl::StrCat("cannot read the index: ", numbers.status().ToString()));
    return res;
  }
  std::map<uint64_t, size_t> by_id;  // id -> index in res.found
  const uint64_t first_file = numbers->empty() ? 0 : numbers->front();
  for (uint64_t number : *numbers) {
    const std::string name = BinlogFileName(basename, number);
    // The raw bytes, to compare acknowledged transactions as written
    // (compressed ones are read decoded, as Gtid + the inner events).
    const std::string raw = ReadPlainFile(fs, dir + "/" + name);
    auto reader = Reader::OpenFiles({dir + "/" + name}, ReaderOptions(), fs);
    if (!reader.ok()) {
      fail(ViolationKind::kFileUnopenable,
           absl::StrCat("cannot open ", name, ": ", reader.status().ToString()));
      continue;
    }
    std::vector<EventRefLite> cur;  // the transaction being parsed
    bool in_txn = false;
    bool file_checksums = true;
    for (;;) {
      Event ev;
      absl::Status s = (*reader)->Next(&ev);
      if (absl::IsOutOfRange(s)) break;
      if (!s.ok()) {
        res.read_errors.push_back(ReadError{
            name, (*reader)->position(), s.ToString(),
            (*reader)->format_description().in_use});
        break;
      }
      ev.file_number = number;
      file_checksums = (*reader)->format_description().has_checksums();
      const uint8_t type = ev.header.type;
      // Inner events of a Transaction_payload (compressed transaction) come
      // at the payload's position; the transaction ends at the payload's
      // end.
      if (!in_txn) {
        if (type == kAnonymousGtidEvent) {
          in_txn = true;
          cur.clear();
          cur.push_back({type, number, ev.offset, ev.end_offset,
                         std::string(ev.data), std::string(ev.body())});
          continue;
        }
        if (type == kFormatDescriptionEvent || type == kPreviousGtidsEvent ||
            type == kRotateEvent || type == kStopEvent) {
          continue;
        }
        fail(ViolationKind::kUnexpectedEvent,
             absl::StrCat("unexpected event type ", int{type},
                          " outside a transaction at ", name, ":", ev.offset));
        continue;
      }
      cur.push_back({type, number, ev.offset, ev.end_offset,
                     std::string(ev.data), std::string(ev.body())});
      if (cur.size() < 4) continue;
      in_txn = false;
      // Anonymous_gtid, Query (BEGIN), Rows_query, Xid.
      if (cur[1].type != kQueryEvent || cur[2].type != kRowsQueryEvent ||
          cur[3].type != kXidEvent || cur[3].body.size() < 8) {
        res.corrupted.push_back(FoundTxn{
            0, number, cur[0].start, cur[3].end,
            absl::StrCat("malformed (types ", int{cur[1].type}, ",",
                         int{cur[2].type}, ",", int{cur[3].type}, ")"),
            file_checksums});
        continue;
      }
      uint64_t id = 0;
      for (int i = 7; i >= 0; --i) {
        id = (id << 8) |
             static_cast<uint8_t>(cur[3].body[static_cast<size_t>(i)]);
      }
      std::string expected_rq = ExpectedRowsQueryBody(
          id, (*reader)->format_description().has_checksums());
      if (cur[2].body != expected_rq) {
        // Damaged inside (only possible without checksums): judged below.
        res.corrupted.push_back(FoundTxn{id, number, cur[0].start, cur[3].end,
                                         "Rows_query differs", file_checksums});
        continue;
      }
      FoundTxn f;
      f.id = id;
      f.file = number;
      f.start = cur[0].start;
      f.end = cur[3].end;
      if (f.end <= raw.size()) f.bytes = raw.substr(f.start, f.end - f.start);
      if (by_id.count(id)) {
        fail(ViolationKind::kDuplicate,
             absl::StrCat("transaction ", id, " appears twice (", f.file, ":",
                          f.start, " and ", res.found[by_id[id]].file, ":",
                          res.found[by_id[id]].start, ")"));
        continue;
      }
      by_id[id] = res.found.size();
      res.found.push_back(std::move(f));
    }
    if (in_txn) {
      res.corrupted.push_back(FoundTxn{0, number, cur.front().start,
                                       cur.back().end, kEndsWithItsFile,
                                       file_checksums});
    }
    for (const TornTail& t : (*reader)->torn_tails()) {
      if (allow_zero_tails) {
        std::string bytes = ReadPlainFile(fs, dir + "/" + name);
        if (t.offset <= bytes.size() &&
            bytes.find_first_not_of('\0', t.offset) == std::string::npos) {
          continue;  // unused preallocated space, by design
        }
      }
      res.torn_tails.push_back(t);
    }
  }
  std::map<uint64_t, const AckedTxn*> acked_ids;
  std::map<std::pair<uint64_t, uint64_t>, const AckedTxn*> acked_at;
  for (const AckedTxn& a : acked) {
    acked_ids[a.id] = &a;
    acked_at[{a.pos.file_number, a.pos.start}] = &a;
  }
  std::vector<FoundTxn> corrupted_unacked;
  for (const FoundTxn& c : res.corrupted) {
    auto it = acked_at.find({c.file, c.start});
    if (it != acked_at.end()) {
      fail(ViolationKind::kAckedDamaged,
           absl::StrCat("acknowledged transaction ", it->second->id, " at ",
                        c.file, ":", c.start, " is damaged"));
    } else {
      corrupted_unacked.push_back(c);
    }
  }
  res.corrupted = std::move(corrupted_unacked);
  for (const AckedTxn& a : acked) {
    auto it = by_id.find(a.id);
    if (it == by_id.end()) {
      if (a.pos.file_number < purge_floor &&
          (first_file == 0 || a.pos.file_number < first_file)) {
        ++res.acked_purged;  // its file was purged on request
        continue;
      }
      res.missing_acked.push_back(a.id);
      fail(ViolationKind::kAckedMissing,
           absl::StrCat("acknowledged transaction ", a.id, " at ",
                        a.pos.file_number, ":", a.pos.start, "-", a.pos.end,
                        " is missing"));
      continue;
    }
    const FoundTxn& f = res.found[it->second];
    ++res.acked_checked;
    if (f.file != a.pos.file_number || f.start != a.pos.start ||
        f.end != a.pos.end) {
      fail(ViolationKind::kAckedMoved,
           absl::StrCat("acknowledged transaction ", a.id, " at ",
                        a.pos.file_number, ":", a.pos.start, "-", a.pos.end,
                        " found at ", f.file, ":", f.start, "-", f.end));
      continue;
    }
    if (!a.bytes.empty() && a.bytes != f.bytes) {
      fail(ViolationKind::kAckedBytesDiffer,
           absl::StrCat("acknowledged transaction ", a.id,
                        " differs from the bytes written"));
      continue;
    }
    res.acked_present.push_back(a.id);
  }
  for (const FoundTxn& f : res.found) {
    if (!acked_ids.count(f.id)) ++res.unacked_found;
  }
  // Commit order: acknowledged transactions appear in the order of their
  // positions; with positions checked above, that is the log order. Check
  // that log order is position order (it is by construction of reading, so
  // this guards the oracle itself).
  for (size_t i = 1; i < res.found.size(); ++i) {
    const FoundTxn& a = res.found[i - 1];
    const FoundTxn& b = res.found[i];
    if (std::make_pair(a.file, a.start) >= std::make_pair(b.file, b.start)) {
      fail(ViolationKind::kOrderBroken,
           absl::StrCat("log order broken between ", a.id, " and ", b.id));
    }
  }
  return res;
}

// Whether a power cut explains `damaged` (an unacknowledged transaction in
// VerifyResult::corrupted, found in the file at `path`) so that no reader
// could have seen it: only in a file without checksums (with them a reader
// reports damage), and only when a cut tore or reordered sectors of that
// very file (`torn_files`: the paths the power-loss simulation reverted to
// a partial state). Never in a file no cut touched: all of it was synced
// (e.g. a cleanly closed file). A transaction the oracle's four-event
// parser sees cut off by its file's end is judged the same way: a torn
// BEGIN whose text persisted as zeros reads as a complete statement to
// the library's boundary parser, which recovery follows. A transaction the
// library's own parser sees open at the end of a file whose flag is clear
// is CheckClosedFilesEnd's to report, and nothing tolerates that.
inline bool DamageExplainedByLoss(const FoundTxn& damaged,
                                  const std::string& path,
                                  const std::set<std::string>& torn_files) {
  if (damaged.checksums) return false;
  return torn_files.count(path) != 0;
}

// Checks every file named `<basename>.NNNNNN` in `dir` (indexed or not),
// through the POSIX file system, at rest: a file whose in-use flag is clear
// claims a clean close, so it must read to its end without a reader error
// or torn tail, and must not end inside a transaction. `allow_zero_tails`:
// zeros after the last event are by design (the log ran with
// Options::trim_preallocated off). Files whose flag is set, and files with
// no readable Format_description (which then claim nothing), are skipped.
// Returns one line per file that breaks the rule; `clean_files` (if not
// null) counts the files whose flag was clear.
inline std::vector<std::string> CheckClosedFilesEnd(
    const std::string& dir, const std::string& basename,
    bool allow_zero_tails, int* clean_files = nullptr,
    io::FileSystem* fs = nullptr) {
  std::vector<std::string> out;
  auto names = io::FileSystem::Default()->ListDirectory(dir);
  if (!names.ok()) return {absl::StrCat("cannot list ", dir)};
  std::vector<std::pair<uint64_t, std::string>> files;
  for (const std::string& n : *names) {
    uint64_t number = 0;
    if (ParseBinlogFileName(basename, n, &number)) files.push_back({number, n});
  }
  std::sort(files.begin(), files.end());
  for (const auto& [number, name] : files) {
    const std::string path = dir + "/" + name;
    const std::string raw = ReadPlainFile(fs, path);
    if (raw.size() < kMagicSize ||
        raw.compare(0, kMagicSize, kBinlogMagic, kMagicSize) != 0) {
      continue;  // empty, zeros (a spare), or not a binlog: claims nothing
    }
    ReaderOptions ro;
    ro.payloads = PayloadMode::kRaw;  // a payload event ends its transaction
    auto reader = Reader::OpenFiles({path}, ro, fs);
    if (!reader.ok()) continue;
    Event ev;
    if (!(*reader)->Next(&ev).ok()) continue;  // no readable FDE
    const FormatDescription fde = (*reader)->format_description();
    if (fde.in_use) continue;
    if (clean_files != nullptr) ++*clean_files;
    TransactionBoundaryParser parser(fde.PostHeaderLen(kQueryEvent));
    bool open_txn = false;
    uint64_t last_end = ev.end_offset;
    uint8_t last_type = ev.header.type;
    absl::Status s;
    while ((s = (*reader)->Next(&ev)).ok()) {
      auto r = parser.Feed(ev.header, ev.body());
      open_txn = !(r == TransactionBoundaryParser::Result::kOutside ||
                   r == TransactionBoundaryParser::Result::kEnded);
      last_end = ev.end_offset;
      last_type = ev.header.type;
    }
    const std::string where =
        absl::StrCat(name, " (in-use flag clear, ", raw.size(), " bytes)");
    if (!absl::IsOutOfRange(s)) {
      out.push_back(absl::StrCat(where, ": reader error after offset ",
                                 last_end, ": ", s.ToString()));
      continue;
    }
    bool bad_tail = false;
    for (const TornTail& t : (*reader)->torn_tails()) {
      if (allow_zero_tails && t.offset <= raw.size() &&
          raw.find_first_not_of('\0', t.offset) == std::string::npos) {
        continue;  // unused preallocated space, by design
      }
      out.push_back(absl::StrCat(where, ": torn tail at ", t.offset, ": ",
                                 t.reason, t.zeros ? " (zeros)" : ""));
      bad_tail = true;
    }
    if (bad_tail) continue;
    if (open_txn) {
      out.push_back(absl::StrCat(where, ": ends inside a transaction (last ",
                                 "event type ", int{last_type}, " ends at ",
                                 last_end, ")"));
    }
  }
  return out;
}

}  // namespace crash_test
}  // namespace binlog

#endif  // BINLOG_TESTS_CRASH_CRASH_TEST_UTIL_H_
