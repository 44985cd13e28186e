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
  }
  return *this;
}

absl::StatusOr<Socket> Socket::ListenLoopback(uint16_t port) {
  Socket s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s.valid()) return Errno("socket");
  int one = 1;
  ::setsockopt(s.fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(s.fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    return Errno(absl::StrCat("bind 127.0.0.1:", port));
  }
  if (::listen(s.fd_, 64) != 0) return Errno("listen");
  return s;
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

absl::StatusOr<Socket> Socket::ConnectLoopback(uint16_t port) {
  Socket s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s.valid()) return Errno("socket");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(s.fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    return Errno("connect");
  }
  int one = 1;
  ::setsockopt(s.fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return s;
}

absl::StatusOr<Socket> Socket::ConnectUnix(const std::string& path) {
  sockaddr_un a;
  if (!FillUnixAddr(path, &a)) return absl::InvalidArgumentError("socket path too long");
  Socket s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s.valid()) return Errno("socket");
  if (::connect(s.fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    return Errno("connect");
  }
  return s;
}

uint16_t Socket::port() const {
  sockaddr_in a{};
  socklen_t len = sizeof(a);
  if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) return 0;
  return ntohs(a.sin_port);
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
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));  // fails on unix: fine
  return Socket(fd);
}

absl::Status Socket::ReadFull(char* buf, size_t n, absl::Time deadline) {
  size_t done = 0;
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
    ssize_t r = ::send(fd_, data.data() + done, data.size() - done,
                       MSG_DONTWAIT | MSG_NOSIGNAL);
    if (r < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        if (cancel != nullptr && cancel->load(std::memory_order_relaxed) &&
            deadline > absl::Now() + absl::Seconds(1)) {
          // Shutting down: a peer that reads gets the rest (its last
          // packet, the shutdown error) within a second; a stalled one
          // is given up on then.
          deadline = absl::Now() + absl::Seconds(1);
        }
        const absl::Time slice =
            cancel != nullptr ? std::min(deadline, absl::Now() + absl::Milliseconds(100))
                              : deadline;
        absl::Status w = WaitFor(fd_, POLLOUT, slice);
        if (!w.ok() && !(absl::IsDeadlineExceeded(w) && slice < deadline)) return w;
        continue;
      }
      return Errno("send");
    }
    done += static_cast<size_t>(r);
  }
  return absl::OkStatus();
}

bool Socket::WaitReadable(absl::Duration timeout) {
  pollfd p{fd_, POLLIN, 0};
  int r = ::poll(&p, 1, PollMs(timeout));
  return r > 0;
}

void Socket::Shutdown() {
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

void Socket::ShutdownRead() const {
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RD);
}

void Socket::Close() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

}  // namespace io
}  // namespace binlog
