// File: io/unique_fd.h
//
// UniqueFd: move-only owner of a file descriptor.
//
// Thread safety: thread-compatible.
// Errors: Close() reports close(2) errors; the destructor closes as a last
// resort and loses the error, so code that cares calls Close().

#ifndef BINLOG_IO_UNIQUE_FD_H_
#define BINLOG_IO_UNIQUE_FD_H_

#include <utility>

#include "absl/status/status.h"

namespace binlog {
namespace io {

class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }

  // Closes once. Never retried: on Linux the descriptor is released even
  // when close reports an error. FailedPrecondition if already closed.
  absl::Status Close();

 private:
  int fd_;
};

}  // namespace io
}  // namespace binlog

#endif  // BINLOG_IO_UNIQUE_FD_H_
