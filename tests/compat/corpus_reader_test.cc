// The Reader on real MariaDB binlogs: for every file of every corpus
// scenario, the events it returns (position, end, size, type) equal the
// manifest made from mariadb-binlog's output, checksums verify where the
// server wrote them, and the crashed file's torn tail is reported where the
// manifest says it is.

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "binlog/reader.h"
#include "gtest/gtest.h"

namespace binlog {
namespace {

struct ManifestEvent {
  uint64_t pos, end, size;
  int type;
  bool operator==(const ManifestEvent& o) const {
    return std::tie(pos, end, size, type) == std::tie(o.pos, o.end, o.size, o.type);
  }
};

struct ManifestFile {
  uint64_t size = 0;
  bool in_use = false;
  bool crc = false;
  int64_t torn = -1;
  std::vector<ManifestEvent> events;
};

std::ostream& operator<<(std::ostream& os, const ManifestEvent& e) {
  return os << "{pos " << e.pos << " end " << e.end << " size " << e.size
            << " type " << e.type << "}";
}

std::string Runfile(const std::string& rel) {
  return absl::StrCat(std::getenv("TEST_SRCDIR"), "/", rel);
}

// scenario -> file name -> manifest data
std::map<std::string, std::map<std::string, ManifestFile>> LoadManifest() {
  std::map<std::string, std::map<std::string, ManifestFile>> out;
  std::ifstream in(Runfile("binlog_storage/tests/compat/corpus_events.txt"));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string kind, scenario, file;
    ls >> kind >> scenario >> file;
    ManifestFile& f = out[scenario][file];
    if (kind == "file") {
      int in_use;
      std::string crc;
      ls >> f.size >> in_use >> crc >> f.torn;
      f.in_use = in_use != 0;
      f.crc = crc == "CRC32";
    } else if (kind == "event") {
      ManifestEvent e;
      ls >> e.pos >> e.end >> e.size >> e.type;
      f.events.push_back(e);
    }
  }
  return out;
}

class CorpusReaderTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusReaderTest, EventsEqualTheManifest) {
  const std::string scenario = GetParam();
  auto manifest = LoadManifest();
  ASSERT_TRUE(manifest.count(scenario)) << "no manifest data for " << scenario;
  auto& files = manifest[scenario];
  std::string dir = Runfile(
      absl::StrCat("binlog_storage/tests/data/mariadb/", scenario, "/binlogs"));
  auto reader = Reader::OpenDirectory(dir, "", ReaderOptions());
  ASSERT_TRUE(reader.ok()) << reader.status();
  std::map<std::string, std::vector<ManifestEvent>> got;
  std::map<std::string, int> checksum_ok, checksum_none;
  for (;;) {
    Event ev;
    absl::Status s = (*reader)->Next(&ev);
    if (absl::IsOutOfRange(s)) break;
    ASSERT_TRUE(s.ok()) << s;
    const std::string& name = (*reader)->file_name();
    got[name].push_back(ManifestEvent{ev.offset, ev.header.log_pos,
                                      ev.end_offset - ev.offset, ev.header.type});
    if (ev.checksum == ChecksumState::kOk) ++checksum_ok[name];
    if (ev.checksum == ChecksumState::kNone) ++checksum_none[name];
    EXPECT_EQ(ev.header.log_pos, ev.end_offset);
  }
  ASSERT_EQ(got.size(), files.size());
  for (auto& [name, mf] : files) {
    SCOPED_TRACE(name);
    EXPECT_EQ(got[name], mf.events);
    size_t n = mf.events.size();
    if (mf.crc) {
      EXPECT_EQ(checksum_ok[name], static_cast<int>(n));
    } else {
      EXPECT_EQ(checksum_none[name], static_cast<int>(n));
    }
  }
  // Torn tails: exactly where the manifest puts a partial event.
  std::map<std::string, uint64_t> torn;
  for (const TornTail& t : (*reader)->torn_tails()) {
    torn[t.file_name] = t.offset;
    EXPECT_TRUE(t.in_use);
  }
  for (auto& [name, mf] : files) {
    if (mf.torn >= 0) {
      ASSERT_TRUE(torn.count(name)) << name;
      EXPECT_EQ(torn[name], static_cast<uint64_t>(mf.torn));
    } else {
      EXPECT_FALSE(torn.count(name)) << name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusReaderTest,
                         ::testing::Values("s1-row-crc32",
                                           "s2-statement-nochecksum",
                                           "s3-row-wide-nochecksum",
                                           "s4-crash-kill9"));

}  // namespace
}  // namespace binlog
