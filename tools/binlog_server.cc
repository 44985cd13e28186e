// binlog_server: serves a binlog directory to MySQL and MariaDB replicas
// over the replication protocol (tools/README.md, "binlog_server").
//
//   binlog_server --dir=DIR --basename=NAME --port=N [--socket=PATH]
//                 --users=FILE [--server_id=N]
//
// Listens on 127.0.0.1:N (N = 0: a free port) and, with --socket, on a
// unix socket. Prints "listening 127.0.0.1:<port>" once ready. The users
// file has one `user:password` per line (mysql_native_password). SIGTERM
// or SIGINT: dumps get ER_SERVER_SHUTDOWN, the process exits 0.

#include <signal.h>
#include <stdio.h>

#include <fstream>
#include <iostream>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"
#include "tools/server/server.h"
#include "tools/server/socket.h"

namespace {

int Usage(const std::string& why) {
  std::cerr << "binlog_server: " << why << "\n"
            << "usage: binlog_server --dir=DIR --basename=NAME --port=N "
               "[--socket=PATH] --users=FILE [--server_id=N]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using binlog::server::Server;
  using binlog::server::ServerOptions;
  using binlog::server::Socket;
  ServerOptions o;
  std::string users_file, socket_path;
  int port = -1;
  for (int i = 1; i < argc; ++i) {
    absl::string_view a = argv[i];
    uint32_t v = 0;
    if (absl::ConsumePrefix(&a, "--dir=")) {
      o.dir = std::string(a);
    } else if (absl::ConsumePrefix(&a, "--basename=")) {
      o.basename = std::string(a);
    } else if (absl::ConsumePrefix(&a, "--port=")) {
      if (!absl::SimpleAtoi(a, &v) || v > 65535) return Usage("bad --port");
      port = static_cast<int>(v);
    } else if (absl::ConsumePrefix(&a, "--socket=")) {
      socket_path = std::string(a);
    } else if (absl::ConsumePrefix(&a, "--users=")) {
      users_file = std::string(a);
    } else if (absl::ConsumePrefix(&a, "--server_id=")) {
      if (!absl::SimpleAtoi(a, &v) || v == 0) return Usage("bad --server_id");
      o.server_id = v;
    } else {
      return Usage("unknown argument " + std::string(a));
    }
  }
  if (o.dir.empty()) return Usage("--dir is required");
  if (port < 0 && socket_path.empty()) return Usage("--port or --socket is required");
  if (users_file.empty()) return Usage("--users is required");
  std::ifstream in(users_file);
  if (!in) return Usage("cannot read --users file " + users_file);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    size_t colon = line.find(':');
    if (colon == std::string::npos) return Usage("users file line without ':'");
    o.users[line.substr(0, colon)] = line.substr(colon + 1);
  }

  // Signals go to a watcher thread (blocked everywhere else).
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);

  auto server = Server::Create(o);
  if (!server.ok()) {
    std::cerr << "binlog_server: " << server.status() << "\n";
    return 1;
  }
  std::vector<Socket> listeners;
  if (port >= 0) {
    auto l = Socket::ListenLoopback(static_cast<uint16_t>(port));
    if (!l.ok()) {
      std::cerr << "binlog_server: " << l.status() << "\n";
      return 1;
    }
    (*server)->set_port(l->port());
    std::cout << "listening 127.0.0.1:" << l->port() << std::endl;
    listeners.push_back(std::move(*l));
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
  std::thread watcher([srv, set]() {
    int sig = 0;
    sigwait(&set, &sig);
    srv->Shutdown();
  });
  std::vector<std::thread> runners;
  for (Socket& l : listeners) runners.emplace_back([srv, &l]() { srv->Run(&l); });
  for (std::thread& t : runners) t.join();
  server->reset();  // ends the sessions
  // Removes the socket file only if it is still ours.
  for (Socket& l : listeners) l.RemoveUnixPath();
  watcher.detach();
  return 0;
}
