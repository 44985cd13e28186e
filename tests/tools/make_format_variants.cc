// Writes the files of tests/testutil/format_variants.h into a directory,
// for binlogtool_formats_test.py:
//   make_format_variants OUT_DIR CORPUS_BINLOGS_DIR
// OUT_DIR/maria114/   the corpus directory (its index and files) rewritten
//                     as MariaDB 11.4 writes it
// OUT_DIR/relay55/relay-bin.000002   a MySQL 5.5 replica's relay log (12
//                     source transactions, 38 events)
// OUT_DIR/v3/old-bin.001             a binlog v3 file (MySQL 4.0)
// Prints "maria114 zeroed N" (events given log_pos 0) and "relay55 events N".

#include <cstdio>
#include <fstream>
#include <string>
#include <sys/stat.h>

#include "tests/testutil/corpus.h"
#include "tests/testutil/format_variants.h"

namespace {

bool Write(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f << bytes;
  return static_cast<bool>(f);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace binlog::testutil;
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s OUT_DIR CORPUS_BINLOGS_DIR\n", argv[0]);
    return 2;
  }
  const std::string out = argv[1], corpus = argv[2];
  for (const char* d : {"/maria114", "/relay55", "/v3"}) {
    ::mkdir((out + d).c_str(), 0755);
  }
  auto index = ReadFileToString(corpus + "/mariadb-bin.index");
  if (!index.ok() || !Write(out + "/maria114/mariadb-bin.index", *index)) {
    std::fprintf(stderr, "cannot copy the index\n");
    return 1;
  }
  uint64_t zeroed = 0;
  size_t start = 0;
  while (start < index->size()) {
    size_t nl = index->find('\n', start);
    if (nl == std::string::npos) nl = index->size();
    std::string name = index->substr(start, nl - start);
    start = nl + 1;
    if (name.rfind("./", 0) == 0) name = name.substr(2);
    if (name.empty()) continue;
    auto file = ReadFileToString(corpus + "/" + name);
    if (!file.ok()) return 1;
    auto v = AsMariaDb114(*file);
    if (!v.ok() || !Write(out + "/maria114/" + name, v->bytes)) return 1;
    zeroed += v->count;
  }
  Variant relay = MySql55RelayLog(12, 107);
  Variant v3 = MySql40Binlog();
  if (!Write(out + "/relay55/relay-bin.000002", relay.bytes) ||
      !Write(out + "/v3/old-bin.001", v3.bytes)) {
    return 1;
  }
  std::printf("maria114 zeroed %llu\nrelay55 events %llu\n",
              static_cast<unsigned long long>(zeroed),
              static_cast<unsigned long long>(relay.count));
  return 0;
}
