#include "tests/testutil/corpus.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace binlog {
namespace testutil {
namespace {

std::string EnvOr(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? std::string(v) : std::string(fallback);
}

std::string SrcDir() { return EnvOr("TEST_SRCDIR", "."); }

absl::Status BadLine(const std::string& path, int line_no,
                     absl::string_view why) {
  return absl::DataLossError(
      absl::StrCat(path, " line ", line_no, ": ", why));
}

// The tab-separated fields of each non-empty line of
// $TEST_SRCDIR/$TEST_WORKSPACE/tests/<name>, with line numbers.
struct TestTsv {
  std::string path;
  std::vector<std::pair<int, std::vector<std::string>>> lines;
};
absl::StatusOr<TestTsv> ReadTestTsv(absl::string_view name) {
  TestTsv tsv;
  tsv.path = absl::StrCat(SrcDir(), "/",
                          EnvOr("TEST_WORKSPACE", "binlog_storage"), "/tests/",
                          name);
  absl::StatusOr<std::string> content = ReadFileToString(tsv.path);
  if (!content.ok()) return content.status();
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(*content, '\n')) {
    ++line_no;
    if (line.empty()) continue;
    std::vector<std::string> fields = absl::StrSplit(line, '\t');
    tsv.lines.emplace_back(line_no, std::move(fields));
  }
  return tsv;
}

}  // namespace

const std::vector<std::string>& CorpusScenarios() {
  static const std::vector<std::string>* const kScenarios =
      new std::vector<std::string>{"s1-row-crc32", "s2-statement-nochecksum",
                                   "s3-row-wide-nochecksum", "s4-crash-kill9"};
  return *kScenarios;
}

std::string CorpusScenarioDir(absl::string_view scenario) {
  return absl::StrCat(SrcDir(), "/binlog_storage/tests/data/mariadb/",
                      scenario);
}

std::string CorpusBinlogPath(absl::string_view scenario,
                             absl::string_view name) {
  return absl::StrCat(CorpusScenarioDir(scenario), "/binlogs/", name);
}

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat("cannot read ", path));
  return ss.str();
}

std::vector<CorpusGroup> CorpusManifest::GroupsOf(
    absl::string_view scenario, absl::string_view file) const {
  std::vector<CorpusGroup> out;
  for (const CorpusGroup& g : groups) {
    if (g.scenario == scenario && g.file == file) out.push_back(g);
  }
  return out;
}

absl::StatusOr<CorpusManifest> LoadCorpusManifest() {
  absl::StatusOr<TestTsv> tsv = ReadTestTsv("corpus_manifest.tsv");
  if (!tsv.ok()) return tsv.status();
  const std::string& path = tsv->path;
  CorpusManifest m;
  for (const auto& line : tsv->lines) {
    const int line_no = line.first;
    const std::vector<std::string>& f = line.second;
    auto num = [&](size_t i, uint64_t* out) {
      return i < f.size() && absl::SimpleAtoi(f[i], out);
    };
    if (f[0] == "file") {
      CorpusFile cf;
      if (f.size() != 9 || !num(3, &cf.size) || !num(8, &cf.parsed_end)) {
        return BadLine(path, line_no, "bad file line");
      }
      cf.scenario = f[1];
      cf.name = f[2];
      cf.server_version = f[4];
      cf.checksum = f[5];
      cf.in_use = f[6] == "1";
      cf.created_at_startup = f[7] == "1";
      m.files.push_back(std::move(cf));
    } else if (f[0] == "group") {
      CorpusGroup g;
      if (f.size() != 8 || !num(3, &g.start) || !num(4, &g.end)) {
        return BadLine(path, line_no, "bad group line");
      }
      g.scenario = f[1];
      g.file = f[2];
      g.complete = f[5] == "1";
      g.terminator = f[6];
      g.gtid = f[7];
      m.groups.push_back(std::move(g));
    } else if (f[0] == "partial") {
      CorpusPartialEvent p;
      if (f.size() != 6 || !num(3, &p.pos) || !num(4, &p.available_bytes) ||
          !num(5, &p.declared_size)) {
        return BadLine(path, line_no, "bad partial line");
      }
      p.scenario = f[1];
      p.file = f[2];
      m.partial_events.push_back(std::move(p));
    } else if (f[0] == "type") {
      uint64_t code = 0;
      if (f.size() != 4 || !num(2, &code) || code > 255) {
        return BadLine(path, line_no, "bad type line");
      }
      m.type_names.emplace_back(static_cast<int>(code), f[3]);
    } else if (f[0] == "index") {
      if (f.size() != 3) return BadLine(path, line_no, "bad index line");
      m.index_entries.emplace_back(f[1], f[2]);
    } else {
      return BadLine(path, line_no, "unknown record type");
    }
  }
  if (m.files.empty()) {
    return absl::DataLossError(absl::StrCat(path, ": no files listed"));
  }
  return m;
}

FileWalk WalkBinlogFile(absl::string_view file) {
  FileWalk w;
  if (file.size() < 4 ||
      file.substr(0, 4) != absl::string_view("\xfe" "bin", 4)) {
    return w;
  }
  w.magic_ok = true;
  uint64_t pos = 4;
  w.end = pos;
  while (pos < file.size()) {
    if (file.size() - pos < 19) {
      w.partial_tail = true;
      break;
    }
    const unsigned char* h =
        reinterpret_cast<const unsigned char*>(file.data() + pos);
    uint32_t size = static_cast<uint32_t>(h[9]) |
                    (static_cast<uint32_t>(h[10]) << 8) |
                    (static_cast<uint32_t>(h[11]) << 16) |
                    (static_cast<uint32_t>(h[12]) << 24);
    if (size < 19) {
      w.bogus_size = true;
      break;
    }
    if (file.size() - pos < size) {
      w.partial_tail = true;
      break;
    }
    WalkedEvent e;
    e.offset = pos;
    e.size = size;
    e.type = h[4];
    e.bytes = file.substr(pos, size);
    w.events.push_back(e);
    pos += size;
    w.end = pos;
  }
  return w;
}

absl::StatusOr<CorpusIds> LoadCorpusIds() {
  absl::StatusOr<TestTsv> tsv = ReadTestTsv("corpus_ids.tsv");
  if (!tsv.ok()) return tsv.status();
  const std::string& path = tsv->path;
  CorpusIds ids;
  for (const auto& line : tsv->lines) {
    const int line_no = line.first;
    const std::vector<std::string>& f = line.second;
    if (f[0] == "file" && f.size() == 4) {
      ids.files.emplace_back(f[1], f[2], f[3] == "CRC32");
    } else if (f[0] == "event" && f.size() == 6) {
      CorpusPrintedEvent e;
      if (!absl::SimpleAtoi(f[3], &e.pos) || !absl::SimpleAtoi(f[4], &e.type)) {
        return BadLine(path, line_no, "bad event line");
      }
      e.scenario = f[1];
      e.file = f[2];
      e.desc = f[5];
      ids.events.push_back(std::move(e));
    } else {
      return BadLine(path, line_no, "unknown record");
    }
  }
  if (ids.files.empty()) {
    return absl::DataLossError(absl::StrCat(path, ": no files listed"));
  }
  return ids;
}

absl::StatusOr<std::unique_ptr<CorpusFileEvents>> LoadCorpusFileEvents(
    absl::string_view scenario, absl::string_view name) {
  auto f = std::make_unique<CorpusFileEvents>();
  absl::StatusOr<std::string> bytes =
      ReadFileToString(CorpusBinlogPath(scenario, name));
  if (!bytes.ok()) return bytes.status();
  f->bytes = *std::move(bytes);
  for (const WalkedEvent& e : WalkBinlogFile(f->bytes).events) {
    f->at[e.offset] = e.bytes;
  }
  return f;
}

}  // namespace testutil
}  // namespace binlog
