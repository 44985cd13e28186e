// File: server/relay.h
//
// Relay: keeps an exact, durable copy of a source server's binlog (a
// MirrorLog, binlog/mirror_log.h) from its replication stream (a
// SourceStream, server/source.h), and acknowledges semi-synchronous
// transactions only once they are on the copy's disk. What binlog_server
// runs with --source (tools/README.md, "Relay").
//
// The receiver thread:
//   1. connects (SourceStream::Start) and asks the copy where the dump
//      must restart (MirrorLog::ResumePoint): by file and position, in the
//      source's names, which keeps every file exact (by GTID with
//      RelayOptions::resume_by_gtid); but a failover (below) when the
//      server is another than the one the copy's last file came from;
//   2. declares the server to the copy (MirrorLog::BeginStream) and
//      appends every event received to the copy, which checks each
//      against what it holds;
//   3. at the end of each burst (no whole event already received), makes
//      everything appended durable with one fdatasync (MirrorLog::Sync)
//      and, if the source asked for an ack since the last one, sends one
//      ack naming the copy's durable end: one fdatasync and one ack for
//      everything received so far. With the source's semi-sync wait point
//      AFTER_SYNC, every transaction the source reported committed to its
//      client is then on the relay's disk;
//   4. on any error of the connection or of the stream's continuity
//      (a dropped connection, a silent source past silence_timeout, a gap
//      the copy refuses), reconnects after a backoff that doubles from
//      backoff_min to backoff_max, from where the copy ends. An I/O error
//      of the copy (it is poisoned) stops the relay: stats().fatal says
//      why; restarting the process recovers the copy (MirrorLog::Open).
// A relay killed at any moment restarts from its copy: Open cuts a partial
// transaction at the end, and the dump resumes there.
//
// Failover. With several RelayOptions::sources the relay follows the
// first it reaches; when the one it follows has been unreachable for
// failover_after, it tries the next (in order, then from the first
// again), and stays with whichever it reaches until that one is lost.
// A server whose @@server_id differs from the server id of the copy's
// last file (its Format_description's) may be another server. The relay
// asks it for a GTID dump from the copy's GTID state and takes only its
// first events: the artificial Rotate that names the server's file
// holding that position, and that file's Format_description, whose
// server id says who wrote it. The copy's own server (the server serves
// its files: another relay, a proxy): an ordinary resume by file and
// position follows. Another server (a failover): the relay dumps that
// file by file and position from offset 4, so that every event of it
// arrives, and the copy takes it whole as its next file
// (MirrorLog::BeginStream): the copy's last file ends where it is, a
// partial transaction cut. The
// server must hold every transaction of the copy (a failover to the most
// advanced replica): a server that lacks some refuses the GTID dump, and
// the relay goes on trying (the error is in stats().last_error).
//
// Thread safety: thread-safe. Stop() may be called from any thread.

#ifndef BINLOG_SERVER_RELAY_H_
#define BINLOG_SERVER_RELAY_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "binlog/mirror_log.h"
#include "io/socket.h"
#include "server/source.h"

namespace binlog {
namespace server {

// One source server's address (see SourceOptions::host and port).
struct SourceAddress {
  SourceAddress() = default;
  SourceAddress(std::string h, uint16_t p, std::string verify = "")
      : host(std::move(h)), port(p), verify_host(std::move(verify)) {}
  std::string host;
  uint16_t port = 3306;
  // With TLS (SourceOptions::tls): the name or address this server's
  // certificate must carry. Empty: source.tls->verify_host if that is set
  // (every server's certificate names it), else, for a TCP address of
  // RelayOptions::sources, `host` (a unix socket: not checked).
  std::string verify_host;
};

struct RelayOptions {
  // The source: credentials and settings for every source, and the
  // address of the only one when `sources` is empty.
  SourceOptions source;
  // The servers that may be the source, in order of preference: the
  // primary and the replicas that may replace it, all with the same GTID
  // history (see the file comment, "Failover"). Empty: source.host/port.
  std::vector<SourceAddress> sources;
  // How long the server followed may stay unreachable before the next one
  // of `sources` is tried: no stream whose dump started and then stored an
  // event or kept receiving (heartbeats count) for backoff_max. A host
  // that is down, drops the connect or accepts and never answers is
  // unreachable; each try of it ends after source.connect_timeout, so the
  // next source is tried within failover_after + source.connect_timeout
  // + backoff_max.
  absl::Duration failover_after = absl::Seconds(10);
  // The copy: its directory and the source's basename (what the source's
  // file names start with, "mysql-bin", "mariadb-bin").
  std::string dir;
  std::string basename;
  MirrorOptions mirror;
  // Where an empty copy starts: a file of the source (its events from
  // offset 4 on); "": the source's oldest file.
  std::string start_file;
  // Resume by GTID instead of file and position, also from the same
  // server (see the file comment; a failover resumes by GTID anyway).
  bool resume_by_gtid = false;
  // Reconnect backoff: the first wait, doubling up to the last.
  absl::Duration backoff_min = absl::Milliseconds(100);
  absl::Duration backoff_max = absl::Seconds(5);
  // A connection that delivers nothing (not even a heartbeat) for this
  // long is dropped and made again. At least three heartbeat periods.
  absl::Duration silence_timeout = absl::Seconds(5);
  // With an ack pending, a burst ends (fdatasync, then the ack) after this
  // many bytes even if more are already received: a source sending
  // without pause still gets its acks.
  size_t max_ack_delay_bytes = 1 << 20;
};

class Relay {
 public:
  // Opens (recovering) the copy and starts the receiver thread. Errors:
  // those of MirrorLog::Open; InvalidArgument for bad options.
  static absl::StatusOr<std::unique_ptr<Relay>> Start(const RelayOptions& options);

  // Stops the receiver and closes the copy.
  ~Relay();
  Relay(const Relay&) = delete;
  Relay& operator=(const Relay&) = delete;

  // Stops the receiver (an open connection is interrupted), then closes
  // the copy (a partial transaction at its end is cut; everything else is
  // durable). Returns the copy's Close status; later calls return it too.
  absl::Status Stop();

  // The copy, for readers (MirrorLog::NewReader) and its positions.
  MirrorLog* mirror() const { return mirror_.get(); }

  struct Stats {
    uint64_t connects = 0;          // streams started
    uint64_t connect_failures = 0;  // connects or streams that failed
    uint64_t events = 0;            // events received and accepted
    uint64_t syncs = 0;             // MirrorLog::Sync calls
    uint64_t acks = 0;              // semi-sync acks sent
    // CPU time of the receiver thread (receiving, checking, writing,
    // fdatasync's CPU share, acking), measured at the end of each burst.
    uint64_t receiver_cpu_ns = 0;
    bool connected = false;         // a stream is open now
    bool semisync = false;          // the open stream is a semi-sync one
    std::string source;             // the server tried or followed (host:port)
    uint64_t source_changes = 0;    // moves to the next of RelayOptions::sources
    uint64_t failovers = 0;         // streams that began a failover (another server)
    std::string last_error;         // why the last stream ended
    std::string fatal;              // set: the relay stopped (copy poisoned)
  };
  Stats stats() const;

 private:
  explicit Relay(const RelayOptions& o) : o_(o) {}
  void Run();
  // When a stream's dump started (InfiniteFuture: it never did) and when
  // it last received an event (heartbeats included).
  struct StreamTimes {
    absl::Time dump_started = absl::InfiniteFuture();
    absl::Time last_event = absl::InfiniteFuture();
  };
  // One stream of source `i` from the copy's end; returns why it ended.
  absl::Status RunStream(size_t i, StreamTimes* times);
  // Waits `d` or until Stop.
  void Pause(absl::Duration d);

  const RelayOptions o_;
  // The sources (RelayOptions::sources, or source's address) and, with
  // TLS, each one's TLS settings (the certificate checked against its
  // own host).
  std::vector<SourceAddress> addrs_;
  std::vector<ClientTls> tls_;
  std::unique_ptr<MirrorLog> mirror_;
  std::thread thread_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool stopping_ = false;  // a Stop is joining and closing
  bool stopped_ = false;
  absl::Status close_status_;
  // The connection, from before its connect to the stream's end (invalid:
  // none): Stop shuts it down, which wakes the receiver in the connect,
  // the handshake, the session setup, a read or an ack of the stream.
  io::ShutdownHandle conn_;
  // Set by the receiver: the last stream ended on an error of the copy.
  bool copy_failed_ = false;
  Stats stats_;
};

}  // namespace server
}  // namespace binlog

#endif  // BINLOG_SERVER_RELAY_H_
