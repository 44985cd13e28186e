// File: server/copy_retention.h
//
// CopyRetention: which of a relay's copied files (a MirrorLog,
// binlog/mirror_log.h) go, and when, following the copy's consumers
// (binlog_server --source's retention options; tools/README.md, "Relay").
//
// A pass (RunOnce, and every `interval` on a thread of its own after
// Start):
//   1. The policy's wish: the files (never the last) that the copy closed
//      (started the next file) longer than expire_after ago (MySQL's
//      binlog_expire_logs_seconds), on the local clock
//      (MirrorLog::ListFileFacts: the source's event timestamps are not
//      used, so a source's skewed or hostile clock cannot age a file or
//      keep it young), and the oldest
//      files while the copy's files together hold more than
//      max_total_bytes (MySQL 8.4 has no such limit).
//   2. What the consumers hold: no file at or after the one a consumer has
//      reached goes. Consumers are every downstream replica the server
//      remembers (Server::ReplicaPositions, server/replica_registry.h: from
//      its first dump, by server id and UUID, the end of the last event its
//      dump sent, remembered while it is disconnected until the server's
//      replica_expire_after has passed since its last dump, then forgotten
//      by the pass and logged; one without a position yet holds nothing;
//      one whose file was purged already holds none), and every named
//      consumer: a PositionStore file (binlog/position_store.h) whose
//      source_file is the copy's file the consumer reads (written by the
//      consumer, only read here: its durable record, ReadDurable; a store
//      that cannot be read holds every file, and says so in the log).
//   3. Operator limits override the consumers: files older than
//      force_purge_after, and the oldest while the files hold more than
//      force_max_total_bytes, go even if a consumer is in them. The dumps
//      still in them are ended first (Server::EndDumpsBefore: 1236 with the
//      reason), and a replica that comes back for a purged position gets
//      the purged-position errors MySQL sends (1236 "Could not find first
//      log file name in binary log index file" by file and position, 1789
//      by GTID set). Every forced purge is logged, naming the consumers it
//      passed.
//   4. MirrorLog::PurgeTo up to the first file kept (the index first; a
//      file a reader has open stops it, and a later pass goes on). Not
//      before startup_grace has passed since Create (replicas that knew
//      the relay before a restart reconnect first), and not in a pass
//      whose save of the replicas' positions (replicas_file) failed: a
//      replica's position is durable before any file it holds goes.
// Every purge is reported through `log` (binlog_server: standard error).
// A pass costs O(n log n) in the replicas remembered (n) plus the files.
//
// Thread safety: thread-safe (RunOnce serializes with the thread's
// passes). Lifetime: the MirrorLog and the Server must outlive it; Stop()
// (or the destructor) before they go.

#ifndef BINLOG_SERVER_COPY_RETENTION_H_
#define BINLOG_SERVER_COPY_RETENTION_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "binlog/mirror_log.h"
#include "io/file_system.h"
#include "server/server.h"

namespace binlog {
namespace server {

struct CopyRetentionOptions {
  // The copy's basename (the source's).
  std::string basename;
  // The policy (zero: none). A file's age is measured from its local
  // close time (MirrorLog::FileFacts::closed_at), with `now`.
  absl::Duration expire_after = absl::ZeroDuration();
  uint64_t max_total_bytes = 0;
  // Named consumers: name and PositionStore path. Each pass reads the
  // store's durable record (PositionStore::ReadDurable: read only, never
  // created, written or synced). Create fails (NotFound) for a store that
  // does not exist.
  std::vector<std::pair<std::string, std::string>> consumers;
  // The file system the consumers' stores are read through; nullptr: the
  // default.
  io::FileSystem* file_system = nullptr;
  // Operator limits, past the consumers (zero: none).
  absl::Duration force_purge_after = absl::ZeroDuration();
  uint64_t force_max_total_bytes = 0;
  // Between passes of the thread (Start).
  absl::Duration interval = absl::Seconds(10);
  // Where the replicas' positions are kept across restarts ("": not
  // kept): text, "binlog-relay-replicas 2" then one "replica <server id>
  // <uuid> <file> <position> <last active>" line each (uuid "-" for none;
  // last active: the end of its last dump, Unix seconds on the server's
  // clock, "-" while it is connected), replaced crash-safely (write-temp,
  // fdatasync, rename, directory fsync) by a pass that sees them changed,
  // and read by Create, which gives the server the replicas it does not
  // know yet (Server::RememberReplica; one connected when saved counts as
  // active at Create; version 1 files, "replica <server id> <file>
  // <position>" lines, are read as replicas without a UUID active at
  // Create; replicas past the server's max_replicas are not restored, and
  // logged). A restarted relay then holds the files of a replica that has
  // not reconnected yet.
  std::string replicas_file;
  // No purge (not even a forced one) until this long after Create: a
  // replica that first dumped after the last save before a restart holds
  // its files once it reconnects within it (a MySQL replica retries every
  // 60 s by default). Zero: none.
  absl::Duration startup_grace = absl::ZeroDuration();
  // Where purges and held files are reported (one line each, no newline).
  std::function<void(const std::string&)> log;
  // The clock files' ages and startup_grace are measured with (the copy's
  // close times come from MirrorOptions::clock: the same clock); nullptr:
  // absl::Now(). (Replicas' inactivity is the server's: ServerOptions::now.)
  std::function<absl::Time()> now;
};

class CopyRetention {
 public:
  // `server` may be null (no downstream replicas: named consumers only).
  // InvalidArgument for an empty basename or negative durations; DataLoss
  // for a replicas_file that cannot be parsed; NotFound for a consumer
  // whose store does not exist; I/O errors.
  static absl::StatusOr<std::unique_ptr<CopyRetention>> Create(MirrorLog* mirror,
                                                               Server* server,
                                                               CopyRetentionOptions options);
  ~CopyRetention();
  CopyRetention(const CopyRetention&) = delete;
  CopyRetention& operator=(const CopyRetention&) = delete;

  struct PassResult {
    std::vector<std::string> purged;  // names, oldest first
    bool forced = false;              // an operator limit passed a consumer
    // The first file kept and why it stays ("" if the policy keeps every
    // file): "policy", "replica <server id> at <file>:<pos>", "consumer
    // <name> at <file>", or the reader that holds it.
    std::string kept_file;
    std::string kept_reason;
    int dumps_ended = 0;  // dumps a forced purge ended
  };
  // One pass (see the file comment). Errors: a purge's error (the copy's
  // I/O error, which poisons it) or the file list's.
  absl::StatusOr<PassResult> RunOnce();

  // Passes every `interval` on a thread (errors are logged); Stop ends it.
  void Start();
  void Stop();

 private:
  CopyRetention(MirrorLog* mirror, Server* server, CopyRetentionOptions options)
      : mirror_(mirror), server_(server), o_(std::move(options)) {}
  void Log(const std::string& line) const {
    if (o_.log) o_.log(line);
  }
  absl::Status LoadReplicas();
  absl::Status SaveReplicas(const std::vector<Server::ReplicaPosition>& replicas);

  MirrorLog* const mirror_;
  Server* const server_;
  const CopyRetentionOptions o_;

  std::mutex pass_mu_;  // one pass at a time
  std::string saved_;   // what replicas_file holds; guarded by pass_mu_
  absl::Time created_;  // by o_.now (startup_grace)

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace server
}  // namespace binlog

#endif  // BINLOG_SERVER_COPY_RETENTION_H_
