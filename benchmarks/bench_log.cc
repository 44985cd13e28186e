// Helpers of the read benchmarks; see bench_log.h.

#include "benchmarks/bench_log.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "binlog/event_builder.h"
#include "binlog/format.h"
#include "binlog/index_file.h"
#include "binlog/log.h"
#include "binlog/rows.h"

namespace binlog_bench {
namespace {

// 2: the Table_map comes from binlog::EncodeTableMapBody (version 1 had a
// hand-written one whose metadata length was short by 2 bytes).
constexpr int kGeneratorVersion = 2;

// shop.orders (id INT, a VARCHAR(64), b VARCHAR(128), c BIGINT,
// d DECIMAL(10,4)).
const std::string& OrdersTableMap() {
  static const std::string* body = [] {
    binlog::TableDef t;
    t.table_id = 42;
    t.schema = "shop";
    t.table = "orders";
    t.metadata = binlog::RowMetadata::kNone;
    auto col = [](binlog::ColumnType type, uint32_t length) {
      binlog::ColumnDef c;
      c.type = type;
      c.length = length;
      return c;
    };
    t.columns = {col(binlog::kColLong, 0), col(binlog::kColVarchar, 64),
                 col(binlog::kColVarchar, 128), col(binlog::kColLongLong, 0),
                 col(binlog::kColNewDecimal, 10)};
    t.columns[4].scale = 4;
    return new std::string(*binlog::EncodeTableMapBody(t, binlog::LogFlavor::kMySQL));
  }();
  return *body;
}

}  // namespace


void BuildTransaction(binlog::TransactionBuffer* txn, std::mt19937_64* rng,
                      uint64_t seq) {
  txn->Clear();
  const uint32_t ts = 1700000000 + static_cast<uint32_t>(seq / 1000);
  const uint32_t sid = 1;
  binlog::AppendAnonymousGtid(txn, ts, sid, static_cast<int64_t>(seq) - 1,
                              static_cast<int64_t>(seq));
  binlog::AppendQuery(txn, ts, sid, 7 + seq % 64, "shop", "BEGIN");
  txn->AppendEvent(binlog::kTableMapEvent, sid, ts, 0, OrdersTableMap());
  int rows_events = 1 + static_cast<int>((*rng)() % 4);
  for (int i = 0; i < rows_events; ++i) {
    uint64_t pick = (*rng)() % 1000;
    size_t size;
    if (pick < 600) {
      size = 100 + (*rng)() % 600;
    } else if (pick < 900) {
      size = 700 + (*rng)() % (8 * 1024 - 700);
    } else if (pick < 999 || (*rng)() % 10 != 0) {
      size = 8 * 1024 + (*rng)() % (56 * 1024);
    } else {
      size = (2 << 20) + (*rng)() % (6 << 20);
    }
    char* body = txn->AppendEvent(binlog::kWriteRowsEvent, sid, ts, 0, size);
    for (size_t j = 0; j < size;) {
      uint64_t r = (*rng)();
      size_t run = std::min<size_t>(size - j, 8 + r % 24);
      if (r & 1) {
        for (size_t k = 0; k < run; ++k) {
          body[j + k] = static_cast<char>((r >> (8 * (k % 8))) ^ k);
        }
      } else {
        std::memset(body + j, 'a' + static_cast<int>(r % 26), run);
      }
      j += run;
    }
  }
  binlog::AppendXid(txn, ts, sid, seq);
}

namespace {
std::string MetaLine(double size_gib, int file_mib) {
  return absl::StrFormat("version=%d size_gib=%.3f file_mib=%d",
                         kGeneratorVersion, size_gib, file_mib);
}

}  // namespace

absl::StatusOr<std::vector<std::string>> LogFiles(const std::string& dir) {
  auto numbers = binlog::ReadIndex(FileSystem::Default(), dir, "binlog");
  if (!numbers.ok()) return numbers.status();
  std::vector<std::string> out;
  for (uint64_t n : *numbers) {
    out.push_back(
        binlog::io::JoinPath(dir, binlog::BinlogFileName("binlog", n)));
  }
  return out;
}

absl::Status EnsureLog(const std::string& dir, double size_gib, int file_mib,
                       bool encrypted) {
  const std::string meta_path = dir + "/read_bench.meta";
  const std::string meta =
      MetaLine(size_gib, file_mib) + (encrypted ? " encrypted" : "");
  {
    std::ifstream in(meta_path);
    std::string line;
    if (in && std::getline(in, line) && line == meta) {
      std::fprintf(stderr, "read_bench: reusing the log in %s (%s)\n",
                   dir.c_str(), line.c_str());
      return absl::OkStatus();
    }
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat(dir, ": ", ec.message()));
  std::fprintf(stderr, "read_bench: writing %.2f GiB through binlog::Binlog "
               "into %s ...\n", size_gib, dir.c_str());
  binlog::Options o;
  o.sync_policy = binlog::SyncPolicy::kNever;  // synced once at the end
  o.preallocate = binlog::io::PreallocMode::kNone;
  o.max_file_size = static_cast<uint64_t>(file_mib) << 20;
  binlog::MemoryKeyring keyring;
  if (encrypted) {
    o.encryption = true;
    o.keyring = &keyring;
  }
  auto log = binlog::Binlog::Open(dir, "binlog", o);
  if (!log.ok()) return log.status();
  binlog::TransactionBuffer txn;
  std::mt19937_64 rng(20261121);
  const uint64_t target = static_cast<uint64_t>(size_gib * kGiB);
  uint64_t written = 0;
  absl::Time t0 = absl::Now();
  for (uint64_t seq = 1; written < target; ++seq) {
    BuildTransaction(&txn, &rng, seq);
    auto pos = (*log)->Commit(&txn);
    if (!pos.ok()) return pos.status();
    written += txn.size();
  }
  absl::Status s = (*log)->Close();
  if (!s.ok()) return s;
  auto files = LogFiles(dir);
  if (!files.ok()) return files.status();
  for (const auto& p : *files) {
    auto w = FileSystem::Default()->OpenWritable(
        p, binlog::io::OpenMode::kOpenExisting);
    if (!w.ok()) return w.status();
    if (!(s = (*w)->Sync()).ok()) return s;
    if (!(s = (*w)->Close()).ok()) return s;
  }
  if (encrypted) {
    // Owner-only, as LoadKeyringFile requires.
    if (!(s = binlog::WriteKeyringFile(nullptr, dir + "/keyring.txt", keyring)).ok()) {
      return s;
    }
  }
  std::ofstream out(meta_path);
  out << meta << "\n";
  if (!out) return absl::InternalError(absl::StrCat(meta_path, ": write failed"));
  std::fprintf(stderr, "read_bench: wrote %.2f GiB in %zu files in %.1f s\n",
               static_cast<double>(written) / kGiB, files->size(),
               absl::ToDoubleSeconds(absl::Now() - t0));
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Page cache control.

namespace {
// Share of the file's pages in the page cache (mincore), -1 on error.
double FileResidentShare(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  double share = -1;
  if (::fstat(fd, &st) == 0 && st.st_size > 0) {
    size_t len = static_cast<size_t>(st.st_size);
    void* p = ::mmap(nullptr, len, PROT_READ, MAP_SHARED, fd, 0);
    if (p != MAP_FAILED) {
      size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
      size_t pages = (len + page - 1) / page;
      std::vector<unsigned char> vec(pages);
      if (::mincore(p, len, vec.data()) == 0) {
        size_t in = 0;
        for (unsigned char c : vec) in += c & 1;
        share = static_cast<double>(in) / static_cast<double>(pages);
      }
      ::munmap(p, len);
    }
  }
  ::close(fd);
  return share;
}

}  // namespace

double ResidentShare(const std::vector<std::string>& files) {
  double total = 0, in = 0;
  for (const auto& p : files) {
    auto size = FileSystem::Default()->FileSize(p);
    if (!size.ok()) return -1;
    double share = FileResidentShare(p);
    if (share < 0) return -1;
    total += static_cast<double>(*size);
    in += share * static_cast<double>(*size);
  }
  return total > 0 ? in / total : 0;
}

absl::Status Evict(const std::vector<std::string>& files) {
  for (const auto& p : files) {
    auto w = FileSystem::Default()->OpenWritable(
        p, binlog::io::OpenMode::kOpenExisting);
    if (!w.ok()) return w.status();
    absl::Status s = (*w)->Sync();
    if (s.ok()) s = (*w)->Close();
    if (!s.ok()) return s;
    auto r = FileSystem::Default()->OpenReadable(p);
    if (!r.ok()) return r.status();
    s = (*r)->Advise(0, 0, AccessHint::kDontNeed);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status Warm(const std::vector<std::string>& files) {
  std::unique_ptr<char[]> buf(new char[8 << 20]);
  for (const auto& p : files) {
    auto r = FileSystem::Default()->OpenReadable(p);
    if (!r.ok()) return r.status();
    for (uint64_t off = 0;;) {
      size_t got = 0;
      absl::Status s = (*r)->Read(off, 8 << 20, buf.get(), &got);
      if (!s.ok()) return s;
      off += got;
      if (got < (8u << 20)) break;
    }
  }
  return absl::OkStatus();
}

double CpuSeconds() {
  struct rusage ru;
  ::getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}


std::string ReadFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  }
  return "unknown";
}

std::string MountOf(const std::string& dir) {
  std::error_code ec;
  std::string real = std::filesystem::canonical(dir, ec).string();
  std::ifstream in("/proc/mounts");
  std::string line, best;
  size_t best_len = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> f = absl::StrSplit(line, ' ');
    if (f.size() < 4) continue;
    const std::string& m = f[1];
    bool prefix = real.compare(0, m.size(), m) == 0 &&
                  (m == "/" || real.size() == m.size() || real[m.size()] == '/');
    if (prefix && m.size() >= best_len) {
      best_len = m.size();
      best = absl::StrCat(f[0], " on ", m, " type ", f[2]);
    }
  }
  return best;
}

}  // namespace binlog_bench
