// libFuzzer target: the index file parser (binlog/index_file.h ParseIndex)
// and ReadIndex on an index file holding the input.
//
// Besides sanitizer reports, it aborts when a parse that succeeds breaks
// the parser's promises: numbers strictly increasing and at most
// kMaxFileNumber, and the index the library would write for those numbers
// parsing back to the same list.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "binlog/index_file.h"
#include "io/file_system.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

void CheckParse(absl::string_view content, absl::string_view dir,
                absl::string_view basename) {
  auto numbers = binlog::ParseIndex(content, dir, basename, "fuzz.index");
  if (!numbers.ok()) {
    FUZZ_CHECK(absl::IsDataLoss(numbers.status()));
    return;
  }
  std::string rewritten;
  for (size_t i = 0; i < numbers->size(); ++i) {
    uint64_t n = (*numbers)[i];
    FUZZ_CHECK(n <= binlog::kMaxFileNumber);
    if (i > 0) FUZZ_CHECK(n > (*numbers)[i - 1]);
    std::string name = binlog::BinlogFileName(basename, n);
    uint64_t back = 0;
    FUZZ_CHECK(binlog::ParseBinlogFileName(basename, name, &back));
    FUZZ_CHECK(back == n);
    absl::StrAppend(&rewritten, "./", name, "\n");
  }
  auto again = binlog::ParseIndex(rewritten, dir, basename, "rewritten");
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(*again == *numbers);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view content(reinterpret_cast<const char*>(data), size);
  CheckParse(content, "/var/lib/mysql", "binlog");
  CheckParse(content, "/var/lib/mysql/", "mariadb-bin");
  CheckParse(content, ".", "mysql-bin");

  // ReadIndex: through the file system, as Binlog::Open reads it.
  static const std::string dir = binlog::fuzz::ScratchDir() + "/index";
  ::mkdir(dir.c_str(), 0755);
  binlog::fuzz::WriteWholeFile(dir + "/binlog.index", data, size);
  auto numbers =
      binlog::ReadIndex(binlog::io::FileSystem::Default(), dir, "binlog");
  if (!numbers.ok()) FUZZ_CHECK(absl::IsDataLoss(numbers.status()));
  return 0;
}
