// File: io/socket.h
//
// The few socket calls binlog_server needs: listen on IPv4 / IPv6
// addresses or a unix socket, accept, blocking reads/writes with deadlines, and shutdown; and
// TLS on a connected socket (StartTls, with a TlsContext from io/tls.h),
// after which the same reads and writes, with the same deadlines, carry
// TLS records.
//
// io/ is where the project touches the OS, so the server's sockets live
// here, in a target of their own (//io:socket): the storage library
// (//binlog) never depends on it and stays free of networking; the server
// library (//server) and the tests and benchmarks that talk to it do.
//
// Thread safety: a Socket is thread-compatible; Close() may be called from
// another thread to wake a blocked Accept (shutdown), and ShutdownRead()
// from another thread while one thread reads and writes (TLS included:
// it touches only the descriptor).
// Errors: absl::Status carrying the errno text; DeadlineExceeded when a
// deadline passes, Unavailable when the peer closed the connection.

#ifndef BINLOG_IO_SOCKET_H_
#define BINLOG_IO_SOCKET_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "io/tls.h"

struct ssl_st;

namespace binlog {
namespace io {

class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() { Close(); }
  Socket(Socket&& o) noexcept { *this = std::move(o); }
  Socket& operator=(Socket&& o) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  // A listening socket on `address`:`port`, `address` an IPv4 or IPv6
  // literal ("127.0.0.1", "::1", "0.0.0.0", "::"; host names are refused
  // with InvalidArgument: no resolver runs at startup). An IPv6 listener
  // takes IPv6 only (IPV6_V6ONLY), so "::" and "0.0.0.0" can be bound side
  // by side. `port` 0: a free port (see port()).
  static absl::StatusOr<Socket> ListenTcp(const std::string& address, uint16_t port);
  // ListenTcp("127.0.0.1", port).
  static absl::StatusOr<Socket> ListenLoopback(uint16_t port);
  // A listening unix socket at `path`. Something already at `path` is
  // replaced only if it is a stale socket (connecting to it is refused:
  // its server is gone); FailedPrecondition for anything that is not a
  // socket and for a socket a server is listening on.
  static absl::StatusOr<Socket> ListenUnix(const std::string& path);
  // For a ListenUnix socket: removes its file if the path still names the
  // socket this listener bound (not one another server bound since).
  void RemoveUnixPath();
  // A client connection. The connect is made by `deadline`, else
  // DeadlineExceeded (a host that drops the SYNs, a listener whose backlog
  // is full); without one, kConnectTimeout from now. `before_connect`, if
  // set, is called with the socket before the connect starts: a
  // ShutdownHandle made of it then interrupts the connect from another
  // thread (Unavailable). A unix socket whose listener's backlog is full
  // fails at once (Unavailable), as a non-blocking connect does.
  static constexpr absl::Duration kConnectTimeout = absl::Seconds(30);
  using BeforeConnect = std::function<void(const Socket&)>;
  static absl::StatusOr<Socket> ConnectTcp(const std::string& address, uint16_t port,
                                           absl::Time deadline,
                                           const BeforeConnect& before_connect = nullptr);
  static absl::StatusOr<Socket> ConnectTcp(const std::string& address, uint16_t port) {
    return ConnectTcp(address, port, absl::Now() + kConnectTimeout);
  }
  static absl::StatusOr<Socket> ConnectLoopback(uint16_t port);
  static absl::StatusOr<Socket> ConnectUnix(const std::string& path,
                                            const BeforeConnect& before_connect = nullptr);
  // Whether `text` is an IPv4 or IPv6 address literal (what ConnectTcp and
  // ListenTcp take; no resolver runs).
  static bool IsIpAddress(const std::string& text);

  // The bound port of a TCP listener.
  uint16_t port() const;

  // Waits up to `timeout` for a connection. DeadlineExceeded if none came.
  absl::StatusOr<Socket> Accept(absl::Duration timeout);

  // Reads exactly `n` bytes before `deadline`.
  absl::Status ReadFull(char* buf, size_t n, absl::Time deadline);
  // Reads what is there, 1..n bytes, waiting until `deadline` for the
  // first; Unavailable when the peer closed.
  absl::StatusOr<size_t> ReadSome(char* buf, size_t n, absl::Time deadline);
  // Writes all of `data` before `deadline`. With `cancel`, a write that
  // waits for the peer to read checks it every 100 ms; once it is set the
  // deadline becomes at most a second away: a server shutting down does
  // not wait out a stalled peer's deadline (DeadlineExceeded then).
  absl::Status WriteAll(absl::string_view data, absl::Time deadline,
                        const std::atomic<bool>* cancel = nullptr);
  // True when a read would not block (data, or the peer closed) within
  // `timeout`.
  bool WaitReadable(absl::Duration timeout);

  // --- TLS -------------------------------------------------------------
  // Runs the TLS handshake on this connected socket, as the server or as
  // the client according to `ctx` (which the socket keeps), ending by
  // `deadline` (DeadlineExceeded otherwise). A client verifies that the
  // server's certificate chains to the context's CA and, with
  // `verify_host`, names it (an IP literal is matched against the
  // certificate's IP addresses, a name against its DNS names and CN).
  // After OK, every read and write goes through TLS; after an error the
  // stream is unusable: close the socket. Data the peer sent before its
  // TLS ClientHello must have been read exactly (the MySQL SSLRequest):
  // nothing may be buffered above this socket.
  absl::Status StartTls(std::shared_ptr<const TlsContext> ctx, absl::Time deadline,
                        const std::string& verify_host = "");
  bool tls() const { return ssl_ != nullptr; }
  // The negotiated protocol ("TLSv1.3") and cipher; empty without TLS.
  std::string tls_version() const;
  std::string tls_cipher() const;
  // Whether this is a unix-socket connection (or listener).
  bool is_unix() const { return unix_; }
  // The peer's IP address as text ("127.0.0.1", "::1"); "localhost" for a
  // unix socket, "" if unknown.
  std::string peer_address() const;

  void Close();
  // Shuts the connection down (wakes a reader in another thread) without
  // releasing the descriptor.
  void Shutdown();
  // Shuts down the reading side only: a reader in another thread wakes
  // (reads see end of file) while writes still go out (a last error
  // packet). Safe from any thread while the socket is open.
  void ShutdownRead() const;
  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }

 private:
  // TLS: 1..n decrypted bytes, waiting until `deadline` for the first.
  absl::StatusOr<size_t> TlsRead(char* buf, size_t n, absl::Time deadline);

  int fd_ = -1;
  bool unix_ = false;
  ssl_st* ssl_ = nullptr;
  std::shared_ptr<const TlsContext> tls_ctx_;
  // A fatal TLS error happened: no close_notify at Close().
  bool tls_broken_ = false;
  // ListenUnix: the path and the identity of the socket file it bound.
  std::string unix_path_;
  uint64_t unix_dev_ = 0;
  uint64_t unix_ino_ = 0;
};

// ShutdownHandle: shuts a connection down from another thread (a read or
// write blocked on it, in any thread, fails at once) while the Socket
// itself is owned, moved and closed elsewhere. It holds its own duplicate
// of the descriptor: the connection stays open until both the Socket and
// the handle are closed, and Shutdown() never touches a descriptor number
// the process has reused.
// Thread safety: Shutdown() is safe from any thread; construction,
// assignment and destruction are not concurrent with it.
class ShutdownHandle {
 public:
  ShutdownHandle() = default;
  // Duplicates `s`'s descriptor; invalid() if `s` is closed or the
  // duplicate fails (Shutdown then does nothing).
  explicit ShutdownHandle(const Socket& s);
  ~ShutdownHandle();
  ShutdownHandle(ShutdownHandle&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  ShutdownHandle& operator=(ShutdownHandle&& o) noexcept;
  ShutdownHandle(const ShutdownHandle&) = delete;
  ShutdownHandle& operator=(const ShutdownHandle&) = delete;

  // shutdown(SHUT_RDWR) of the connection.
  void Shutdown() const;
  bool valid() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

}  // namespace io
}  // namespace binlog

#endif  // BINLOG_IO_SOCKET_H_
