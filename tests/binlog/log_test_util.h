// Shared helpers of the log tests: temporary directories, transaction
// generators, whole-file helpers.

#ifndef BINLOG_TESTS_BINLOG_LOG_TEST_UTIL_H_
#define BINLOG_TESTS_BINLOG_LOG_TEST_UTIL_H_

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "binlog/event_builder.h"
#include "binlog/format.h"
#include "binlog/index_file.h"
#include "binlog/log.h"
#include "binlog/reader.h"
#include "io/file_system.h"

namespace binlog {
namespace testing_util {

// A fresh empty directory under $TEST_TMPDIR.
inline std::string NewTempDir(const std::string& tag) {
  static int counter = 0;
  const char* base = std::getenv("TEST_TMPDIR");
  std::string root = base ? base : "/tmp";
  std::string dir =
      absl::StrCat(root, "/", tag, "_", ::getpid(), "_", counter++);
  std::string cmd = absl::StrCat("rm -rf '", dir, "' && mkdir -p '", dir, "'");
  if (std::system(cmd.c_str()) != 0) std::abort();
  return dir;
}

// Builds a realistic transaction: Anonymous_gtid, BEGIN, a Rows_query event
// with `payload` bytes of text, Xid. The text encodes `id` so a reader can
// tell transactions apart.
inline void BuildTransaction(TransactionBuffer* txn, uint64_t id,
                             size_t payload, uint32_t server_id = 1) {
  txn->Clear();
  uint32_t ts = 1700000000;
  AppendAnonymousGtid(txn, ts, server_id, 0, 1);
  AppendQuery(txn, ts, server_id, 7, "db", "BEGIN");
  std::string text = absl::StrCat("txn ", id, " ");
  std::mt19937_64 rng(id);
  while (text.size() < payload) text.push_back(static_cast<char>('a' + rng() % 26));
  // Servers write Rows_query with the ignorable flag: readers that do not
  // know the type (MariaDB's) skip it instead of failing.
  char* body = txn->AppendEvent(kRowsQueryEvent, server_id, ts, kFlagIgnorable,
                                text.size() + 1);
  body[0] = static_cast<char>(text.size() > 255 ? 255 : text.size());
  std::memcpy(body + 1, text.data(), text.size());
  AppendXid(txn, ts, server_id, id);
}

// Reads a whole file through the POSIX file system.
inline std::string ReadFile(const std::string& path) {
  auto s = ReadSmallFile(io::FileSystem::Default(), path, 1ull << 32);
  if (!s.ok()) return std::string();
  return *s;
}

inline void WriteFile(const std::string& path, const std::string& data) {
  auto f = io::FileSystem::Default()->OpenWritable(
      path, io::OpenMode::kCreateOrTruncate);
  if (!f.ok() || !(*f)->Write(0, data).ok() || !(*f)->Close().ok()) std::abort();
}

// Every event of a directory, as (file_number, offset, type).
struct EventRef {
  uint64_t file;
  uint64_t offset;
  uint64_t end;
  uint8_t type;
  std::string bytes;
};

inline absl::Status ReadAll(Reader* r, std::vector<EventRef>* out) {
  for (;;) {
    Event ev;
    absl::Status s = r->Next(&ev);
    if (absl::IsOutOfRange(s)) return absl::OkStatus();
    if (!s.ok()) return s;
    out->push_back(EventRef{ev.file_number, ev.offset, ev.end_offset,
                            ev.header.type, std::string(ev.data)});
  }
}

}  // namespace testing_util
}  // namespace binlog

#endif  // BINLOG_TESTS_BINLOG_LOG_TEST_UTIL_H_
