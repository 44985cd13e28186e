// A program that uses the installed library the way an application does:
// only the installed headers, linked against libbinlog.so or libbinlog.a
// (tools/install_check.sh builds it with CMake's find_package(binlog) and
// with pkg-config, as C++17 and C++20, and runs it).
//
//   consumer DIR      opens a log in DIR (which must not hold one), commits
//                     one transaction, reads it back with a reader, closes
//                     the log, and prints "consumer OK <version>".
//
// Exit status 0 on success; 1 with a message on stderr otherwise.

#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "binlog/event_builder.h"
#include "binlog/log.h"
#include "binlog/options.h"
#include "binlog/reader.h"
#include "binlog/transaction.h"
#include "binlog/version.h"

namespace {

int Fail(const char* what, const absl::Status& s) {
  std::fprintf(stderr, "consumer: %s: %s\n", what, s.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer DIR\n");
    return 2;
  }
  const std::string dir = argv[1];

  // The headers this program was compiled with and the library it runs
  // with must be the same release.
  binlog::LibraryVersion v = binlog::Version();
  if (v.major_version != BINLOG_VERSION_MAJOR ||
      v.minor_version != BINLOG_VERSION_MINOR ||
      v.patch_version != BINLOG_VERSION_PATCH) {
    std::fprintf(stderr, "consumer: headers say %s, library says %s\n",
                 BINLOG_VERSION_STRING, v.string);
    return 1;
  }

  binlog::Options options;
  options.preallocate = binlog::io::PreallocMode::kNone;
  absl::StatusOr<std::unique_ptr<binlog::Binlog>> log =
      binlog::Binlog::Open(dir, "binlog", options);
  if (!log.ok()) return Fail("Open", log.status());

  const uint32_t now = 1800000000;
  binlog::TransactionBuffer txn;
  binlog::AppendAnonymousGtid(&txn, now, 1, 0, 1);
  binlog::AppendQuery(&txn, now, 1, 7, "shop", "BEGIN");
  binlog::AppendQuery(&txn, now, 1, 7, "shop",
                      "INSERT INTO t VALUES (1, 'from the consumer')");
  binlog::AppendXid(&txn, now, 1, 42);
  absl::StatusOr<binlog::CommitPosition> pos = (*log)->Commit(&txn);
  if (!pos.ok()) return Fail("Commit", pos.status());

  absl::StatusOr<std::unique_ptr<binlog::Reader>> reader =
      (*log)->NewReader(binlog::ReaderOptions());
  if (!reader.ok()) return Fail("NewReader", reader.status());
  int queries = 0;
  bool found = false;
  for (;;) {
    binlog::Event ev;
    absl::Status s = (*reader)->Next(&ev);
    if (absl::IsOutOfRange(s)) break;  // caught up with the durable end
    if (!s.ok()) return Fail("Next", s);
    if (ev.header.type == binlog::kQueryEvent) {
      ++queries;
      if (ev.data.find("from the consumer") != absl::string_view::npos) {
        found = true;
      }
    }
  }
  reader->reset();
  if (queries != 2 || !found) {
    std::fprintf(stderr, "consumer: read %d query events back (want 2)\n",
                 queries);
    return 1;
  }

  absl::Status s = (*log)->Close();
  if (!s.ok()) return Fail("Close", s);
  std::printf("consumer OK %s\n", v.string);
  return 0;
}
