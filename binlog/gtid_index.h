// File: binlog/gtid_index.h (internal)
//
// The sparse GTID index of a closed binlog file: `<file>.gidx` beside
// `<file>` (format: binlog/FORMAT.md, "GTID index files"). It lets a GTID
// reader (binlog/gtid_reader.h) that picked its start file go straight to
// a point near the replica's position instead of reading and dropping every
// transaction from the file's start, with exactly the events the full scan
// returns.
//
// What an entry promises. Entries sit at GTID events that start a
// transaction (none open before them) and whose GTID the entry's state
// does not hold, about every `interval` bytes. Each holds:
//   - the entry's offset O and the CRC32 of the 19-byte event header there
//     (a reader checks it, and the GTID event there, before it jumps);
//   - the GTID state at O: for MySQL-flavor files the set of every GTID
//     before O in the log (the file's Previous_gtids plus the GTIDs of the
//     file's transactions before O); for MariaDB-flavor files, per domain
//     with transactions in the file before O, the last GTID there, the
//     highest seq_no, and whether that last GTID is a new highest one;
//   - the byte ranges before O (since the previous entry) that a GTID
//     reader returns whatever the replica holds: the Format_description and
//     the other file-level events (Previous_gtids, Gtid_list,
//     Binlog_checkpoint, ...), anonymous transactions, transactions whose
//     GTID cannot be read, events that fit no transaction;
//   - how many transactions before O carry a GTID (for
//     GtidReader::skipped_transactions).
// A reader may use an entry when every GTID transaction before O is one the
// full scan would skip (FindGtidSeek / FindMariaGtidSeek); it then returns
// the returned ranges and continues at O with the state the full scan would
// have there (no transaction open, MariaDB domains reached).
//
// A cache, never trusted past what checks out: a file whose header, its
// identity (the binlog file's size and its Format_description's bytes),
// size (kMaxGtidIndexSize) or first entry does not check out is not used;
// a damaged or torn tail ends the entries there. The CRCs catch damage,
// not a forgery (they are not keyed): before a reader jumps, the binlog
// file is read at each jump (PlanGtidSeek) and the index is corrupt when
// what is there does not match: at the entry, the recorded header CRC and
// a GTID event its state does not hold; where each gap jumped over
// begins, a GTID event the state holds; where it ends, an event outside
// any transaction. Nothing else of the file is compared: not the
// transactions inside a gap after its first, the entry's gtid_transactions,
// nor a MariaDB domain's last GTID and last_is_new_max. So an index crafted
// with a state that leaves out the GTID of a transaction inside a gap (or
// with a wrong last GTID or count) passes these checks and makes a reader
// skip, send or count what the full scan would not. Only VerifyGtidIndex
// (binlogtool verify), which compares every entry with a scan of the file,
// finds that; against it stands only the log directory's permissions
// (whoever can write the index can rewrite the binlog files beside it).
// Files are written whole under a temporary name and
// renamed (no fsync: after a power cut the checks above refuse whatever the
// rename left), so a crash between a binlog file and its index leaves either
// no index, a complete one, or one the checks refuse: a reader then scans
// the file as if there were none.
//
// Thread safety: the functions are thread-safe (they share no state; each
// writer writes a temporary file of its own, and each entry's CRC chains
// to the one before it, so no two writers' entries mix). GtidIndexBuilder
// is thread-safe.

#ifndef BINLOG_BINLOG_GTID_INDEX_H_
#define BINLOG_BINLOG_GTID_INDEX_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "binlog/flavor.h"
#include "binlog/gtid.h"
#include "binlog/gtid_reader.h"
#include "binlog/options.h"
#include "io/file_system.h"
#include "sync/mutex.h"

namespace binlog {
namespace internal {

// The index path of a binlog file: `binlog_path` + ".gidx".
std::string GtidIndexPath(const std::string& binlog_path);

// Largest GTID index file, for the builder and every reader alike (one
// limit: the builder stops adding entries before its index would pass it,
// so a reader never refuses an index the library wrote). A reader loads
// an index whole, so this bounds what one GTID reader allocates for it;
// a larger file, or a header naming a Format_description larger than
// kMaxFormatDescriptionSize (binlog/format.h), is refused as corrupt
// (DataLoss): rebuilt by a reader of a closed file, as a missing one.
// An index is a few KiB per 256 MiB of binlog at the default spacing;
// GTID sets of many UUIDs with holes make entries larger.
inline constexpr uint64_t kMaxGtidIndexSize = uint64_t{16} << 20;

// A MariaDB domain's transactions in a file before an entry.
struct GtidIndexDomain {
  uint32_t domain_id = 0;
  uint32_t last_server_id = 0;  // the last GTID of the domain
  uint64_t last_seq_no = 0;
  uint64_t max_seq_no = 0;      // the highest seq_no of the domain
  bool last_is_new_max = false;  // last_seq_no above every earlier one
};

struct GtidIndexEntry {
  uint64_t offset = 0;
  uint32_t header_crc = 0;  // CRC32 of the 19 bytes at `offset`
  uint64_t gtid_transactions = 0;  // transactions with a GTID before offset
  // Returned ranges [first, second) since the previous entry (the first
  // entry's begin with the Format_description at offset 4).
  std::vector<std::pair<uint64_t, uint64_t>> returned;
  GtidSet gtids;                        // MySQL flavor
  // MariaDB flavor, by strictly increasing domain_id.
  std::vector<GtidIndexDomain> domains;
};

struct GtidIndex {
  LogFlavor flavor = LogFlavor::kMySQL;
  uint64_t interval = 0;
  uint64_t file_size = 0;   // of the binlog file when the index was built
  uint64_t fde_end = 0;     // end of its Format_description event
  uint32_t fde_crc = 0;     // CRC32 of the file's bytes [0, fde_end)
  std::vector<GtidIndexEntry> entries;  // by offset
};

// Builds the index of the closed file `path` by reading it once (through
// `fs`, with `options`' keys; checksums are verified: a damaged event
// ends the entries before it). Entries at least `interval` bytes apart,
// each at a GTID event (a transaction start) whose GTID the entry's state
// does not hold; no entry that would take the encoded index past
// `max_size` (kMaxGtidIndexSize; smaller in tests). Stops early, with
// Cancelled, when `cancel` turns true. Errors: those of opening the file
// and of its Format_description; an interval of 0 is InvalidArgument.
absl::StatusOr<GtidIndex> BuildGtidIndex(io::FileSystem* fs, const std::string& path,
                                         LogFlavor flavor, uint64_t interval,
                                         const ReaderOptions& options,
                                         const std::atomic<bool>* cancel = nullptr,
                                         uint64_t max_size = kMaxGtidIndexSize);

// The file format (FORMAT.md). DecodeGtidIndex returns DataLoss when the
// header does not check out (also: `data` larger than kMaxGtidIndexSize,
// a Format_description end past kMagicSize + kMaxFormatDescriptionSize);
// entries end at the first one that does not (its CRC, its order,
// MariaDB domain ids not strictly increasing, a state that does not
// contain the one of the entry before it). Linear in the size of `data`.
std::string EncodeGtidIndex(const GtidIndex& index);
absl::StatusOr<GtidIndex> DecodeGtidIndex(absl::string_view data);

// Writes `index` as GtidIndexPath(path) (a temporary file of this call's
// own, `<index>.tmp.<unique hex>`, created exclusively, then a rename), with
// the binlog file's permissions. Concurrent writers of the same index
// never share a temporary file.
absl::Status WriteGtidIndex(io::FileSystem* fs, const std::string& path,
                            const GtidIndex& index);
// Reads GtidIndexPath(path) and checks it against the binlog file `path`
// (its size and Format_description bytes) and `flavor`. NotFound when
// there is none; DataLoss when it does not check out.
absl::StatusOr<GtidIndex> LoadGtidIndex(io::FileSystem* fs, const std::string& path,
                                        LogFlavor flavor);
// For binlogtool verify: checks the index beside the binlog file `path`
// strictly, against a scan of the file: the index file decodes whole
// (header, limits, every record with its chained CRC, nothing after the
// last), it is this file's (flavor read from the file's Format_description,
// size, Format_description bytes), and its entries are exactly those the
// builder writes for the file at the index's interval (each at a GTID
// event that starts a transaction, with that event's header CRC, the GTID
// state and GTID transaction count a scan has there, and the returned
// ranges). kOlderVersion for an index of an older format version (before
// the binlog file is read); kBad with the first discrepancy (an index of a
// file that gets none, an encrypted one, is one: it holds the file's GTID
// states in clear). Errors: NotFound without an index; the binlog file's
// (I/O, DataLoss or Unimplemented when its Format_description does not
// read); I/O errors reading the index.
absl::StatusOr<GtidIndexCheck> VerifyGtidIndex(io::FileSystem* fs, const std::string& path,
                                               const ReaderOptions& options);

// Removes, of the files `names` of `dir` (a listing), the GTID index
// files of `basename` no binlog file needs: temporary files (leftovers of
// a crash; a concurrent writer's rename then finds none and gives up, the
// index being a cache) and indexes whose binlog file is not in
// `binlog_names` (names the index file lists). Failures are ignored (the
// next sweep retries).
void SweepGtidIndexFiles(io::FileSystem* fs, const std::string& dir,
                         const std::string& basename,
                         const std::vector<std::string>& names,
                         const std::set<std::string>& binlog_names);
// Removes the index of `path` and its legacy temporary file, if any
// (NotFound is OK). For purge and Reset, before the binlog file (an index
// must never outlive its file: a later file of the same name, after a
// Reset, is not its file).
absl::Status RemoveGtidIndex(io::FileSystem* fs, const std::string& path);

// Where a GTID reader goes in its start file: it returns the events of
// `returned` (sorted, the first at offset 4), then continues at `offset`
// with MariaDB domains `reached` reached and `skipped` transactions
// skipped. offset 0: no seek (read the whole file).
struct GtidSeek {
  uint64_t offset = 0;
  std::vector<std::pair<uint64_t, uint64_t>> returned;
  std::set<uint32_t> reached;
  uint64_t skipped = 0;
};
// The last entry a MySQL replica holding `have` can use (every GTID before
// it in `have`); offset 0 if none.
GtidSeek FindGtidSeek(const GtidIndex& index, const GtidSet& have);
// The last entry a MariaDB replica at `position` can use: in each domain
// with transactions before it the replica has a position, and the full
// scan would skip each of them (all seq_nos below the position's, or the
// position's own GTID last and a new highest one: the domain is then
// reached). Offset 0 if none.
GtidSeek FindMariaGtidSeek(const GtidIndex& index, const MariaGtidState& position);

// What a GTID reader does for its start file `path`: loads its index, or,
// when `closed` (a file no one appends to), builds one (ReaderOptions::
// gtid_index_interval apart) when it is missing or does not check out and
// writes it back (a failed write is ignored: the built index serves this
// reader). Then finds the entry (FindGtidSeek with `have`, or
// FindMariaGtidSeek with `position` when `mariadb`) and checks each jump
// against the file (FORMAT.md, "GTID index files", Checks: the entry's
// header CRC; a GTID event at the entry that its state does not hold; a
// GTID event the state holds where each gap jumped over begins; an event
// outside any transaction where each range after a gap begins); when that
// fails the index is corrupt: rebuilt once (closed files) or not used.
// Never fails: without a usable entry the seek is offset 0 (read the file
// from its start, as without an index). Runs before the reader returns
// any event, so a refused index never takes back what was returned.
GtidSeek PlanGtidSeek(io::FileSystem* fs, const std::string& path, bool closed,
                      LogFlavor flavor, const ReaderOptions& options, const GtidSet& have,
                      const MariaGtidState& position);

// Gives `reader`, which reads file `file` from its first event, the jumps
// of `seek` (GtidReader::SetJumps): nothing when seek.offset is 0 or its
// ranges do not begin with the Format_description.
void ApplyGtidSeek(GtidReader* reader, uint64_t file, const GtidSeek& seek,
                   GtidReader::ReaderOpener open);

// GtidIndexBuilder: builds and writes the indexes of closed files in a
// thread of its own, off the commit path (Options::gtid_index_interval):
// Binlog after each rotation, MirrorLog when a copied file ends. Errors are
// counted, not reported (a missing index is rebuilt by the readers).
// Stop() (and the destructor) cancels the build under way and drops the
// queue.
class GtidIndexBuilder {
 public:
  // Starts the builder's thread (at the log's Open, never on the commit
  // path). ResourceExhausted when no thread can be started.
  static absl::StatusOr<std::unique_ptr<GtidIndexBuilder>> Start(io::FileSystem* fs,
                                                                 uint64_t interval,
                                                                 ReaderOptions options);
  ~GtidIndexBuilder() { Stop(); }
  GtidIndexBuilder(const GtidIndexBuilder&) = delete;
  GtidIndexBuilder& operator=(const GtidIndexBuilder&) = delete;

  // Queues the closed binlog file `path` of `flavor`. Never blocks on a
  // build, never fails (after Stop: ignored).
  void Add(const std::string& path, LogFlavor flavor);
  void Stop();
  // Drops the queue and cancels the build under way, waits until it has
  // stopped (a build checks for cancellation at every event), then takes
  // new files again. For Reset: no build of an old file's name may index
  // the new file that reuses it.
  void Cancel();
  // Waits until the queue is empty and no build runs, or `bound` passed;
  // true when idle.
  bool WaitIdleFor(absl::Duration bound);
  uint64_t built() const { return built_.load(std::memory_order_relaxed); }
  uint64_t failed() const { return failed_.load(std::memory_order_relaxed); }

 private:
  GtidIndexBuilder(io::FileSystem* fs, uint64_t interval, ReaderOptions options);
  void Run();

  io::FileSystem* const fs_;
  const uint64_t interval_;
  const ReaderOptions options_;
  sync::Mutex mu_;
  sync::CondVar cv_;
  std::deque<std::pair<std::string, LogFlavor>> queue_ ABSL_GUARDED_BY(mu_);
  bool busy_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<bool> cancel_{false};
  std::thread thread_;
  std::atomic<uint64_t> built_{0};
  std::atomic<uint64_t> failed_{0};
};

}  // namespace internal
}  // namespace binlog

#endif  // BINLOG_BINLOG_GTID_INDEX_H_
