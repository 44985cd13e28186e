#include "server/relay.h"

#include <time.h>

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "binlog/event.h"
#include "binlog/format.h"

namespace binlog {
namespace server {
namespace {

uint64_t ThreadCpuNs() {
  timespec t;
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Relay>> Relay::Start(const RelayOptions& options) {
  if (options.dir.empty() || options.basename.empty()) {
    return absl::InvalidArgumentError("RelayOptions: dir and basename must be set");
  }
  if (options.backoff_min <= absl::ZeroDuration() ||
      options.backoff_max < options.backoff_min) {
    return absl::InvalidArgumentError("RelayOptions: 0 < backoff_min <= backoff_max");
  }
  if (options.silence_timeout < 3 * options.source.heartbeat_period) {
    return absl::InvalidArgumentError(
        "RelayOptions: silence_timeout must be at least three heartbeat periods");
  }
  if (options.failover_after <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("RelayOptions: failover_after must be positive");
  }
  std::vector<SourceAddress> addrs = options.sources;
  if (addrs.empty()) addrs.emplace_back(options.source.host, options.source.port);
  for (const SourceAddress& a : addrs) {
    if (a.host.empty() || (a.host[0] != '/' && !io::Socket::IsIpAddress(a.host))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "RelayOptions: the source host '", a.host,
          "' is neither an IPv4 or IPv6 address nor a unix socket path"));
    }
  }
  auto m = MirrorLog::Open(options.dir, options.basename, options.mirror);
  if (!m.ok()) return m.status();
  std::unique_ptr<Relay> r(new Relay(options));
  r->addrs_ = std::move(addrs);
  if (options.source.tls != nullptr) {
    for (const SourceAddress& a : r->addrs_) {
      ClientTls t = *options.source.tls;
      if (!a.verify_host.empty()) {
        t.verify_host = a.verify_host;
      } else if (t.verify_host.empty() && !options.sources.empty() && a.host[0] != '/') {
        t.verify_host = a.host;
      }
      r->tls_.push_back(std::move(t));
    }
  }
  r->mirror_ = std::move(*m);
  r->thread_ = std::thread([p = r.get()] { p->Run(); });
  return r;
}

Relay::~Relay() { Stop().IgnoreError(); }

absl::Status Relay::Stop() {
  {
    std::unique_lock<std::mutex> l(mu_);
    if (stopping_) {
      // Another thread stops: wait for its result.
      cv_.wait(l, [this] { return stopped_; });
      return close_status_;
    }
    stopping_ = true;
    stop_ = true;
    conn_.Shutdown();
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  absl::Status s = mirror_ != nullptr ? mirror_->Close() : absl::OkStatus();
  {
    std::lock_guard<std::mutex> l(mu_);
    stopped_ = true;
    close_status_ = s;
  }
  cv_.notify_all();
  return s;
}

Relay::Stats Relay::stats() const {
  std::lock_guard<std::mutex> l(mu_);
  return stats_;
}

void Relay::Pause(absl::Duration d) {
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait_for(l, absl::ToChronoNanoseconds(d), [this] { return stop_; });
}

void Relay::Run() {
  absl::Duration backoff = o_.backoff_min;
  size_t cur = 0;  // the source followed or tried (addrs_)
  absl::Time healthy_at = absl::Now();  // its last healthy stream (or when tried first)
  for (;;) {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (stop_) return;
    }
    const uint64_t stored_before = mirror_->stats().events_stored;
    StreamTimes times;
    absl::Status s = RunStream(cur, &times);
    {
      std::lock_guard<std::mutex> l(mu_);
      stats_.connected = false;
      stats_.semisync = false;
      stats_.last_error = s.ToString();
      if (stop_) return;
      // The copy is poisoned (an I/O error): nothing more can be stored.
      // Decided by where the error came from, never by its text (a
      // source's error message is the source's to choose).
      if (copy_failed_) {
        stats_.fatal = s.ToString();
        return;
      }
    }
    // What the stream appended is made durable now rather than at the next
    // stream's first burst: readers of the copy at rest see it meanwhile.
    absl::Status synced = mirror_->Sync();
    if (!synced.ok()) {
      std::lock_guard<std::mutex> l(mu_);
      stats_.fatal = synced.ToString();
      return;
    }
    // A stream whose dump started and that then stored events, or kept
    // receiving (heartbeats count) for a while, was healthy: start the
    // backoff over. The Rotate and Format_description every dump begins
    // with do not count as stored: a source whose next event the copy
    // refuses would be reconnected to at once, forever. Nor does the time
    // spent connecting, in the handshake or waiting out silence_timeout: a
    // host that is down, or accepts and never answers, is unreachable.
    const bool started = times.dump_started != absl::InfiniteFuture();
    if (started && (mirror_->stats().events_stored > stored_before ||
                    times.last_event - times.dump_started >= o_.backoff_max)) {
      backoff = o_.backoff_min;
      healthy_at = absl::Now();
    } else if (addrs_.size() > 1 && absl::Now() - healthy_at >= o_.failover_after) {
      // Unreachable (or unusable) for too long: the next source.
      cur = (cur + 1) % addrs_.size();
      healthy_at = absl::Now();
      backoff = o_.backoff_min;
      std::lock_guard<std::mutex> l(mu_);
      ++stats_.source_changes;
    }
    Pause(backoff);
    backoff = std::min(backoff * 2, o_.backoff_max);
  }
}

absl::Status Relay::RunStream(size_t i, StreamTimes* times) {
  auto stopped = [this] {
    std::lock_guard<std::mutex> l(mu_);
    return stop_;
  };
  if (stopped()) return absl::CancelledError("stopped");
  const MirrorResumePoint rp = mirror_->ResumePoint();
  const std::string gtid_state =
      rp.flavor == LogFlavor::kMariaDB ? rp.maria_gtids.ToString() : rp.gtids.ToString();
  // A server whose id is not the copy's last file's may be another server
  // (a failover) or one that serves the same server's files (a relay, a
  // proxy). A GTID dump tells: its first event, a Rotate, names the file
  // that holds the copy's GTID position, and the next, that file's
  // Format_description, says which server wrote it. Another server's file
  // is then dumped from offset 4 and taken whole as the copy's next file;
  // the same server's files are followed as from the same server.
  bool locating = false;
  bool located = false;
  bool failover = false;
  std::string failover_file;
  uint32_t located_on = 0;    // the server id of the server that located it
  uint32_t file_server = 0;   // the located file's writer
  auto choose = [&](const SourceStream& st) -> absl::StatusOr<DumpStart> {
    DumpStart start;
    const uint32_t sid = st.source_server_id();
    if (located && sid != located_on) {
      return absl::UnavailableError(absl::StrCat("the source's server id changed from ",
                                                 located_on, " to ", sid,
                                                 " while it was located"));
    }
    const bool other = !rp.position.file.empty() && rp.server_id != 0 && sid != 0 &&
                       sid != rp.server_id;
    if (failover) {
      start.file = failover_file;
      start.position = 4;
    } else if (other && !located) {
      locating = true;
      located_on = sid;
      start.gtid = gtid_state;
      start.semisync = false;  // only its first events are read
    } else if (o_.resume_by_gtid && !rp.position.file.empty()) {
      start.gtid = gtid_state;
    } else if (rp.position.file.empty()) {
      start.file = o_.start_file;
      start.position = 4;
    } else {
      start.file = rp.position.file;
      start.position = rp.position.pos;
    }
    return start;
  };
  SourceOptions so = o_.source;
  so.host = addrs_[i].host;
  so.port = addrs_[i].port;
  if (!tls_.empty()) so.tls = &tls_[i];
  so.on_connect = [this](const io::Socket& sock) {
    std::lock_guard<std::mutex> l(mu_);
    conn_ = io::ShutdownHandle(sock);
    if (stop_) conn_.Shutdown();
  };
  // Closes the duplicate when the stream ends (or its start fails).
  struct Unregister {
    Relay* r;
    ~Unregister() {
      std::lock_guard<std::mutex> l(r->mu_);
      r->conn_ = io::ShutdownHandle();
    }
  } unregister{this};
  copy_failed_ = false;
  {
    std::lock_guard<std::mutex> l(mu_);
    stats_.source = so.host[0] == '/' ? so.host : absl::StrCat(so.host, ":", so.port);
  }
  auto st = SourceStream::StartChosen(so, choose);
  if (st.ok() && locating) {
    // The GTID dump's Rotate, then the Format_description of the file it
    // names (heartbeats aside); the dump is dropped then.
    const absl::Time deadline = absl::Now() + o_.silence_timeout;
    absl::Status found;
    for (;;) {
      auto ev = st->Next(deadline);
      if (!ev.ok()) {
        found = ev.status();
        break;
      }
      const EventHeader h = DecodeHeader(ev->bytes);
      if (h.type == kHeartbeatEvent || h.type == kHeartbeatEventV2) continue;
      if (failover_file.empty()) {
        bool crc = false;
        auto rot = h.type == kRotateEvent ? DecodeRotateAnyChecksum(ev->bytes, &crc)
                                          : absl::StatusOr<RotateInfo>(absl::DataLossError(
                                                "the GTID dump did not start with a Rotate"));
        if (!rot.ok()) {
          found = rot.status();
          break;
        }
        failover_file = rot->next_file;
        continue;
      }
      if (h.type != kFormatDescriptionEvent) {
        found = absl::DataLossError(absl::StrCat("the GTID dump's Rotate to ", failover_file,
                                                 " was not followed by a Format_description"));
        break;
      }
      file_server = h.server_id;
      break;
    }
    if (!found.ok()) {
      std::lock_guard<std::mutex> l(mu_);
      ++stats_.connect_failures;
      return found;
    }
    located = true;
    failover = file_server != rp.server_id;
    { SourceStream done = std::move(*st); }  // closed before the next dump
    if (stopped()) return absl::CancelledError("stopped");
    st = SourceStream::StartChosen(so, choose);
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!st.ok()) {
      ++stats_.connect_failures;
      return st.status();
    }
    if (stop_) return absl::CancelledError("stopped");
    ++stats_.connects;
    if (failover) ++stats_.failovers;
    stats_.connected = true;
    stats_.semisync = st->semisync();
  }
  times->dump_started = absl::Now();
  times->last_event = times->dump_started;
  // The server whose files come: the located file's writer after a
  // GTID locate (another server's, or the copy's own server's files
  // served by another), else the server itself.
  mirror_->BeginStream(located ? file_server : st->source_server_id());

  bool ack_pending = false;
  bool unsynced = false;
  size_t since_ack = 0;  // bytes received while an ack is pending
  for (;;) {
    auto ev = st->Next(absl::Now() + o_.silence_timeout);
    if (!ev.ok()) return ev.status();
    times->last_event = absl::Now();
    absl::Status a = mirror_->Append(ev->bytes);
    if (!a.ok()) {
      // InvalidArgument / OutOfRange: the event was refused, nothing
      // written (reconnect). Anything else is an I/O error of the copy or
      // its poisoning (FailedPrecondition): fatal, the first time.
      if (!absl::IsInvalidArgument(a) && !absl::IsOutOfRange(a)) copy_failed_ = true;
      return a;
    }
    const uint8_t type = static_cast<uint8_t>(ev->bytes[kTypeOffset]);
    if (type != 27 && type != 41) unsynced = true;  // not a heartbeat
    ack_pending |= ev->need_ack;
    if (ack_pending) since_ack += ev->bytes.size();
    {
      std::lock_guard<std::mutex> l(mu_);
      ++stats_.events;
    }
    if (st->buffered() && since_ack < o_.max_ack_delay_bytes) continue;
    // The end of a burst: one fdatasync, then one ack for all of it.
    if (unsynced) {
      absl::Status s = mirror_->Sync();
      if (!s.ok()) {
        copy_failed_ = true;
        return s;
      }
      unsynced = false;
      std::lock_guard<std::mutex> l(mu_);
      ++stats_.syncs;
    }
    // A failover's dump before the new server's file starts: the copy's
    // end is still the previous server's file, a name the new server
    // does not know. The ack waits for the file's start.
    if (ack_pending && st->semisync() && !mirror_->switch_pending()) {
      const MirrorPosition d = mirror_->durable_end();
      if (!d.file.empty()) {
        absl::Status s = st->Ack(mirror_->SourceFileName(d.file), d.pos);
        if (!s.ok()) return s;
        ack_pending = false;
        since_ack = 0;
        std::lock_guard<std::mutex> l(mu_);
        ++stats_.acks;
      }
    }
    const uint64_t cpu = ThreadCpuNs();
    std::lock_guard<std::mutex> l(mu_);
    stats_.receiver_cpu_ns = cpu;
  }
}

}  // namespace server
}  // namespace binlog
