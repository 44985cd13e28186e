#include "io/socket.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace binlog {
namespace io {
namespace {

absl::Status Errno(absl::string_view what) {
  return absl::UnavailableError(absl::StrCat(what, ": ", std::strerror(errno)));
}

int PollMs(absl::Duration d) {
  if (d <= absl::ZeroDuration()) return 0;
  int64_t ms = absl::ToInt64Milliseconds(d) + 1;
  return ms > 1000000 ? 1000000 : static_cast<int>(ms);
}

// Waits for `events` on fd until `deadline`.
absl::Status WaitFor(int fd, short events, absl::Time deadline) {
  while (true) {
    absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return absl::DeadlineExceededError("socket timeout");
    pollfd p{fd, events, 0};
    int r = ::poll(&p, 1, PollMs(left));
    if (r > 0) return absl::OkStatus();
    if (r < 0 && errno != EINTR) return Errno("poll");
  }
}

bool FillUnixAddr(const std::string& path, sockaddr_un* a) {
  std::memset(a, 0, sizeof(*a));
  a->sun_family = AF_UNIX;
  if (path.size() >= sizeof(a->sun_path)) return false;
  std::memcpy(a->sun_path, path.c_str(), path.size() + 1);
  return true;
}

// --- TLS --------------------------------------------------------------------

// OpenSSL reaches the descriptor through this BIO: non-blocking send and
// recv (the socket's loops wait with poll() and deadlines), MSG_NOSIGNAL
// so a vanished peer is an error, not a SIGPIPE.
int Fd(BIO* b) { return static_cast<int>(reinterpret_cast<intptr_t>(BIO_get_data(b))); }

int BioWrite(BIO* b, const char* data, int n) {
  BIO_clear_retry_flags(b);
  ssize_t r = ::send(Fd(b), data, static_cast<size_t>(n), MSG_DONTWAIT | MSG_NOSIGNAL);
  if (r >= 0) return static_cast<int>(r);
  if (errno == EAGAIN || errno == EINTR) BIO_set_retry_write(b);
  return -1;
}

int BioRead(BIO* b, char* out, int n) {
  BIO_clear_retry_flags(b);
  ssize_t r = ::recv(Fd(b), out, static_cast<size_t>(n), MSG_DONTWAIT);
  if (r >= 0) return static_cast<int>(r);  // 0: end of stream
  if (errno == EAGAIN || errno == EINTR) BIO_set_retry_read(b);
  return -1;
}

long BioCtrl(BIO*, int cmd, long, void*) { return cmd == BIO_CTRL_FLUSH ? 1 : 0; }

int BioCreate(BIO* b) {
  BIO_set_init(b, 1);
  return 1;
}

BIO_METHOD* SocketBioMethod() {
  static BIO_METHOD* const method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "binlog socket");
    BIO_meth_set_write(m, BioWrite);
    BIO_meth_set_read(m, BioRead);
    BIO_meth_set_ctrl(m, BioCtrl);
    BIO_meth_set_create(m, BioCreate);
    return m;
  }();
  return method;
}

// The reason for the last TLS failure on this thread, the queue cleared.
std::string TlsError() {
  const unsigned long e = ERR_peek_error();
  if (e == 0) return std::strerror(errno);
  char buf[256];
  ERR_error_string_n(e, buf, sizeof(buf));
  ERR_clear_error();
  return buf;
}

// A failed SSL_* call: Unavailable, "connection closed by peer" for an
// end of stream (with or without close_notify).
absl::Status TlsFailure(SSL* ssl, int ret, absl::string_view what) {
  const int e = SSL_get_error(ssl, ret);
  const unsigned long q = ERR_peek_error();
  if (e == SSL_ERROR_ZERO_RETURN || (e == SSL_ERROR_SYSCALL && q == 0) ||
      (e == SSL_ERROR_SSL && ERR_GET_REASON(q) == SSL_R_UNEXPECTED_EOF_WHILE_READING)) {
    ERR_clear_error();
    return absl::UnavailableError("connection closed by peer");
  }
  return absl::UnavailableError(absl::StrCat(what, ": ", TlsError()));
}

bool IsIpLiteral(const std::string& host) {
  unsigned char buf[sizeof(in6_addr)];
  return ::inet_pton(AF_INET, host.c_str(), buf) == 1 ||
         ::inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

// An IPv4 or IPv6 literal and a port as a socket address.
bool FillTcpAddr(const std::string& address, uint16_t port, sockaddr_storage* a,
                 socklen_t* len) {
  std::memset(a, 0, sizeof(*a));
  auto* v4 = reinterpret_cast<sockaddr_in*>(a);
  if (::inet_pton(AF_INET, address.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    *len = sizeof(sockaddr_in);
    return true;
  }
  auto* v6 = reinterpret_cast<sockaddr_in6*>(a);
  if (::inet_pton(AF_INET6, address.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    *len = sizeof(sockaddr_in6);
    return true;
  }
  return false;
}

// "127.0.0.1:3306", "[::1]:3306".
std::string TcpName(const std::string& address, uint16_t port) {
  return address.find(':') != std::string::npos ? absl::StrCat("[", address, "]:", port)
                                                 : absl::StrCat(address, ":", port);
}

}  // namespace

Socket& Socket::operator=(Socket&& o) noexcept {
  if (this != &o) {
    Close();
    fd_ = o.fd_;
    o.fd_ = -1;
    unix_path_ = std::move(o.unix_path_);
    o.unix_path_.clear();
    unix_dev_ = o.unix_dev_;
    unix_ino_ = o.unix_ino_;
    unix_ = o.unix_;
    ssl_ = o.ssl_;
    o.ssl_ = nullptr;
    tls_ctx_ = std::move(o.tls_ctx_);
    tls_broken_ = o.tls_broken_;
  }
  return *this;
}

absl::StatusOr<Socket> Socket::ListenTcp(const std::string& address, uint16_t port) {
  sockaddr_storage a;
  socklen_t len = 0;
  if (!FillTcpAddr(address, port, &a, &len)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", address, "' is not an IPv4 or IPv6 address (host names are not resolved)"));
  }
  Socket s(::socket(a.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s.valid()) return Errno(absl::StrCat("socket for ", address));
  int one = 1;
  ::setsockopt(s.fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (a.ss_family == AF_INET6) {
    ::setsockopt(s.fd_, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
  }
  if (::bind(s.fd_, reinterpret_cast<sockaddr*>(&a), len) != 0) {
    return Errno(absl::StrCat("bind ", TcpName(address, port)));
  }
  if (::listen(s.fd_, 64) != 0) return Errno("listen");
  return s;
}

absl::StatusOr<Socket> Socket::ListenLoopback(uint16_t port) {
  return ListenTcp("127.0.0.1", port);
}

absl::StatusOr<Socket> Socket::ListenUnix(const std::string& path) {
  sockaddr_un a;
  if (!FillUnixAddr(path, &a)) return absl::InvalidArgumentError("socket path too long");
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      return absl::FailedPreconditionError(
          absl::StrCat("refusing to replace ", path, ": it exists and is not a socket"));
    }
    // A socket file: stale if nobody accepts on it. Non-blocking, so a
    // live server with a full backlog (EAGAIN) counts as live.
    Socket probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!probe.valid()) return Errno("socket");
    if (::connect(probe.fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 ||
        errno == EAGAIN || errno == EINPROGRESS) {
      return absl::FailedPreconditionError(
          absl::StrCat("another server is listening on ", path));
    }
    if (errno != ECONNREFUSED) {
      return Errno(absl::StrCat("refusing to replace socket ", path, ": connect"));
    }
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      return Errno(absl::StrCat("remove stale socket ", path));
    }
  } else if (errno != ENOENT) {
    return Errno(absl::StrCat("lstat ", path));
  }
  Socket s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s.valid()) return Errno("socket");
  if (::bind(s.fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    return Errno(absl::StrCat("bind ", path));
  }
  if (::listen(s.fd_, 64) != 0) return Errno("listen");
  s.unix_ = true;
  if (::lstat(path.c_str(), &st) == 0) {
    s.unix_path_ = path;
    s.unix_dev_ = static_cast<uint64_t>(st.st_dev);
    s.unix_ino_ = static_cast<uint64_t>(st.st_ino);
  }
  return s;
}

void Socket::RemoveUnixPath() {
  if (unix_path_.empty()) return;
  struct stat st;
  if (::lstat(unix_path_.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) &&
      static_cast<uint64_t>(st.st_dev) == unix_dev_ &&
      static_cast<uint64_t>(st.st_ino) == unix_ino_) {
    ::unlink(unix_path_.c_str());
  }
  unix_path_.clear();
}

absl::StatusOr<Socket> Socket::ConnectTcp(const std::string& address, uint16_t port,
                                          absl::Time deadline,
                                          const BeforeConnect& before_connect) {
  sockaddr_storage a;
  socklen_t len = 0;
  if (!FillTcpAddr(address, port, &a, &len)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", address, "' is not an IPv4 or IPv6 address"));
  }
  // Non-blocking, so that the connect waits in poll (until the deadline,
  // or a shutdown from another thread) rather than in the kernel's SYN
  // retries (about two minutes).
  Socket s(::socket(a.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!s.valid()) return Errno("socket");
  if (before_connect) before_connect(s);
  const std::string name = TcpName(address, port);
  if (::connect(s.fd_, reinterpret_cast<sockaddr*>(&a), len) != 0) {
    if (errno != EINPROGRESS) return Errno(absl::StrCat("connect ", name));
    for (;;) {
      const absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) {
        return absl::DeadlineExceededError(absl::StrCat("connect ", name, ": timed out"));
      }
      pollfd p{s.fd_, POLLOUT, 0};
      int r = ::poll(&p, 1, PollMs(left));
      if (r < 0 && errno != EINTR) return Errno("poll");
      if (r > 0) break;
    }
    int err = 0;
    socklen_t elen = sizeof(err);
    if (::getsockopt(s.fd_, SOL_SOCKET, SO_ERROR, &err, &elen) != 0) return Errno("getsockopt");
    if (err != 0) {
      errno = err;
      return Errno(absl::StrCat("connect ", name));
    }
    // A shutdown from another thread ends the wait without an error code:
    // the socket is then not connected.
    sockaddr_storage peer;
    socklen_t plen = sizeof(peer);
    if (::getpeername(s.fd_, reinterpret_cast<sockaddr*>(&peer), &plen) != 0) {
      return absl::UnavailableError(absl::StrCat("connect ", name, ": interrupted"));
    }
  }
  // Reads and writes wait in poll with their deadlines: blocking mode again.
  const int fl = ::fcntl(s.fd_, F_GETFL);
  if (fl < 0 || ::fcntl(s.fd_, F_SETFL, fl & ~O_NONBLOCK) != 0) return Errno("fcntl");
  int one = 1;
  ::setsockopt(s.fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return s;
}

bool Socket::IsIpAddress(const std::string& text) {
  sockaddr_storage a;
  socklen_t len = 0;
  return FillTcpAddr(text, 0, &a, &len);
}

absl::StatusOr<Socket> Socket::ConnectLoopback(uint16_t port) {
  return ConnectTcp("127.0.0.1", port);
}

absl::StatusOr<Socket> Socket::ConnectUnix(const std::string& path,
                                           const BeforeConnect& before_connect) {
  sockaddr_un a;
  if (!FillUnixAddr(path, &a)) return absl::InvalidArgumentError("socket path too long");
  // Non-blocking: a listener whose backlog is full fails the connect at
  // once (EAGAIN) instead of blocking it without a bound.
  Socket s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!s.valid()) return Errno("socket");
  if (before_connect) before_connect(s);
  if (::connect(s.fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    if (errno == EAGAIN) {
      return absl::UnavailableError(absl::StrCat("connect ", path, ": its backlog is full"));
    }
    return Errno("connect");
  }
  const int fl = ::fcntl(s.fd_, F_GETFL);
  if (fl < 0 || ::fcntl(s.fd_, F_SETFL, fl & ~O_NONBLOCK) != 0) return Errno("fcntl");
  s.unix_ = true;
  return s;
}

uint16_t Socket::port() const {
  sockaddr_storage a{};
  socklen_t len = sizeof(a);
  if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) return 0;
  if (a.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&a)->sin_port);
  if (a.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&a)->sin6_port);
  return 0;
}

absl::StatusOr<Socket> Socket::Accept(absl::Duration timeout) {
  pollfd p{fd_, POLLIN, 0};
  int r = ::poll(&p, 1, PollMs(timeout));
  if (r == 0 || (r < 0 && errno == EINTR)) return absl::DeadlineExceededError("no connection");
  if (r < 0) return Errno("poll");
  int fd = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) {
    if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED) {
      return absl::DeadlineExceededError("no connection");
    }
    return Errno("accept");
  }
  Socket out(fd);
  out.unix_ = unix_;
  if (!unix_) {
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  return out;
}

absl::Status Socket::ReadFull(char* buf, size_t n, absl::Time deadline) {
  size_t done = 0;
  if (ssl_ != nullptr) {
    while (done < n) {
      absl::StatusOr<size_t> r = TlsRead(buf + done, n - done, deadline);
      if (!r.ok()) return r.status();
      done += *r;
    }
    return absl::OkStatus();
  }
  while (done < n) {
    absl::Status w = WaitFor(fd_, POLLIN, deadline);
    if (!w.ok()) return w;
    ssize_t r = ::recv(fd_, buf + done, n - done, MSG_DONTWAIT);
    if (r == 0) return absl::UnavailableError("connection closed by peer");
    if (r < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return Errno("recv");
    }
    done += static_cast<size_t>(r);
  }
  return absl::OkStatus();
}

absl::StatusOr<size_t> Socket::ReadSome(char* buf, size_t n, absl::Time deadline) {
  if (ssl_ != nullptr) return TlsRead(buf, n, deadline);
  while (true) {
    ssize_t r = ::recv(fd_, buf, n, MSG_DONTWAIT);
    if (r > 0) return static_cast<size_t>(r);
    if (r == 0) return absl::UnavailableError("connection closed by peer");
    if (errno != EINTR && errno != EAGAIN) return Errno("recv");
    if (errno == EAGAIN) {
      absl::Status w = WaitFor(fd_, POLLIN, deadline);
      if (!w.ok()) return w;
    }
  }
}

absl::Status Socket::WriteAll(absl::string_view data, absl::Time deadline,
                              const std::atomic<bool>* cancel) {
  size_t done = 0;
  while (done < data.size()) {
    short wait_for = POLLOUT;
    if (ssl_ != nullptr) {
      ERR_clear_error();
      const int k = static_cast<int>(std::min<size_t>(data.size() - done, INT_MAX));
      const int r = SSL_write(ssl_, data.data() + done, k);
      if (r > 0) {
        done += static_cast<size_t>(r);
        continue;
      }
      const int e = SSL_get_error(ssl_, r);
      if (e == SSL_ERROR_WANT_READ) {
        wait_for = POLLIN;
      } else if (e != SSL_ERROR_WANT_WRITE) {
        tls_broken_ = true;
        return TlsFailure(ssl_, r, "TLS write");
      }
    } else {
      ssize_t r = ::send(fd_, data.data() + done, data.size() - done,
                         MSG_DONTWAIT | MSG_NOSIGNAL);
      if (r >= 0) {
        done += static_cast<size_t>(r);
        continue;
      }
      if (errno == EINTR) continue;
      if (errno != EAGAIN) return Errno("send");
    }
    if (cancel != nullptr && cancel->load(std::memory_order_relaxed) &&
        deadline > absl::Now() + absl::Seconds(1)) {
      // Shutting down: a peer that reads gets the rest (its last
      // packet, the shutdown error) within a second; a stalled one
      // is given up on then.
      deadline = absl::Now() + absl::Seconds(1);
    }
    const absl::Time slice =
        cancel != nullptr ? std::min(deadline, absl::Now() + absl::Milliseconds(100)) : deadline;
    absl::Status w = WaitFor(fd_, wait_for, slice);
    if (!w.ok() && !(absl::IsDeadlineExceeded(w) && slice < deadline)) return w;
  }
  return absl::OkStatus();
}

absl::StatusOr<size_t> Socket::TlsRead(char* buf, size_t n, absl::Time deadline) {
  while (true) {
    ERR_clear_error();
    const int r = SSL_read(ssl_, buf, static_cast<int>(std::min<size_t>(n, INT_MAX)));
    if (r > 0) return static_cast<size_t>(r);
    const int e = SSL_get_error(ssl_, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
      absl::Status w = WaitFor(fd_, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline);
      if (!w.ok()) return w;
      continue;
    }
    tls_broken_ = true;
    return TlsFailure(ssl_, r, "TLS read");
  }
}

absl::Status Socket::StartTls(std::shared_ptr<const TlsContext> ctx, absl::Time deadline,
                              const std::string& verify_host) {
  if (!valid()) return absl::FailedPreconditionError("StartTls on a closed socket");
  if (ssl_ != nullptr) return absl::FailedPreconditionError("TLS already started");
  ERR_clear_error();
  SSL* ssl = SSL_new(ctx->native());
  if (ssl == nullptr) return absl::InternalError(absl::StrCat("SSL_new: ", TlsError()));
  BIO* bio = BIO_new(SocketBioMethod());
  if (bio == nullptr) {
    SSL_free(ssl);
    return absl::InternalError(absl::StrCat("BIO_new: ", TlsError()));
  }
  BIO_set_data(bio, reinterpret_cast<void*>(static_cast<intptr_t>(fd_)));
  SSL_set_bio(ssl, bio, bio);
  ssl_ = ssl;
  tls_ctx_ = std::move(ctx);
  if (tls_ctx_->is_server()) {
    SSL_set_accept_state(ssl);
  } else {
    if (!verify_host.empty()) {
      const bool ip = IsIpLiteral(verify_host);
      const int ok = ip ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), verify_host.c_str())
                        : SSL_set1_host(ssl, verify_host.c_str());
      if (ok != 1 || (!ip && SSL_set_tlsext_host_name(ssl, verify_host.c_str()) != 1)) {
        tls_broken_ = true;
        return absl::InvalidArgumentError(
            absl::StrCat("cannot verify TLS host '", verify_host, "': ", TlsError()));
      }
    }
    SSL_set_connect_state(ssl);
  }
  while (true) {
    ERR_clear_error();
    const int r = SSL_do_handshake(ssl);
    if (r == 1) return absl::OkStatus();
    const int e = SSL_get_error(ssl, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
      absl::Status w = WaitFor(fd_, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline);
      if (!w.ok()) {
        tls_broken_ = true;
        return absl::Status(w.code(), absl::StrCat("TLS handshake: ", w.message()));
      }
      continue;
    }
    tls_broken_ = true;
    const long verify = SSL_get_verify_result(ssl);
    absl::Status s = TlsFailure(ssl, r, "TLS handshake failed");
    if (verify != X509_V_OK) {
      return absl::UnavailableError(
          absl::StrCat(s.message(), " (certificate: ", X509_verify_cert_error_string(verify), ")"));
    }
    if (s.message() == "connection closed by peer") {
      return absl::UnavailableError("TLS handshake failed: connection closed by peer");
    }
    return s;
  }
}

std::string Socket::peer_address() const {
  if (unix_) return "localhost";
  sockaddr_storage a{};
  socklen_t len = sizeof(a);
  if (fd_ < 0 || ::getpeername(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) return "";
  char buf[INET6_ADDRSTRLEN] = {};
  const void* addr = a.ss_family == AF_INET6
                         ? static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&a)->sin6_addr)
                         : static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&a)->sin_addr);
  if (::inet_ntop(a.ss_family, addr, buf, sizeof(buf)) == nullptr) return "";
  return buf;
}

std::string Socket::tls_version() const {
  return ssl_ != nullptr ? SSL_get_version(ssl_) : "";
}

std::string Socket::tls_cipher() const {
  if (ssl_ == nullptr) return "";
  const char* c = SSL_get_cipher_name(ssl_);
  return c != nullptr ? c : "";
}

bool Socket::WaitReadable(absl::Duration timeout) {
  if (ssl_ != nullptr) {
    // Readable means decrypted data (or the end, or an error a read then
    // reports): bytes on the socket may be a partial record, or a record
    // that carries no data.
    const absl::Time deadline = absl::Now() + timeout;
    while (true) {
      if (SSL_pending(ssl_) > 0) return true;
      ERR_clear_error();
      char c;
      const int r = SSL_peek(ssl_, &c, 1);
      if (r > 0) return true;
      const int e = SSL_get_error(ssl_, r);
      if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
        ERR_clear_error();
        return true;
      }
      pollfd p{fd_, static_cast<short>(e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT), 0};
      const int pr = ::poll(&p, 1, PollMs(deadline - absl::Now()));
      if (pr == 0) return false;
      if (pr < 0 && errno != EINTR) return true;
    }
  }
  pollfd p{fd_, POLLIN, 0};
  int r = ::poll(&p, 1, PollMs(timeout));
  return r > 0;
}

void Socket::Shutdown() {
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

ShutdownHandle::ShutdownHandle(const Socket& s) {
  if (s.fd() >= 0) fd_ = ::fcntl(s.fd(), F_DUPFD_CLOEXEC, 0);
}

ShutdownHandle::~ShutdownHandle() {
  if (fd_ >= 0) ::close(fd_);
}

ShutdownHandle& ShutdownHandle::operator=(ShutdownHandle&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

void ShutdownHandle::Shutdown() const {
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

void Socket::ShutdownRead() const {
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RD);
}

void Socket::Close() {
  if (ssl_ != nullptr) {
    // A close_notify, best effort (never waits), unless the stream failed.
    if (!tls_broken_ && SSL_is_init_finished(ssl_)) {
      ERR_clear_error();
      SSL_shutdown(ssl_);
    }
    SSL_free(ssl_);
    ssl_ = nullptr;
    ERR_clear_error();
  }
  tls_ctx_.reset();
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

}  // namespace io
}  // namespace binlog
