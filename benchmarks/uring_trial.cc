// uring_trial: the io_uring trial of issue 17 (part 1). Does submitting a
// group's write and its fdatasync as one linked io_uring chain (one
// io_uring_enter, IOSQE_IO_LINK) beat pwrite + fdatasync (two syscalls)?
// The chain the library's commit path runs per group at 1 thread is exactly
// one write and one fdatasync, so this measures that chain alone, on a
// zero-filled file (as the preallocator leaves them), appending, one
// commit at a time. Like baselines.cc it calls the OS directly: it is a
// measurement of system calls, not of the library.
//
//   bazel run -c opt //benchmarks:uring_trial -- --payload=256,4096
//       --ops=4000 --passes=5
//
// Prints one JSON line per (pass, payload, mode): ops/s, p50/p99 latency in
// microseconds; then, per payload, the median and range of the per-pass
// uring/pwrite throughput ratio.

#include <fcntl.h>
#include <liburing.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/marshalling.h"
#include "absl/strings/str_format.h"

ABSL_FLAG(std::string, dir, "/tmp", "directory for the trial file");
ABSL_FLAG(std::vector<std::string>, payload, std::vector<std::string>({"256", "4096"}),
          "bytes per commit");
ABSL_FLAG(int, ops, 4000, "commits per measurement");
ABSL_FLAG(int, passes, 5, "passes (each runs every payload and mode)");

namespace {

[[noreturn]] void Die(const char* what, int err) {
  std::fprintf(stderr, "uring_trial: %s: %s\n", what, std::strerror(err));
  std::exit(1);
}

// A file of `size` zero bytes, written and synced (as a zero-filled spare).
int ZeroFilledFile(const std::string& path, size_t size) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) Die("open", errno);
  std::vector<char> zeros(1 << 20, 0);
  for (size_t off = 0; off < size; off += zeros.size()) {
    size_t n = std::min(zeros.size(), size - off);
    if (::pwrite(fd, zeros.data(), n, static_cast<off_t>(off)) != static_cast<ssize_t>(n)) {
      Die("pwrite zeros", errno);
    }
  }
  if (::fsync(fd) != 0) Die("fsync", errno);
  return fd;
}

struct Result {
  double ops_per_s = 0;
  double p50_us = 0;
  double p99_us = 0;
};

Result Summarize(std::vector<double>* lat, double seconds) {
  std::sort(lat->begin(), lat->end());
  Result r;
  r.ops_per_s = static_cast<double>(lat->size()) / seconds;
  r.p50_us = (*lat)[lat->size() / 2];
  r.p99_us = (*lat)[lat->size() * 99 / 100];
  return r;
}

Result RunPwrite(int fd, const std::string& buf, int ops) {
  std::vector<double> lat;
  lat.reserve(static_cast<size_t>(ops));
  auto start = std::chrono::steady_clock::now();
  off_t off = 0;
  for (int i = 0; i < ops; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    if (::pwrite(fd, buf.data(), buf.size(), off) != static_cast<ssize_t>(buf.size())) {
      Die("pwrite", errno);
    }
    if (::fdatasync(fd) != 0) Die("fdatasync", errno);
    off += static_cast<off_t>(buf.size());
    lat.push_back(std::chrono::duration<double, std::micro>(
                      std::chrono::steady_clock::now() - t0).count());
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return Summarize(&lat, s);
}

Result RunUring(int fd, const std::string& buf, int ops) {
  io_uring ring;
  int rc = io_uring_queue_init(8, &ring, 0);
  if (rc < 0) Die("io_uring_queue_init", -rc);
  std::vector<double> lat;
  lat.reserve(static_cast<size_t>(ops));
  auto start = std::chrono::steady_clock::now();
  uint64_t off = 0;
  for (int i = 0; i < ops; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    io_uring_sqe* w = io_uring_get_sqe(&ring);
    io_uring_prep_write(w, fd, buf.data(), static_cast<unsigned>(buf.size()), off);
    w->flags |= IOSQE_IO_LINK;  // the fdatasync starts after the write
    io_uring_sqe* f = io_uring_get_sqe(&ring);
    io_uring_prep_fsync(f, fd, IORING_FSYNC_DATASYNC);
    rc = io_uring_submit_and_wait(&ring, 2);
    if (rc < 0) Die("io_uring_submit_and_wait", -rc);
    for (int c = 0; c < 2; ++c) {
      io_uring_cqe* cqe = nullptr;
      rc = io_uring_wait_cqe(&ring, &cqe);
      if (rc < 0) Die("io_uring_wait_cqe", -rc);
      if (cqe->res < 0) Die("io_uring write/fsync", -cqe->res);
      io_uring_cqe_seen(&ring, cqe);
    }
    off += buf.size();
    lat.push_back(std::chrono::duration<double, std::micro>(
                      std::chrono::steady_clock::now() - t0).count());
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  io_uring_queue_exit(&ring);
  return Summarize(&lat, s);
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const int ops = absl::GetFlag(FLAGS_ops);
  const std::string path = absl::GetFlag(FLAGS_dir) + "/uring_trial.dat";
  std::map<int, std::vector<double>> ratios;  // payload -> per-pass uring/pwrite
  for (int pass = 1; pass <= absl::GetFlag(FLAGS_passes); ++pass) {
    for (const std::string& p : absl::GetFlag(FLAGS_payload)) {
      const int payload = std::atoi(p.c_str());
      if (payload <= 0) Die("--payload", EINVAL);
      const std::string buf(static_cast<size_t>(payload), 'x');
      const size_t size = static_cast<size_t>(payload) * static_cast<size_t>(ops) + (1 << 20);
      double tps[2] = {0, 0};
      // Alternate which mode goes first, so a drift in the machine's load
      // does not always favour the same one.
      for (int k = 0; k < 2; ++k) {
        const bool uring = (k + pass) % 2 == 1;
        int fd = ZeroFilledFile(path, size);
        Result r = uring ? RunUring(fd, buf, ops) : RunPwrite(fd, buf, ops);
        ::close(fd);
        tps[uring] = r.ops_per_s;
        std::printf("{\"pass\":%d,\"payload\":%d,\"mode\":\"%s\",\"ops_per_s\":%.1f,"
                    "\"p50_us\":%.1f,\"p99_us\":%.1f}\n",
                    pass, payload, uring ? "uring" : "pwrite", r.ops_per_s, r.p50_us,
                    r.p99_us);
      }
      ratios[payload].push_back(tps[1] / tps[0]);
    }
  }
  ::unlink(path.c_str());
  for (auto& [payload, v] : ratios) {
    std::sort(v.begin(), v.end());
    std::fprintf(stderr, "payload %d: uring/pwrite ops/s median %.3f (%.3f-%.3f), %zu passes\n",
                 payload, v[v.size() / 2], v.front(), v.back(), v.size());
  }
  return 0;
}
