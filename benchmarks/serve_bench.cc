// serve_bench: what serving replicas costs the log. A writer at --threads
// (64) commits small transactions to a live Binlog in this process while
// binlog_server's Server (server/, ServerOptions::live: tailing
// readers, NextBatch) streams the log over 127.0.0.1 to N replicas, each
// the in-tree ReplicationClient (server/client.h) in its own thread.
//
//   bazel run -c opt //benchmarks:serve_bench -- --replicas=0,1,8,64
//       --format=jsonl [--seconds=3] [--threads=64] [--sync=group|never]
//       [--dir=DIR] [--ssl_cert=PEM --ssl_key=PEM --ssl_ca=PEM]
//
// --relay=none,async,semisync adds a relay (server/relay.h, what
// binlog_server --source runs) that replicates from the server into an
// exact copy: "async" only copies; "semisync" makes every committer wait
// (sync/ack_tracker.h, as a server with rpl_semi_sync_master_enabled and
// wait point AFTER_SYNC) until the relay acknowledged its transaction,
// which it does after its copy's fdatasync. Each relay mode runs with each
// replica count. Extra keys: relay, ack_p99_us (commit to ack, semisync),
// relay_cpu_ns_per_txn (the relay's receiver thread), relay_syncs,
// replicas_from.
// --relay_dir puts the copy elsewhere (a tmpfs: a relay whose disk does
// not compete with the source's; what remains is the relay's software).
// --replicas_from=relay feeds the replicas from a second server serving
// the relay's copy live (ServerOptions::mirror): their lag is then the
// source's commit to the replica through the relay's durable copy, and
// the server CPU is the downstream server's.
//
// With the three TLS flags the server offers TLS and every replica
// connects over it, verifying the server's certificate (which must name
// 127.0.0.1) against --ssl_ca: the cost of TLS on the same workload.
//
// One JSON line per replica count:
//   replicas, tps (commits/s of the writer), sent_mb_s (bytes the server
//   sent to all replicas / s), lag_p99_us (99th percentile, over every
//   transaction and replica, of the time from the writer's Commit() call
//   to the replica's receipt of the Xid event), server_cpu_ns_per_replica_txn
//   (CPU of the server's session threads / (replicas x transactions)),
//   transactions and tls.

#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "binlog/event_builder.h"
#include "binlog/format.h"
#include "binlog/log.h"
#include "server/auth.h"
#include "server/client.h"
#include "server/relay.h"
#include "server/server.h"
#include "sync/ack_tracker.h"
#include "io/socket.h"
#include "io/tls.h"


ABSL_FLAG(std::string, replicas, "0,1,8,64",
          "comma-separated replica counts, one run each");
ABSL_FLAG(std::string, format, "jsonl", "jsonl or text");
ABSL_FLAG(int, threads, 64, "committing writer threads");
ABSL_FLAG(double, seconds, 3, "length of each run");
ABSL_FLAG(std::string, sync, "group", "group (fdatasync per group) or never");
ABSL_FLAG(std::string, dir, "/tmp/serve_bench", "scratch directory");
ABSL_FLAG(std::string, replicas_from, "source",
          "with a relay: where the replicas dump from: source (the writer's server) "
          "or relay (a second server serving the relay's copy, as binlog_server "
          "--source does)");
ABSL_FLAG(std::string, relay_dir, "",
          "the relay's copy directory (default: --dir with _copy appended); another "
          "file system, e.g. a tmpfs, stands in for a relay on another machine's disk");
ABSL_FLAG(std::string, ssl_cert, "", "server certificate (PEM): replicas connect over TLS");
ABSL_FLAG(std::string, ssl_key, "", "its private key (PEM)");
ABSL_FLAG(std::string, ssl_ca, "", "CA (PEM) the replicas verify the server's certificate with");
ABSL_FLAG(std::string, relay, "none",
          "comma-separated relay modes, one run each with each replica count: none, "
          "async (a relay copies the log), semisync (committers wait for the relay's ack)");

namespace {

using binlog::server::ReplicationClient;
using binlog::server::Server;
using binlog::server::ServerOptions;
using binlog::io::Socket;

int64_t NowNs() {
  timespec t;
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

struct Result {
  int replicas = 0;
  double tps = 0, sent_mb_s = 0, lag_p99_us = 0, cpu_ns = 0;
  uint64_t txns = 0;
  // Relay runs.
  double ack_p99_us = 0, relay_cpu_ns = 0;
  uint64_t relay_syncs = 0;
};

int64_t P99(std::vector<int64_t>* v) {
  if (v->empty()) return 0;
  size_t k = v->size() * 99 / 100;
  std::nth_element(v->begin(), v->begin() + k, v->end());
  return (*v)[k];
}

constexpr size_t kMaxTxns = 4 << 20;

struct Tls {
  std::string cert, key, ca;
  bool on() const { return !cert.empty(); }
};

Result RunOnce(const std::string& dir, int replicas, int threads, double seconds,
               bool sync_group, const Tls& tls, const std::string& relay_mode) {
  Result res;
  res.replicas = replicas;
  std::string cmd = "rm -rf '" + dir + "' && mkdir -p '" + dir + "'";
  if (std::system(cmd.c_str()) != 0) std::abort();
  binlog::Options o;
  o.sync_policy = sync_group ? binlog::SyncPolicy::kEveryGroup : binlog::SyncPolicy::kNever;
  o.max_file_size = 64 << 20;
  auto log = binlog::Binlog::Open(dir, "binlog", o);
  if (!log.ok()) {
    std::fprintf(stderr, "open: %s\n", log.status().ToString().c_str());
    std::exit(1);
  }
  ServerOptions so;
  so.dir = dir;
  so.users = {{"bench", {binlog::server::AuthPlugin::kNativePassword,
                         binlog::server::NativePasswordHash("bench")}}};
  so.live = log->get();
  binlog::sync::AckTrackerOptions ao;
  ao.required_acks = 1;
  binlog::sync::AckTracker tracker(ao);
  const bool semisync = relay_mode == "semisync";
  if (semisync) so.acks = &tracker;
  so.ssl_cert = tls.cert;
  so.ssl_key = tls.key;
  auto server = Server::Create(so);
  if (!server.ok()) {
    std::fprintf(stderr, "server: %s\n", server.status().ToString().c_str());
    std::exit(1);
  }
  binlog::server::ClientTls client_tls;
  if (tls.on()) {
    auto ctx = binlog::io::TlsContext::ForClient(tls.ca);
    if (!ctx.ok()) {
      std::fprintf(stderr, "--ssl_ca: %s\n", ctx.status().ToString().c_str());
      std::exit(1);
    }
    client_tls = {*ctx, "127.0.0.1"};
  }
  auto listener = Socket::ListenLoopback(0);
  if (!listener.ok()) std::exit(1);
  const uint16_t port = listener->port();
  std::thread runner([&] { (*server)->Run(&*listener); });

  // The relay, connected before the writers start.
  const std::string copy_dir =
      absl::GetFlag(FLAGS_relay_dir).empty() ? dir + "_copy" : absl::GetFlag(FLAGS_relay_dir);
  std::unique_ptr<binlog::server::Relay> relay;
  if (relay_mode != "none") {
    cmd = "rm -rf '" + copy_dir + "'";
    if (std::system(cmd.c_str()) != 0) std::abort();
    binlog::server::RelayOptions ro;
    ro.dir = copy_dir;
    ro.basename = "binlog";
    ro.source.host = "127.0.0.1";
    ro.source.port = port;
    ro.source.user = "bench";
    ro.source.password = "bench";
    ro.source.server_id = 900;
    ro.source.flavor = binlog::LogFlavor::kMySQL;
    ro.source.heartbeat_period = absl::Milliseconds(100);
    ro.silence_timeout = absl::Seconds(5);
    auto r = binlog::server::Relay::Start(ro);
    if (!r.ok()) {
      std::fprintf(stderr, "relay: %s\n", r.status().ToString().c_str());
      std::exit(1);
    }
    relay = std::move(*r);
    while (!relay->stats().connected) absl::SleepFor(absl::Milliseconds(1));
  }
  // Replicas fed from the relay: a second server serving its copy live
  // (ServerOptions::mirror, as binlog_server --source serves it).
  const bool from_relay = relay != nullptr && absl::GetFlag(FLAGS_replicas_from) == "relay";
  std::unique_ptr<Server> down;
  std::optional<Socket> down_listener;
  std::thread down_runner;
  uint16_t replica_port = port;
  if (from_relay) {
    // The server needs the copy's first file (as binlog_server waits).
    while (relay->mirror()->durable_end().file.empty()) absl::SleepFor(absl::Milliseconds(1));
    ServerOptions dso;
    dso.dir = copy_dir;
    dso.users = so.users;
    dso.mirror = relay->mirror();
    auto d = Server::Create(dso);
    if (!d.ok()) {
      std::fprintf(stderr, "downstream server: %s\n", d.status().ToString().c_str());
      std::exit(1);
    }
    down = std::move(*d);
    auto dl = Socket::ListenLoopback(0);
    if (!dl.ok()) std::exit(1);
    down_listener.emplace(std::move(*dl));
    replica_port = down_listener->port();
    down_runner = std::thread([&] { down->Run(&*down_listener); });
  }

  // Commit-call times by xid (1-based).
  std::vector<std::atomic<int64_t>> start_ns(kMaxTxns);
  std::atomic<uint64_t> total{UINT64_MAX};  // known when the writer stops
  std::vector<std::vector<int64_t>> lags(replicas);
  std::vector<std::thread> clients;
  std::atomic<int> ready{0};
  for (int r = 0; r < replicas; ++r) {
    clients.emplace_back([&, r] {
      auto sock = Socket::ConnectLoopback(replica_port);
      auto c = ReplicationClient::Connect(std::move(*sock), "bench", "bench",
                                          "mysql_native_password", false,
                                          tls.on() && !from_relay ? &client_tls : nullptr);
      if (!c.ok()) {
        std::fprintf(stderr, "replica: %s\n", c.status().ToString().c_str());
        std::abort();
      }
      c->Query("SET @master_binlog_checksum='CRC32'").IgnoreError();
      // Heartbeats every 10 ms when idle, so a client that has everything
      // notices the writer's final count without waiting for an event.
      c->Query("SET @master_heartbeat_period=10000000").IgnoreError();
      c->Dump("", 4, 0, 1000 + r).IgnoreError();
      ready.fetch_add(1);
      uint64_t got = 0;
      lags[r].reserve(1 << 20);
      while (got < total.load()) {
        auto p = c->Read(absl::Now() + absl::Seconds(30));
        if (!p.ok() || p->kind != binlog::server::ClientReply::kEvent) break;
        const std::string& ev = p->event;
        if (ev.size() >= binlog::kHeaderSize + 8 &&
            static_cast<uint8_t>(ev[4]) == binlog::kXidEvent) {
          uint64_t xid = binlog::LoadLe64(ev.data() + binlog::kHeaderSize);
          if (xid > 0 && xid < kMaxTxns) {
            int64_t s = start_ns[xid].load(std::memory_order_relaxed);
            if (s > 0) lags[r].push_back(NowNs() - s);
          }
          ++got;
        }
      }
    });
  }
  while (ready.load() < replicas) std::this_thread::yield();

  std::vector<std::vector<int64_t>> ack_ns(threads);

  std::atomic<uint64_t> next_xid{1};
  std::atomic<bool> stop{false};
  std::vector<std::thread> writers;
  const std::string stmt = "INSERT INTO t VALUES (1, '" + std::string(150, 'x') + "')";
  const int64_t t0 = NowNs();
  for (int w = 0; w < threads; ++w) {
    writers.emplace_back([&, w] {
      ack_ns[w].reserve(1 << 16);
      binlog::TransactionBuffer txn;
      while (!stop.load(std::memory_order_relaxed)) {
        uint64_t xid = next_xid.fetch_add(1);
        if (xid >= kMaxTxns) break;
        txn.Clear();
        binlog::AppendAnonymousGtid(&txn, 1700000000, 1, 0, 1);
        binlog::AppendQuery(&txn, 1700000000, 1, 5, "db", "BEGIN");
        binlog::AppendQuery(&txn, 1700000000, 1, 5, "db", stmt);
        binlog::AppendXid(&txn, 1700000000, 1, xid);
        const int64_t begin = NowNs();
        start_ns[xid].store(begin, std::memory_order_relaxed);
        auto pos = (*log)->Commit(&txn);
        if (!pos.ok()) std::abort();
        if (semisync) {
          if (!tracker.WaitForAck({pos->file_number, pos->end}).ok()) std::abort();
          ack_ns[w].push_back(NowNs() - begin);
        }
      }
    });
  }
  absl::SleepFor(absl::Seconds(seconds));
  stop.store(true);
  for (auto& t : writers) t.join();
  const double elapsed = (NowNs() - t0) / 1e9;
  res.txns = std::min<uint64_t>(next_xid.load(), kMaxTxns) - 1;
  // Every writer has returned from Commit: exactly res.txns were committed
  // (an xid taken after stop is never committed only when >= kMaxTxns).
  total.store(res.txns);
  for (auto& t : clients) t.join();
  const double drain = (NowNs() - t0) / 1e9;
  binlog::server::ServerStats down_st;
  if (down != nullptr) {
    down->Shutdown();
    down_runner.join();
    down->Join();
    down_st = down->stats();
    down.reset();
  }
  if (relay != nullptr) {
    binlog::server::Relay::Stats rs = relay->stats();
    res.relay_syncs = rs.syncs;
    if (res.txns > 0) res.relay_cpu_ns = static_cast<double>(rs.receiver_cpu_ns) / res.txns;
    if (!relay->Stop().ok()) std::abort();
    relay.reset();
    cmd = "rm -rf '" + copy_dir + "'";
    if (std::system(cmd.c_str()) != 0) std::abort();
  }
  std::vector<int64_t> acks;
  for (auto& v : ack_ns) acks.insert(acks.end(), v.begin(), v.end());
  res.ack_p99_us = P99(&acks) / 1e3;
  (*server)->Shutdown();
  runner.join();
  (*server)->Join();
  binlog::server::ServerStats st = from_relay ? down_st : (*server)->stats();
  server->reset();
  (*log)->Close().IgnoreError();
  res.tps = res.txns / elapsed;
  res.sent_mb_s = st.bytes_sent / drain / 1e6;
  std::vector<int64_t> all;
  for (auto& v : lags) all.insert(all.end(), v.begin(), v.end());
  res.lag_p99_us = P99(&all) / 1e3;
  if (replicas > 0 && res.txns > 0) {
    res.cpu_ns = static_cast<double>(st.session_cpu_ns) / (replicas * res.txns);
  }
  return res;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "what serving replicas costs the log.\n"
      "usage: serve_bench [--replicas=0,1,8,64] [--format=jsonl|text] "
      "[--seconds=3] [--threads=64] [--sync=group|never] [--dir=DIR] [--relay_dir=DIR] "
      "[--replicas_from=source|relay] "
      "[--ssl_cert=PEM --ssl_key=PEM --ssl_ca=PEM] [--relay=none,async,semisync]");
  std::vector<char*> rest = absl::ParseCommandLine(argc, argv);
  auto usage = [](absl::string_view why) {
    std::fprintf(stderr, "serve_bench: %s\n%s\n", std::string(why).c_str(),
                 std::string(absl::ProgramUsageMessage()).c_str());
    return 2;
  };
  if (rest.size() > 1) return usage(absl::StrCat("unexpected argument ", rest[1]));
  std::vector<int> replica_counts;
  for (absl::string_view p : absl::StrSplit(absl::GetFlag(FLAGS_replicas), ',')) {
    int n;
    if (!absl::SimpleAtoi(p, &n) || n < 0) return usage("bad --replicas");
    replica_counts.push_back(n);
  }
  const std::string format = absl::GetFlag(FLAGS_format);
  if (format != "jsonl" && format != "text") return usage("bad --format");
  const int threads = absl::GetFlag(FLAGS_threads);
  if (threads < 1) return usage("--threads must be at least 1");
  const double seconds = absl::GetFlag(FLAGS_seconds);
  const std::string sync = absl::GetFlag(FLAGS_sync);
  if (sync != "group" && sync != "never") return usage("bad --sync");
  const bool sync_group = sync == "group";
  const std::string dir = absl::GetFlag(FLAGS_dir);
  const Tls tls{absl::GetFlag(FLAGS_ssl_cert), absl::GetFlag(FLAGS_ssl_key),
                absl::GetFlag(FLAGS_ssl_ca)};
  if (tls.cert.empty() != tls.key.empty() || tls.cert.empty() != tls.ca.empty()) {
    return usage("--ssl_cert, --ssl_key and --ssl_ca go together");
  }
  std::vector<std::string> relay_modes;
  for (absl::string_view m : absl::StrSplit(absl::GetFlag(FLAGS_relay), ',')) {
    if (m != "none" && m != "async" && m != "semisync") return usage("bad --relay");
    relay_modes.emplace_back(m);
  }
  const std::string from = absl::GetFlag(FLAGS_replicas_from);
  if (from != "source" && from != "relay") return usage("bad --replicas_from");
  for (const std::string& mode : relay_modes) {
    for (int n : replica_counts) {
      Result r = RunOnce(dir, n, threads, seconds, sync_group, tls, mode);
      if (format == "jsonl") {
        std::printf(
            "{\"replicas\":%d,\"threads\":%d,\"sync\":\"%s\",\"transactions\":%llu,"
            "\"tps\":%.0f,\"sent_mb_s\":%.2f,\"lag_p99_us\":%.0f,"
            "\"server_cpu_ns_per_replica_txn\":%.0f,\"tls\":%s,\"relay\":\"%s\","
            "\"ack_p99_us\":%.0f,\"relay_cpu_ns_per_txn\":%.0f,\"relay_syncs\":%llu,"
            "\"replicas_from\":\"%s\"}\n",
            n, threads, sync_group ? "group" : "never",
            static_cast<unsigned long long>(r.txns), r.tps, r.sent_mb_s, r.lag_p99_us, r.cpu_ns,
            tls.on() ? "true" : "false", mode.c_str(), r.ack_p99_us, r.relay_cpu_ns,
            static_cast<unsigned long long>(r.relay_syncs),
            mode == "none" ? "source" : from.c_str());
      } else {
        std::printf(
            "relay=%s replicas=%d tps=%.0f sent_mb_s=%.2f lag_p99_us=%.0f "
            "cpu_ns/replica/txn=%.0f ack_p99_us=%.0f relay_cpu_ns/txn=%.0f\n",
            mode.c_str(), n, r.tps, r.sent_mb_s, r.lag_p99_us, r.cpu_ns, r.ack_p99_us,
            r.relay_cpu_ns);
      }
      std::fflush(stdout);
    }
  }
  std::string cmd = "rm -rf '" + dir + "'";
  return std::system(cmd.c_str()) == 0 ? 0 : 1;
}
