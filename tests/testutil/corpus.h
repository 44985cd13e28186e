// File: tests/testutil/corpus.h
//
// Access to the MariaDB binlog corpus (tests/data/mariadb, see
// its README.md) from tests, and to the TSV digest of
// its manifests that //tests:corpus_manifest_tsv builds with
// tests/testutil/manifest_to_tsv.py.
//
// A test using these needs data = ["//tests/data/mariadb:corpus"] (and
// ":corpus_manifest_tsv" for LoadCorpusManifest).
//
// Thread safety: thread-safe (no shared state).
// Errors: NotFound / DataLoss from the loaders, with the path.

#ifndef BINLOG_TESTS_TESTUTIL_CORPUS_H_
#define BINLOG_TESTS_TESTUTIL_CORPUS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace binlog {
namespace testutil {

// The corpus scenarios the tests cover.
const std::vector<std::string>& CorpusScenarios();

// $TEST_SRCDIR/binlog_storage/tests/data/mariadb/<scenario>.
std::string CorpusScenarioDir(absl::string_view scenario);

// $TEST_SRCDIR/binlog_storage/tests/data/mariadb/<scenario>/binlogs/<name>.
std::string CorpusBinlogPath(absl::string_view scenario,
                             absl::string_view name);

// Reads a whole file with the C++ library (independent of io/).
absl::StatusOr<std::string> ReadFileToString(const std::string& path);

struct CorpusFile {
  std::string scenario;
  std::string name;            // "mariadb-bin.000001"
  uint64_t size = 0;
  std::string server_version;
  std::string checksum;        // "CRC32" or "NONE"
  bool in_use = false;         // FDE in-use flag
  bool created_at_startup = false;
  uint64_t parsed_end = 0;     // end of the last complete event
};

struct CorpusGroup {
  std::string scenario;
  std::string file;
  uint64_t start = 0;
  uint64_t end = 0;
  bool complete = false;
  std::string terminator;  // "XID_EVENT", "STANDALONE", ..., "-" if none
  std::string gtid;
};

struct CorpusPartialEvent {
  std::string scenario;
  std::string file;
  uint64_t pos = 0;
  uint64_t available_bytes = 0;
  uint64_t declared_size = 0;
};

struct CorpusManifest {
  std::vector<CorpusFile> files;
  std::vector<CorpusGroup> groups;
  std::vector<CorpusPartialEvent> partial_events;
  // (scenario, line of the scenario's .index file)
  std::vector<std::pair<std::string, std::string>> index_entries;
  // (type code, name mariadb-binlog printed for it), over all scenarios.
  std::vector<std::pair<int, std::string>> type_names;

  // Groups of one file, in file order.
  std::vector<CorpusGroup> GroupsOf(absl::string_view scenario,
                                    absl::string_view file) const;
};

// Loads $TEST_SRCDIR/$TEST_WORKSPACE/tests/corpus_manifest.tsv.
absl::StatusOr<CorpusManifest> LoadCorpusManifest();

// A minimal event walker over the bytes of a binlog file, independent of the
// library's reader: magic, then header / event_size steps.
struct WalkedEvent {
  uint64_t offset = 0;
  uint32_t size = 0;   // event_size from the header
  uint8_t type = 0;
  absl::string_view bytes;  // the whole event, a view into the walked file
};
struct FileWalk {
  bool magic_ok = false;
  std::vector<WalkedEvent> events;  // complete events, in file order
  uint64_t end = 0;          // end of the last complete event (4 if none)
  bool partial_tail = false; // bytes after `end` that do not form an event
  bool bogus_size = false;   // stopped at a header with event_size < 19
};
// Stops at the first partial event (or bogus header). The views in the
// result point into `file`, which must outlive them.
FileWalk WalkBinlogFile(absl::string_view file);

// What mariadb-binlog printed for the corpus events that carry a
// transaction's identity: Query (2), Xid (16), XA_prepare (38), MariaDB Gtid
// (162) and Gtid_list (163). A test using it needs data =
// [":corpus_ids_tsv", "//tests/data/mariadb:corpus"] (//tests:BUILD builds the
// TSV with tests/testutil/manifest_to_tsv.py --ids).
struct CorpusPrintedEvent {
  std::string scenario;
  std::string file;
  uint64_t pos = 0;
  int type = 0;
  // mariadb-binlog's description, tabs as spaces: "GTID 0-1-5 trans",
  // "Gtid list [0-1-43]", "Xid = 12", "XID = X'..',X'',1",
  // "Query thread_id=5 exec_time=0 error_code=0 xid=6".
  std::string desc;
};
struct CorpusIds {
  // (scenario, file, has CRC32 checksums), in scenario and index order.
  std::vector<std::tuple<std::string, std::string, bool>> files;
  std::vector<CorpusPrintedEvent> events;  // in scenario and file order
};
// Loads $TEST_SRCDIR/$TEST_WORKSPACE/tests/corpus_ids.tsv.
absl::StatusOr<CorpusIds> LoadCorpusIds();

// A corpus binlog file read whole, and its complete events (as
// WalkBinlogFile finds them) by offset; the views point into `bytes`.
struct CorpusFileEvents {
  std::string bytes;
  std::map<uint64_t, absl::string_view> at;
};
absl::StatusOr<std::unique_ptr<CorpusFileEvents>> LoadCorpusFileEvents(
    absl::string_view scenario, absl::string_view name);

}  // namespace testutil
}  // namespace binlog

#endif  // BINLOG_TESTS_TESTUTIL_CORPUS_H_
