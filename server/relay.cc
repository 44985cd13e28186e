#include "server/relay.h"

#include <time.h>

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
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
  std::unique_ptr<Relay> r(new Relay(options));
  auto m = MirrorLog::Open(options.dir, options.basename, options.mirror);
  if (!m.ok()) return m.status();
  r->mirror_ = std::move(*m);
  r->thread_ = std::thread([p = r.get()] { p->Run(); });
  return r;
}

Relay::~Relay() { Stop().IgnoreError(); }

absl::Status Relay::Stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (stopped_) return close_status_;
    stop_ = true;
    if (stream_ != nullptr) stream_->Interrupt();
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  absl::Status s = mirror_->Close();
  std::lock_guard<std::mutex> l(mu_);
  stopped_ = true;
  close_status_ = s;
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
  for (;;) {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (stop_) return;
    }
    uint64_t events_before = stats().events;
    absl::Status s = RunStream();
    {
      std::lock_guard<std::mutex> l(mu_);
      stats_.connected = false;
      stats_.semisync = false;
      stats_.last_error = s.ToString();
      if (stop_) return;
      // The copy is poisoned: nothing more can be stored.
      if (absl::IsFailedPrecondition(s) && absl::StrContains(s.message(), "copy:")) {
        stats_.fatal = s.ToString();
        return;
      }
    }
    // A stream that delivered events was healthy: start the backoff over.
    if (stats().events > events_before) backoff = o_.backoff_min;
    Pause(backoff);
    backoff = std::min(backoff * 2, o_.backoff_max);
  }
}

absl::Status Relay::RunStream() {
  const MirrorResumePoint rp = mirror_->ResumePoint();
  DumpStart start;
  if (o_.resume_by_gtid && !rp.position.file.empty()) {
    start.gtid = rp.flavor == LogFlavor::kMariaDB ? rp.maria_gtids.ToString()
                                                  : rp.gtids.ToString();
  } else if (rp.position.file.empty()) {
    start.file = o_.start_file;
    start.position = 4;
  } else {
    start.file = rp.position.file;
    start.position = rp.position.pos;
  }
  auto st = SourceStream::Start(o_.source, start);
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!st.ok()) {
      ++stats_.connect_failures;
      return st.status();
    }
    if (stop_) return absl::CancelledError("stopped");
    stream_ = &*st;
    ++stats_.connects;
    stats_.connected = true;
    stats_.semisync = st->semisync();
  }
  struct Unregister {
    Relay* r;
    ~Unregister() {
      std::lock_guard<std::mutex> l(r->mu_);
      r->stream_ = nullptr;
    }
  } unregister{this};

  bool ack_pending = false;
  bool unsynced = false;
  for (;;) {
    auto ev = st->Next(absl::Now() + o_.silence_timeout);
    if (!ev.ok()) return ev.status();
    absl::Status a = mirror_->Append(ev->bytes);
    if (!a.ok()) {
      if (absl::IsFailedPrecondition(a)) {
        return absl::FailedPreconditionError(absl::StrCat("copy: ", a.message()));
      }
      return a;
    }
    const uint8_t type = static_cast<uint8_t>(ev->bytes[kTypeOffset]);
    if (type != 27 && type != 41) unsynced = true;  // not a heartbeat
    ack_pending |= ev->need_ack;
    {
      std::lock_guard<std::mutex> l(mu_);
      ++stats_.events;
    }
    if (st->buffered()) continue;
    // The end of a burst: one fdatasync, then one ack for all of it.
    if (unsynced) {
      absl::Status s = mirror_->Sync();
      if (!s.ok()) return absl::FailedPreconditionError(absl::StrCat("copy: ", s.message()));
      unsynced = false;
      std::lock_guard<std::mutex> l(mu_);
      ++stats_.syncs;
    }
    if (ack_pending && st->semisync()) {
      const MirrorPosition d = mirror_->durable_end();
      if (!d.file.empty()) {
        absl::Status s = st->Ack(d.file, d.pos);
        if (!s.ok()) return s;
        ack_pending = false;
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
