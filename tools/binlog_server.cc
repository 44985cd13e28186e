// binlog_server: serves a binlog directory to MySQL and MariaDB replicas
// over the replication protocol (tools/README.md, "binlog_server").
//
//   binlog_server --dir=DIR [--basename=NAME] --port=N [--bind=ADDR,...]
//                 [--socket=PATH] --users=FILE [--server_id=N] [limits...]
//                 [--ssl_cert=PEM --ssl_key=PEM [--ssl_ca=PEM]]
//                 [--require_secure_transport]
//   binlog_server --hash_user=USER [--auth_plugin=PLUGIN] < password
//
// Listens on port N (N = 0: a free port, the same for every address) of
// each --bind address (IPv4 or IPv6 literals; 127.0.0.1 by default) and,
// with --socket, on a unix socket. Prints "listening 127.0.0.1:<port>"
// (or "listening [::1]:<port>", "listening <path>") for each once ready.
// The users file has one `user:plugin:authentication_string` per line
// (server/auth.h); --hash_user prints such a line for the password read
// on standard input and exits. SIGTERM
// or SIGINT: dumps get ER_SERVER_SHUTDOWN, the process exits 0; a second
// signal exits at once. The limits (--max_connections and the rest, see
// --help) are ServerOptions' fields of the same names, with their
// defaults.

#include <signal.h>
#include <stdio.h>

#include <atomic>
#include <cstdlib>
#include <iostream>
#include <map>
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
#include "absl/strings/ascii.h"
#include "absl/time/time.h"
#include "binlog/index_file.h"
#include "io/file_system.h"
#include "server/auth.h"
#include "server/copy_retention.h"
#include "server/relay.h"
#include "server/server.h"
#include "io/socket.h"

using binlog::server::ServerOptions;

ABSL_FLAG(std::string, dir, "", "directory of the binlog to serve (required)");
ABSL_FLAG(std::string, basename, "binlog", "base name of the log's files");
ABSL_FLAG(int, port, -1,
          "TCP port on the --bind addresses (0: a free port, printed); -1: no "
          "TCP (then --socket is required)");
ABSL_FLAG(std::string, bind, "127.0.0.1",
          "comma-separated IPv4/IPv6 addresses to listen on with --port "
          "(literals: 127.0.0.1, ::1, 0.0.0.0 for every IPv4 address, :: for "
          "every IPv6 one)");
ABSL_FLAG(std::string, socket, "",
          "unix socket path; an existing path is replaced only if it is a stale "
          "socket (no server accepts on it)");
ABSL_FLAG(std::string, users, "",
          "users file, one user:plugin:authentication_string per line, not "
          "readable by group or others (required)");
ABSL_FLAG(std::string, hash_user, "",
          "print the users-file line of this user for the password read on "
          "standard input (--auth_plugin's hash), then exit");
ABSL_FLAG(std::string, auth_plugin, "caching_sha2_password",
          "--hash_user's plugin: caching_sha2_password or mysql_native_password");
ABSL_FLAG(std::string, caching_sha2_password_private_key_path, "",
          "PEM RSA private key for caching_sha2_password over plaintext TCP "
          "(with --caching_sha2_password_public_key_path; unset: a 2048-bit "
          "pair generated at startup, in memory only)");
ABSL_FLAG(std::string, caching_sha2_password_public_key_path, "",
          "PEM public key of --caching_sha2_password_private_key_path");
ABSL_FLAG(std::string, ssl_cert, "",
          "PEM certificate (chain) of the server; with --ssl_key the server "
          "offers TLS (1.2 or later) to clients that ask for it");
ABSL_FLAG(std::string, ssl_key, "", "PEM private key of --ssl_cert");
ABSL_FLAG(std::string, ssl_ca, "",
          "PEM CA certificates a client certificate, if a client presents one, "
          "must chain to");
ABSL_FLAG(bool, require_secure_transport, false,
          "refuse plaintext TCP connections with error 3159 (TLS and unix-socket "
          "connections are accepted)");
ABSL_FLAG(uint32_t, server_id, 0,
          "server_id to report (0: the log's first Format_description's)");
ABSL_FLAG(int, max_connections, ServerOptions().max_connections,
          "most authenticated sessions at once (more get 1040)");
ABSL_FLAG(int, max_unauthenticated_connections,
          ServerOptions().max_unauthenticated_connections,
          "most connections still in the handshake (more get 1040 at accept)");
ABSL_FLAG(absl::Duration, handshake_timeout, ServerOptions().handshake_timeout,
          "deadline for the whole handshake, from accept to authentication");
ABSL_FLAG(absl::Duration, auth_failure_delay, ServerOptions().auth_failure_delay,
          "wait before answering a failed authentication (bounds guessing to "
          "max_unauthenticated_connections / delay per second)");
ABSL_FLAG(uint64_t, max_handshake_packet, ServerOptions().max_handshake_packet,
          "largest packet before authentication, bytes (past it: 1153, close)");
ABSL_FLAG(uint64_t, max_packet, ServerOptions().max_packet,
          "largest command packet after authentication, bytes (past it: 1153, "
          "close)");
ABSL_FLAG(uint64_t, max_query_length, ServerOptions().max_query_length,
          "longest statement, bytes (past it: 1153)");
ABSL_FLAG(uint64_t, max_session_variables, ServerOptions().max_session_variables,
          "most user variables per session (past it: 1041)");
ABSL_FLAG(uint64_t, max_session_variable_bytes,
          ServerOptions().max_session_variable_bytes,
          "most bytes of user variable names and values per session (past it: "
          "1041)");
ABSL_FLAG(uint64_t, max_replicas, ServerOptions().max_replicas,
          "most downstream replicas remembered (by server id and @replica_uuid, "
          "from their first dump; in relay mode their positions hold the copy's "
          "files); a dump of a new one beyond them gets 1236 and is logged, none "
          "is forgotten to make room");
ABSL_FLAG(uint64_t, max_replica_uuids_per_server_id,
          ServerOptions().max_replica_uuids_per_server_id,
          "most downstream replicas remembered with one server id (different "
          "@replica_uuid values); a dump with a new UUID beyond them gets 1236 "
          "and is logged");
ABSL_FLAG(uint64_t, replica_expire_seconds,
          absl::ToInt64Seconds(ServerOptions().replica_expire_after),
          "a disconnected replica is forgotten (its position holds no file any "
          "more) this many seconds after its last dump ended, on this host's "
          "clock; 0: never");

// Relay mode (tools/README.md, "Relay").
ABSL_FLAG(std::string, source, "",
          "relay mode: replicate from this MySQL-protocol source (HOST:PORT, "
          "[IPv6]:PORT, or a unix socket path) into --dir, an exact copy of its "
          "files named <--basename>.NNNNNN (the source's basename), and serve the "
          "copy; a comma-separated list names servers with the same GTID history "
          "(the primary first, then the replicas that may replace it): the relay "
          "follows the first it reaches and fails over to the next by GTID");
ABSL_FLAG(absl::Duration, source_failover_after, absl::Seconds(10),
          "relay mode: with several --source servers, how long the one followed "
          "may stay unreachable before the next is tried");
ABSL_FLAG(absl::Duration, source_connect_timeout, absl::Seconds(10),
          "relay mode: how long a connect to a source (a host that is down) and "
          "each step of its handshake and session setup (a server that accepts "
          "and never answers) may take");
ABSL_FLAG(std::string, source_user, "", "relay mode: the replication user at the source");
ABSL_FLAG(std::string, source_password_file, "",
          "relay mode: a file holding the source user's password (one line)");
ABSL_FLAG(std::string, source_start_file, "",
          "relay mode: the source's file an empty copy starts from (default: the "
          "source's oldest)");
ABSL_FLAG(bool, source_resume_by_gtid, false,
          "relay mode: resume by GTID rather than file and position (to follow a "
          "new source with the same GTID history after a failover)");
ABSL_FLAG(std::string, source_ssl_ca, "",
          "relay mode: connect to the source over TLS, verifying its certificate "
          "against these CA certificates (PEM)");
ABSL_FLAG(bool, source_get_public_key, false,
          "relay mode: over plaintext TCP, let caching_sha2_password's full "
          "authentication ask the source for its RSA key (unverified: whoever "
          "answers gets the password); off: such a source needs --source_ssl_ca");
ABSL_FLAG(bool, source_semisync, true,
          "relay mode: acknowledge semi-sync transactions (after fdatasync) when "
          "the source has semi-sync on");
ABSL_FLAG(absl::Duration, source_heartbeat_period, absl::Seconds(1),
          "relay mode: the heartbeat period asked of the source; a source silent "
          "for five periods is reconnected");
// Relay mode: retention of the copy (tools/README.md, "Relay",
// server/copy_retention.h).
ABSL_FLAG(uint64_t, binlog_expire_logs_seconds, 0,
          "relay mode: purge copied files the relay closed (began the next file "
          "after) longer ago than this, on its own clock (MySQL's variable of the "
          "same name), once every remembered downstream replica (--max_replicas) "
          "and every --consumers entry has read past them; 0: not by age");
ABSL_FLAG(uint64_t, binlog_max_total_size, 0,
          "relay mode: purge the oldest copied files while all of them hold more "
          "than this many bytes, once every remembered downstream replica and "
          "consumer has read past them (MySQL 8.4 has no such limit); 0: none");
ABSL_FLAG(std::string, consumers, "",
          "relay mode: named consumers that hold the copy's files, "
          "NAME=PATH[,NAME=PATH...]: each PATH a position store "
          "(binlog/position_store.h) whose source_file is the copy's file the "
          "consumer reads; only read (it must exist at start)");
ABSL_FLAG(uint64_t, force_purge_after_seconds, 0,
          "relay mode: operator limit: purge copied files closed longer ago than "
          "this (as --binlog_expire_logs_seconds) even if "
          "a replica or consumer still needs them (their dumps end with 1236; "
          "logged); 0: none");
ABSL_FLAG(uint64_t, force_max_total_size, 0,
          "relay mode: operator limit: purge the oldest copied files while all of "
          "them hold more than this many bytes, even if a replica or consumer "
          "still needs them (logged); 0: none");
ABSL_FLAG(absl::Duration, retention_interval, absl::Seconds(10),
          "relay mode: how often retention looks at the copy");
ABSL_FLAG(absl::Duration, retention_startup_grace, absl::Seconds(90),
          "relay mode: no purge until this long after startup, so replicas that "
          "followed the relay before a restart reconnect first (MySQL replicas "
          "retry every 60 s by default)");

namespace {

int Usage(const std::string& why) {
  std::cerr << "binlog_server: " << why << "\n" << absl::ProgramUsageMessage() << "\n";
  return 2;
}

// --hash_user: reads one password line from standard input (a trailing
// newline is not part of it) and prints the user's line.
int HashUser(const std::string& user, const std::string& plugin_name) {
  using namespace binlog::server;  // NOLINT
  auto plugin = ParseAuthPlugin(plugin_name);
  if (!plugin.ok()) return Usage(absl::StrCat("--auth_plugin: ", plugin.status().message()));
  if (user.find(':') != std::string::npos || user.find('\n') != std::string::npos) {
    return Usage("--hash_user: a user name cannot hold ':' or a newline");
  }
  std::string password;
  if (!std::getline(std::cin, password) && !std::cin.eof()) {
    std::cerr << "binlog_server: cannot read the password on standard input\n";
    return 1;
  }
  if (!password.empty() && password.back() == '\r') password.pop_back();
  Credential c;
  c.plugin = *plugin;
  if (*plugin == AuthPlugin::kNativePassword) {
    c.authentication_string = NativePasswordHash(password);
  } else {
    auto h = NewCachingSha2PasswordHash(password);
    if (!h.ok()) {
      std::cerr << "binlog_server: " << h.status() << "\n";
      return 1;
    }
    c.authentication_string = *h;
  }
  std::cout << UserLine(user, c) << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using binlog::server::Server;
  using binlog::io::Socket;
  absl::SetProgramUsageMessage(
      "binlog_server --dir=DIR [--basename=NAME] --port=N [--bind=ADDR,...] "
      "[--socket=PATH] "
      "--users=FILE [--server_id=N] [--max_connections=N ...]\n"
      "       binlog_server --hash_user=USER [--auth_plugin=PLUGIN] < password\n"
      "Serves a binlog directory to MySQL and MariaDB replicas on TCP "
      "addresses (127.0.0.1 by default) and/or a unix socket, optionally "
      "over TLS (tools/README.md, binlog_server).");
  std::vector<char*> rest = absl::ParseCommandLine(argc, argv);
  if (rest.size() > 1) return Usage(absl::StrCat("unexpected argument ", rest[1]));
  const std::string hash_user = absl::GetFlag(FLAGS_hash_user);
  if (!hash_user.empty()) return HashUser(hash_user, absl::GetFlag(FLAGS_auth_plugin));
  ServerOptions o;
  o.dir = absl::GetFlag(FLAGS_dir);
  o.basename = absl::GetFlag(FLAGS_basename);
  o.server_id = absl::GetFlag(FLAGS_server_id);
  o.ssl_cert = absl::GetFlag(FLAGS_ssl_cert);
  o.ssl_key = absl::GetFlag(FLAGS_ssl_key);
  o.ssl_ca = absl::GetFlag(FLAGS_ssl_ca);
  o.require_secure_transport = absl::GetFlag(FLAGS_require_secure_transport);
  o.max_connections = absl::GetFlag(FLAGS_max_connections);
  o.max_unauthenticated_connections = absl::GetFlag(FLAGS_max_unauthenticated_connections);
  o.handshake_timeout = absl::GetFlag(FLAGS_handshake_timeout);
  o.auth_failure_delay = absl::GetFlag(FLAGS_auth_failure_delay);
  o.max_handshake_packet = absl::GetFlag(FLAGS_max_handshake_packet);
  o.max_packet = absl::GetFlag(FLAGS_max_packet);
  o.max_query_length = absl::GetFlag(FLAGS_max_query_length);
  o.max_session_variables = absl::GetFlag(FLAGS_max_session_variables);
  o.max_session_variable_bytes = absl::GetFlag(FLAGS_max_session_variable_bytes);
  o.max_replicas = absl::GetFlag(FLAGS_max_replicas);
  o.max_replica_uuids_per_server_id = absl::GetFlag(FLAGS_max_replica_uuids_per_server_id);
  if (absl::GetFlag(FLAGS_replica_expire_seconds) > (uint64_t{1} << 40)) {
    return Usage("--replica_expire_seconds must be at most 2^40");
  }
  o.replica_expire_after =
      absl::Seconds(static_cast<int64_t>(absl::GetFlag(FLAGS_replica_expire_seconds)));
  o.log = [](const std::string& line) { std::cerr << "binlog_server: " << line << std::endl; };
  const int port = absl::GetFlag(FLAGS_port);
  std::vector<std::string> binds;
  for (absl::string_view a : absl::StrSplit(absl::GetFlag(FLAGS_bind), ',')) {
    a = absl::StripAsciiWhitespace(a);
    if (!a.empty()) binds.emplace_back(a);
  }
  const std::string socket_path = absl::GetFlag(FLAGS_socket);
  const std::string users_file = absl::GetFlag(FLAGS_users);
  if (o.dir.empty()) return Usage("--dir is required");
  if (port < -1 || port > 65535) return Usage("--port must be -1 (none) or 0..65535");
  if (port < 0 && socket_path.empty()) return Usage("--port or --socket is required");
  if (port >= 0 && binds.empty()) return Usage("--bind names no address");
  if (users_file.empty()) return Usage("--users is required");
  if (o.ssl_cert.empty() != o.ssl_key.empty()) {
    return Usage("--ssl_cert and --ssl_key go together");
  }
  if (!o.ssl_ca.empty() && o.ssl_cert.empty()) {
    return Usage("--ssl_ca needs --ssl_cert and --ssl_key");
  }
  if (o.max_replicas < 1) return Usage("--max_replicas must be >= 1");
  if (o.max_replica_uuids_per_server_id < 1) {
    return Usage("--max_replica_uuids_per_server_id must be >= 1");
  }
  if (o.max_connections < 1 || o.max_unauthenticated_connections < 1) {
    return Usage("--max_connections and --max_unauthenticated_connections must be >= 1");
  }
  if (o.handshake_timeout <= absl::ZeroDuration() ||
      o.auth_failure_delay < absl::ZeroDuration()) {
    return Usage("--handshake_timeout must be > 0 and --auth_failure_delay >= 0");
  }
  if (o.max_handshake_packet < 1024 || o.max_packet < 1024 || o.max_query_length < 1) {
    return Usage("--max_handshake_packet and --max_packet must be >= 1024, "
                 "--max_query_length >= 1");
  }
  auto users = binlog::server::LoadUsersFile(nullptr, users_file);
  if (!users.ok()) return Usage(absl::StrCat("cannot read --users: ", users.status().message()));
  o.users = std::move(*users);
  const std::string private_key = absl::GetFlag(FLAGS_caching_sha2_password_private_key_path);
  const std::string public_key = absl::GetFlag(FLAGS_caching_sha2_password_public_key_path);
  if (private_key.empty() != public_key.empty()) {
    return Usage("--caching_sha2_password_private_key_path and "
                 "--caching_sha2_password_public_key_path go together");
  }
  if (!private_key.empty()) {
    auto keys = binlog::server::RsaKeyPair::Load(nullptr, private_key, public_key);
    if (!keys.ok()) {
      return Usage(absl::StrCat("cannot read the caching_sha2_password keys: ",
                                keys.status().message()));
    }
    o.rsa_keys = std::move(*keys);
  } else {
    // Generated now rather than at the first client that needs it: a
    // failure shows at startup, and no client waits for it.
    auto keys = binlog::server::RsaKeyPair::Generate();
    if (!keys.ok()) {
      std::cerr << "binlog_server: generating the caching_sha2_password RSA key pair: "
                << keys.status() << "\n";
      return 1;
    }
    o.rsa_keys = std::move(*keys);
  }

  // Signals go to a watcher thread (blocked everywhere else).
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);

  // Relay mode: the copy is kept by a receiver thread and served live
  // through its readers (below its durable published end).
  std::unique_ptr<binlog::server::Relay> relay;
  std::optional<binlog::server::CopyRetentionOptions> retention_options;
  const std::string source = absl::GetFlag(FLAGS_source);
  if (source.empty() &&
      (absl::GetFlag(FLAGS_binlog_expire_logs_seconds) != 0 ||
       absl::GetFlag(FLAGS_binlog_max_total_size) != 0 ||
       absl::GetFlag(FLAGS_force_purge_after_seconds) != 0 ||
       absl::GetFlag(FLAGS_force_max_total_size) != 0 || !absl::GetFlag(FLAGS_consumers).empty())) {
    return Usage("the retention options are for relay mode (--source)");
  }
  std::shared_ptr<const binlog::io::TlsContext> source_tls_context;
  binlog::server::ClientTls source_tls;
  if (!source.empty()) {
    binlog::server::RelayOptions ro;
    ro.dir = o.dir;
    ro.basename = o.basename;
    ro.start_file = absl::GetFlag(FLAGS_source_start_file);
    ro.resume_by_gtid = absl::GetFlag(FLAGS_source_resume_by_gtid);
    binlog::server::SourceOptions& so = ro.source;
    for (absl::string_view one : absl::StrSplit(source, ',')) {
      const std::string item(absl::StripAsciiWhitespace(one));
      binlog::server::SourceAddress a;
      if (!item.empty() && item[0] == '/') {
        a.host = item;
      } else {
        const size_t colon = item.rfind(':');
        int sport = 0;
        if (colon == std::string::npos || !absl::SimpleAtoi(item.substr(colon + 1), &sport) ||
            sport < 1 || sport > 65535) {
          return Usage("--source must be HOST:PORT or a unix socket path (or a "
                       "comma-separated list of them)");
        }
        a.host = item.substr(0, colon);
        if (a.host.size() > 2 && a.host.front() == '[' && a.host.back() == ']') {
          a.host = a.host.substr(1, a.host.size() - 2);
        }
        if (!Socket::IsIpAddress(a.host)) {
          return Usage("--source takes an IPv4 or IPv6 address (no resolver runs) or a "
                       "unix socket path");
        }
        a.port = static_cast<uint16_t>(sport);
      }
      ro.sources.push_back(a);
    }
    so.host = ro.sources.front().host;
    so.port = ro.sources.front().port;
    ro.failover_after = absl::GetFlag(FLAGS_source_failover_after);
    if (ro.failover_after <= absl::ZeroDuration()) {
      return Usage("--source_failover_after must be > 0");
    }
    so.connect_timeout = absl::GetFlag(FLAGS_source_connect_timeout);
    if (so.connect_timeout <= absl::ZeroDuration()) {
      return Usage("--source_connect_timeout must be > 0");
    }
    so.user = absl::GetFlag(FLAGS_source_user);
    if (so.user.empty()) return Usage("--source needs --source_user");
    const std::string pw_file = absl::GetFlag(FLAGS_source_password_file);
    if (!pw_file.empty()) {
      auto pw = binlog::server::LoadPasswordFile(nullptr, pw_file);
      if (!pw.ok()) {
        return Usage(absl::StrCat("--source_password_file: ", pw.status().message()));
      }
      so.password = *pw;
    }
    if (o.server_id == 0) return Usage("--source needs --server_id (this relay's id at the source)");
    so.server_id = o.server_id;
    so.report_host = binds.empty() ? "" : binds[0];
    so.report_port = port > 0 ? static_cast<uint16_t>(port) : 0;
    so.semisync = absl::GetFlag(FLAGS_source_semisync);
    so.get_source_public_key = absl::GetFlag(FLAGS_source_get_public_key);
    so.heartbeat_period = absl::GetFlag(FLAGS_source_heartbeat_period);
    if (so.heartbeat_period <= absl::ZeroDuration()) {
      return Usage("--source_heartbeat_period must be > 0");
    }
    ro.silence_timeout = 5 * so.heartbeat_period;
    const std::string ca = absl::GetFlag(FLAGS_source_ssl_ca);
    if (!ca.empty()) {
      auto ctx = binlog::io::TlsContext::ForClient(ca);
      if (!ctx.ok()) return Usage(absl::StrCat("--source_ssl_ca: ", ctx.status().message()));
      source_tls_context = std::move(*ctx);
      source_tls.context = source_tls_context;
      // Each server's certificate is checked against its own address
      // (SourceAddress::verify_host); a unix socket's is not checked.
      for (binlog::server::SourceAddress& a : ro.sources) {
        if (a.host[0] != '/') a.verify_host = a.host;
      }
      so.tls = &source_tls;
    }
    binlog::server::CopyRetentionOptions rt;
    rt.basename = o.basename;
    rt.expire_after = absl::Seconds(absl::GetFlag(FLAGS_binlog_expire_logs_seconds));
    rt.max_total_bytes = absl::GetFlag(FLAGS_binlog_max_total_size);
    rt.force_purge_after = absl::Seconds(absl::GetFlag(FLAGS_force_purge_after_seconds));
    rt.force_max_total_bytes = absl::GetFlag(FLAGS_force_max_total_size);
    rt.interval = absl::GetFlag(FLAGS_retention_interval);
    rt.startup_grace = absl::GetFlag(FLAGS_retention_startup_grace);
    if (rt.startup_grace < absl::ZeroDuration()) {
      return Usage("--retention_startup_grace must be >= 0");
    }
    rt.replicas_file = o.dir + "/" + o.basename + ".replicas";
    if (rt.interval <= absl::ZeroDuration()) return Usage("--retention_interval must be > 0");
    for (absl::string_view c : absl::StrSplit(absl::GetFlag(FLAGS_consumers), ',')) {
      c = absl::StripAsciiWhitespace(c);
      if (c.empty()) continue;
      const size_t eq = c.find('=');
      if (eq == 0 || eq == absl::string_view::npos || eq + 1 == c.size()) {
        return Usage("--consumers takes NAME=PATH[,NAME=PATH...]");
      }
      rt.consumers.emplace_back(std::string(c.substr(0, eq)), std::string(c.substr(eq + 1)));
    }
    rt.log = [](const std::string& line) { std::cerr << "binlog_server: " << line << std::endl; };
    if (rt.expire_after > absl::ZeroDuration() || rt.max_total_bytes > 0 ||
        rt.force_purge_after > absl::ZeroDuration() || rt.force_max_total_bytes > 0) {
      retention_options = std::move(rt);
    } else if (!rt.consumers.empty()) {
      return Usage("--consumers needs a retention limit (--binlog_expire_logs_seconds, "
                   "--binlog_max_total_size, or a --force_ one)");
    }
    auto r = binlog::server::Relay::Start(ro);
    if (!r.ok()) {
      std::cerr << "binlog_server: the copy in " << o.dir << ": " << r.status() << "\n";
      return 1;
    }
    relay = std::move(*r);
    std::cout << "relaying from " << source << " into " << o.dir << std::endl;
  }

  if (relay != nullptr && relay->mirror()->end().file.empty()) {
    // The server needs the copy's first file (its flavor and checksum
    // setting come from its Format_description). Until the
    // source sends it the relay keeps connecting; a signal ends the wait.
    // Why the source is not reached yet (a refused certificate, a wrong
    // password) is said as it changes, as once the server runs.
    std::cout << "waiting for the source's first file" << std::endl;
    const timespec tick = {0, 100 * 1000 * 1000};
    std::string reported;
    while (relay->mirror()->end().file.empty()) {
      if (sigtimedwait(&set, nullptr, &tick) > 0) {
        absl::Status rs = relay->Stop();
        return rs.ok() ? 0 : 1;
      }
      const binlog::server::Relay::Stats st = relay->stats();
      if (!st.fatal.empty()) {
        std::cerr << "binlog_server: the relay stopped: " << st.fatal << "\n";
        return 1;
      }
      if (!st.connected && !st.last_error.empty() && st.last_error != reported) {
        std::cerr << "binlog_server: relay: " << st.last_error << " (reconnecting)" << std::endl;
        reported = st.last_error;
      }
    }
  }

  if (relay != nullptr) o.mirror = relay->mirror();
  auto server = Server::Create(o);
  if (!server.ok()) {
    std::cerr << "binlog_server: " << server.status() << "\n";
    return 1;
  }
  std::vector<Socket> listeners;
  if (port >= 0) {
    // --port=0: the first address picks a free port; the others take it.
    uint16_t p = static_cast<uint16_t>(port);
    for (const std::string& a : binds) {
      auto l = Socket::ListenTcp(a, p);
      if (!l.ok()) {
        if (absl::IsInvalidArgument(l.status())) {
          return Usage(absl::StrCat("--bind: ", l.status().message()));
        }
        std::cerr << "binlog_server: " << l.status() << "\n";
        return 1;
      }
      p = l->port();
      (*server)->set_port(p);
      std::cout << "listening "
                << (a.find(':') != std::string::npos ? absl::StrCat("[", a, "]") : a) << ":"
                << p << std::endl;
      listeners.push_back(std::move(*l));
    }
  }
  if (!socket_path.empty()) {
    auto l = Socket::ListenUnix(socket_path);
    if (!l.ok()) {
      std::cerr << "binlog_server: " << l.status() << "\n";
      return 1;
    }
    std::cout << "listening " << socket_path << std::endl;
    listeners.push_back(std::move(*l));
  }
  Server* srv = server->get();
  // Relay mode: retention of the copy, following the downstream replicas
  // and the named consumers. Set up before the watcher thread starts, so
  // an error here returns with no thread to end.
  std::unique_ptr<binlog::server::CopyRetention> retention;
  if (relay != nullptr && retention_options.has_value()) {
    auto r = binlog::server::CopyRetention::Create(relay->mirror(), srv, *retention_options);
    if (!r.ok()) {
      std::cerr << "binlog_server: retention of the copy: " << r.status().message() << "\n";
      absl::Status rs = relay->Stop();
      if (!rs.ok()) std::cerr << "binlog_server: closing the copy: " << rs << "\n";
      return 1;
    }
    retention = std::move(*r);
  }
  // Relay mode: the watcher also reports the relay's errors as they
  // change, and ends the server (exit status 1) if the copy fails.
  std::atomic<int> exit_status{0};
  binlog::server::Relay* rel = relay.get();
  std::thread watcher([srv, set, rel, &exit_status]() {
    int sig = 0;
    if (rel == nullptr) {
      sigwait(&set, &sig);
    } else {
      std::string reported;
      std::string following;
      const timespec tick = {1, 0};
      while (sigtimedwait(&set, nullptr, &tick) <= 0) {
        const binlog::server::Relay::Stats st = rel->stats();
        if (!st.fatal.empty()) {
          std::cerr << "binlog_server: the relay stopped: " << st.fatal << std::endl;
          exit_status = 1;
          break;
        }
        if (!st.connected && st.last_error != reported) {
          std::cerr << "binlog_server: relay: " << st.last_error << " (reconnecting)"
                    << std::endl;
          reported = st.last_error;
        }
        // The server followed, when it changes (a failover).
        if (st.connected && st.source != following) {
          std::cerr << "binlog_server: relay: following " << st.source << std::endl;
          following = st.source;
          reported.clear();
        }
      }
    }
    srv->Shutdown();
    // Shutdown ends every session promptly; a second signal does not
    // wait even for that.
    sigwait(&set, &sig);
    std::cerr << "binlog_server: second signal, exiting without waiting\n";
    std::_Exit(1);
  });
  if (retention != nullptr) retention->Start();
  std::vector<std::thread> runners;
  for (Socket& l : listeners) runners.emplace_back([srv, &l]() { srv->Run(&l); });
  for (std::thread& t : runners) t.join();
  // The watcher stays in sigwait for a second signal: it is left to the
  // process's exit (every return below; a joinable thread's destruction
  // would abort).
  watcher.detach();
  if (retention != nullptr) retention->Stop();
  server->reset();  // ends the sessions
  if (relay != nullptr) {
    // Stops the receiver and closes the copy: a partial transaction at its
    // end is cut, everything else is durable.
    absl::Status rs = relay->Stop();
    if (!rs.ok()) {
      std::cerr << "binlog_server: closing the copy: " << rs << "\n";
      return 1;
    }
  }
  if (exit_status.load() != 0) return exit_status.load();
  // Removes the socket file only if it is still ours.
  for (Socket& l : listeners) l.RemoveUnixPath();
  return 0;
}
