#include "io/unique_fd.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"

namespace binlog {
namespace io {

UniqueFd& UniqueFd::operator=(UniqueFd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(o.fd_, -1);
  }
  return *this;
}

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) ::close(fd_);  // error lost; callers that care use Close()
}

absl::Status UniqueFd::Close() {
  if (fd_ < 0) return absl::FailedPreconditionError("close: file already closed");
  int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0 && errno != EINTR) {
    int err = errno;
    return absl::ErrnoToStatus(err, absl::StrCat("close: ", strerror(err)));
  }
  return absl::OkStatus();
}

}  // namespace io
}  // namespace binlog
