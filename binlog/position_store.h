// File: binlog/position_store.h
//
// PositionStore: a replica's replication coordinates in one small,
// crash-safe file: the source (primary) binlog file and position, the relay
// log file and position, the executed GTID set as text, and any caller
// fields as key/value bytes.
//
// Why it exists: writing such a file field by field (one formatted write per
// field, per applied event) halved a public replica's throughput (22434 vs
// 11981 events/s). This store serializes ALL fields into one reusable buffer
// and writes them with one pwrite, and makes them durable every N updates or
// T milliseconds, not per event.
//
// On-disk layout (little-endian), file size 2 * slot_size, slot_size a
// multiple of 4096 so that a write to one slot never touches the other
// slot's pages:
//   slot 0 at offset 0, slot 1 at offset slot_size; each slot holds
//     magic      8 bytes  "BLPOSST1"
//     crc32      4        zlib CRC-32 (binlog/checksum.h) of the bytes from
//                         payload_len to the end of the payload
//     payload_len 4
//     sequence   8        1, 2, 3, ...: one per record written
//     slot_size  4        must equal the file's slot size
//     version    4        1
//     payload    payload_len bytes:
//       source_pos u64, relay_pos u64,
//       source_file, relay_file, executed_gtids: each u32 length + bytes,
//       field count u32, then per field: u32 key length + key,
//                                        u32 value length + value
//   Bytes after the payload are ignored (stale content of older records).
//
// Crash safety: alternating slots per sync epoch. The slot holding the last
// durable record (the "durable slot") is never written until the other slot
// has been synced: every write between two syncs goes to the other slot,
// and a successful sync makes that slot the durable one. So a power loss at
// any moment, tearing or dropping any unsynced write, leaves the durable
// slot intact, and Open() returns either the last durable record or a newer
// one that was completely written. (The alternative, write a new file then
// rename it over the old one, costs a file creation, a rename and a
// directory fsync per flush; benchmarks/position_store_bench.cc measures it
// against this design, numbers in benchmarks/README.md.) The file itself is
// created complete, both slots written out (write to "<path>.tmp",
// fdatasync, rename, directory fsync), so a crash during creation never
// leaves a half-made store at `path`.
//
// Opening picks the valid slot (magic, sizes, CRC and payload all check out)
// with the highest sequence number, and fdatasyncs the file before the
// first write, so that a record that reached the page cache but not the disk
// before a process crash becomes durable before the other slot is reused.
//
// Thread safety: thread-compatible: one thread (the replica's applier)
// uses a store; calls from several threads need external locking.
// Errors: the store never returns zeros or defaults for bad content:
//   DataLoss           a file whose size is not 2 * slot_size (truncated,
//                      extended), or in which neither slot holds a valid
//                      record; the message names the file and why each
//                      slot was rejected
//   NotFound           no store at `path` and create_if_missing is false
//   InvalidArgument    bad options; an Update whose record does not fit
//                      in a slot (the store is unchanged and stays usable)
//   FailedPrecondition after a failed write or fdatasync (the store is
//                      poisoned: every later call fails with the original
//                      error, nothing is retried; reopen to recover), or
//                      after Close()
//   other              I/O errors from the FileSystem
// Durability: see PositionStoreOptions. durable_sequence() tells which
// record is durable; Flush() makes the latest one durable now.
// Lifetime: options.file_system must outlive the store.

#ifndef BINLOG_BINLOG_POSITION_STORE_H_
#define BINLOG_BINLOG_POSITION_STORE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "io/file_system.h"

namespace binlog {

// The coordinates a replica stores. Reuse one object across updates: its
// strings and vector keep their capacity, so Update() copies bytes without
// allocating.
struct ReplicaPosition {
  std::string source_file;   // e.g. "binlog.000042" on the primary
  uint64_t source_pos = 0;
  std::string relay_file;    // e.g. "relay.000007"
  uint64_t relay_pos = 0;
  std::string executed_gtids;  // e.g. "3E11FA47-...:1-1042"
  // Caller fields (channel name, delay, worker count, ...), stored and
  // returned in this order.
  std::vector<std::pair<std::string, std::string>> fields;

  friend bool operator==(const ReplicaPosition& a, const ReplicaPosition& b) {
    return a.source_file == b.source_file && a.source_pos == b.source_pos &&
           a.relay_file == b.relay_file && a.relay_pos == b.relay_pos &&
           a.executed_gtids == b.executed_gtids && a.fields == b.fields;
  }
  friend bool operator!=(const ReplicaPosition& a, const ReplicaPosition& b) {
    return !(a == b);
  }
};

struct PositionStoreOptions {
  // File system to use; nullptr means io::FileSystem::Default() (POSIX).
  io::FileSystem* file_system = nullptr;

  // Create the store (with an empty record) if `path` does not exist.
  bool create_if_missing = true;

  // Permission bits (before the umask) of a new store: rw-r----- by
  // default, as MySQL's replication metadata files (a store holds
  // positions and GTID sets, not row data, but no reason for others to
  // read it).
  uint32_t file_mode = io::kDefaultFilePermissions;

  // Size of each of the two slots of a NEW store: a multiple of 4096,
  // 4096 .. 16 MiB. A record (32-byte header + payload) must fit in it.
  // An existing store keeps the slot size it was created with.
  uint32_t slot_size = 4096;

  // Durability. After an Update, the record is made durable (fdatasync) if
  // this many updates were written since the last sync, or if
  // sync_interval_ms have passed since the last sync. 1 (the default) makes
  // every update durable before Update returns (sync_relay_log_info=1).
  // With N > 1 up to N-1 updates, and with T > 0 up to T ms of updates
  // (checked at each Update: there is no background thread, so call Flush()
  // when the replica goes idle), can be lost on power loss. 0 disables the
  // respective trigger; both 0: durable only on Flush() and Close().
  uint32_t sync_every_updates = 1;
  uint32_t sync_interval_ms = 0;

  // When Update writes the record to the file:
  //   true  (default): every Update does one pwrite, so every update
  //         survives a process crash (the OS has it), and only the sync is
  //         batched.
  //   false: Update only serializes; the pwrite happens at the next sync
  //         point (one pwrite + one fdatasync per flush). A process crash
  //         then loses the updates since the last sync too.
  bool write_every_update = true;

  // Clock for sync_interval_ms, in microseconds; nullptr: CLOCK_MONOTONIC.
  std::function<int64_t()> now_micros;
};

class PositionStore {
 public:
  // Opens the store at `path` (creating it if missing and allowed) and
  // reads its newest valid record. See the file comment for errors.
  static absl::StatusOr<std::unique_ptr<PositionStore>> Open(
      const std::string& path, const PositionStoreOptions& options);

  // For another process than the store's writer (a relay whose retention
  // follows a consumer, server/copy_retention.h): the newest record of the
  // store at `path` that is certainly durable, read through `fs` (nullptr:
  // the default) from a file opened for reading only; nothing is created,
  // written or synced. With two valid records that is the older one: the
  // writer writes a slot only after the other one is synced, so the newer
  // one may not be durable yet (the writer's latest update shows once it
  // has made another). Errors: NotFound for a missing store; DataLoss as
  // Open; the file system's.
  static absl::StatusOr<ReplicaPosition> ReadDurable(const std::string& path,
                                                     io::FileSystem* fs = nullptr);

  // Closes the store if Close() was not called (errors are lost then; the
  // latest record is made durable on the way if possible).
  ~PositionStore();
  PositionStore(const PositionStore&) = delete;
  PositionStore& operator=(const PositionStore&) = delete;

  // Records `pos` as the current coordinates: serializes every field into
  // the store's reusable buffer (no allocation), writes it with one pwrite
  // (if write_every_update), and syncs when N updates or T ms are due.
  absl::Status Update(const ReplicaPosition& pos);

  // Makes the latest record durable now (one pwrite if not written yet, one
  // fdatasync). No-op if it already is.
  absl::Status Flush();

  // Flush(), then closes the file. Later calls fail with FailedPrecondition.
  absl::Status Close();

  // The record Open() found (the newest valid one). Allocates; meant for
  // start-up, not the applier's loop.
  const ReplicaPosition& recovered() const { return recovered_; }

  // Sequence number of the latest record (written or pending) and of the
  // latest durable one. Open() starts both at the recovered record's.
  uint64_t sequence() const { return seq_; }
  uint64_t durable_sequence() const { return durable_seq_; }

  // Why Open() rejected a slot ("" if both were valid). For logs: a torn
  // slot after a crash is expected and not an error.
  const std::string& open_note() const { return open_note_; }

  struct Stats {
    uint64_t updates = 0;
    uint64_t writes = 0;  // pwrites of a record
    uint64_t syncs = 0;   // fdatasyncs
  };
  const Stats& stats() const { return stats_; }

  const std::string& path() const { return path_; }
  uint32_t slot_size() const { return slot_size_; }

  // The serialized size of `pos` with its slot header: what must fit in
  // slot_size.
  static size_t RecordSize(const ReplicaPosition& pos);

 private:
  PositionStore(std::string path, const PositionStoreOptions& options);
  absl::Status OpenImpl();
  absl::Status Create();
  absl::Status WritePending();
  absl::Status SyncNow();
  absl::Status Poison(absl::Status s);
  absl::Status CheckUsable() const;
  size_t Serialize(const ReplicaPosition& pos, uint64_t seq);
  int64_t NowMicros() const;

  const std::string path_;
  PositionStoreOptions options_;
  io::FileSystem* fs_;
  std::unique_ptr<io::WritableFile> file_;
  uint32_t slot_size_ = 0;

  // The record buffer: one slot, allocated at Open, reused by every Update.
  std::string buf_;
  size_t buf_len_ = 0;       // bytes of the pending record in buf_
  bool pending_write_ = false;  // buf_ holds a record not yet written

  int durable_slot_ = 0;     // slot holding the durable record
  uint64_t seq_ = 0;
  uint64_t durable_seq_ = 0;
  uint32_t updates_since_sync_ = 0;
  int64_t last_sync_us_ = 0;

  absl::Status error_;       // sticky after a failed write or sync
  bool closed_ = false;
  ReplicaPosition recovered_;
  std::string open_note_;
  Stats stats_;
};

}  // namespace binlog

#endif  // BINLOG_BINLOG_POSITION_STORE_H_
