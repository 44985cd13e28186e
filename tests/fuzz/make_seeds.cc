// Seed corpora for the fuzz targets in tests/fuzz/.
//
//   make_seeds OUT_DIR [CORPUS_DIR]
//
// Writes OUT_DIR/{reader,dump,recovery,index,payload}/ with:
//   - files the library writes: closed files with and without checksums,
//     plain and compressed (zstd, lz4),
//     a rotated file, the active file of a log that was not closed (in-use
//     flag set), that file cut inside its last transaction, with zeros and
//     with garbage after it, and the index;
//   - from CORPUS_DIR (tests/data/mariadb): prefixes of every MariaDB
//     binlog (4, 16 and 64 KiB; libFuzzer mutates small inputs far faster
//     than megabyte files) and the index files;
//   - payload/: the bodies of the Transaction_payload events of the
//     compressed logs.

#include <dirent.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "binlog/event_builder.h"
#include "binlog/index_file.h"
#include "binlog/log.h"
#include "binlog/reader.h"
#include "io/file_system.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using binlog::fuzz::WriteWholeFile;

std::string ReadAllOrDie(const std::string& path) {
  auto s = binlog::ReadSmallFile(binlog::io::FileSystem::Default(), path,
                                 1ull << 30);
  if (!s.ok()) {
    std::fprintf(stderr, "make_seeds: %s\n", s.status().ToString().c_str());
    std::exit(1);
  }
  return *s;
}

void BuildTxn(binlog::TransactionBuffer* txn, uint64_t id, size_t payload) {
  txn->Clear();
  const uint32_t ts = 1700000000;
  binlog::AppendAnonymousGtid(txn, ts, 1, 0, 1);
  binlog::AppendQuery(txn, ts, 1, 7, "db", "BEGIN");
  std::string text = absl::StrCat("txn ", id, " ");
  while (text.size() < payload) text.push_back(static_cast<char>('a' + id % 26));
  char* body = txn->AppendEvent(binlog::kRowsQueryEvent, 1, ts,
                                binlog::kFlagIgnorable, text.size() + 1);
  body[0] = static_cast<char>(text.size() > 255 ? 255 : text.size());
  std::memcpy(body + 1, text.data(), text.size());
  binlog::AppendXid(txn, ts, 1, id);
}

// Writes a small log; returns (active file while open, closed files).
void LibrarySeeds(const std::string& scratch, bool checksums,
                  binlog::io::Codec codec,
                  std::vector<std::pair<std::string, std::string>>* out,
                  std::vector<std::pair<std::string, std::string>>* payloads,
                  std::string* index) {
  std::string dir = absl::StrCat(scratch, "/lib_", checksums, "_",
                                 binlog::io::CodecName(codec));
  ::mkdir(dir.c_str(), 0755);
  binlog::fuzz::ClearDir(dir);
  binlog::Options o;
  o.checksums = checksums;
  o.max_file_size = 4096;
  o.now_seconds = [] { return 1700000000u; };
  o.compression = codec;
  auto log = binlog::Binlog::Open(dir, "binlog", o);
  if (!log.ok()) std::exit(1);
  binlog::TransactionBuffer txn(checksums);
  std::vector<binlog::CommitPosition> pos;
  for (int i = 0; i < 12; ++i) {
    BuildTxn(&txn, i, 40 + 97 * i % 700);
    auto p = (*log)->Commit(&txn);
    if (!p.ok()) std::exit(1);
    pos.push_back(*p);
  }
  const std::string tag = absl::StrCat(checksums ? "crc" : "nocrc", "_",
                                       binlog::io::CodecName(codec));
  auto files = (*log)->ListFiles();
  std::string active = ReadAllOrDie(dir + "/" + files.back().name);
  out->emplace_back(absl::StrCat("lib_", tag, "_active"), active);
  const binlog::CommitPosition& last = pos.back();
  if (last.file_number == files.back().number && last.end <= active.size()) {
    // The active file may be longer (preallocated zeros): cut it at the
    // end of the last transaction first.
    std::string used = active.substr(0, last.end);
    std::string cut = used.substr(0, (last.start + last.end) / 2);
    out->emplace_back(absl::StrCat("lib_", tag, "_torn"), cut);
    out->emplace_back(absl::StrCat("lib_", tag, "_zeros"),
                      used + std::string(512, '\0'));
    out->emplace_back(absl::StrCat("lib_", tag, "_garbage"),
                      used + used.substr(last.start, 50));
  }
  if (!(*log)->Close().ok()) std::exit(1);
  for (const auto& f : files) {
    out->emplace_back(absl::StrCat("lib_", tag, "_", f.name),
                      ReadAllOrDie(dir + "/" + f.name));
  }
  *index = ReadAllOrDie(dir + "/binlog.index");
  // The bodies of the Transaction_payload events, for payload_fuzzer.
  binlog::ReaderOptions ro;
  ro.payloads = binlog::PayloadMode::kRaw;
  auto reader = binlog::Reader::OpenDirectory(dir, "binlog", ro);
  if (!reader.ok()) std::exit(1);
  binlog::Event ev;
  int n = 0;
  while ((*reader)->Next(&ev).ok()) {
    if (ev.header.type == binlog::kTransactionPayloadEvent) {
      payloads->emplace_back(absl::StrCat("lib_", tag, "_payload_", n++),
                             std::string(ev.body()));
    }
  }
  binlog::fuzz::ClearDir(dir);
  ::rmdir(dir.c_str());
}

std::vector<std::string> ListDirOrEmpty(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return names;
  while (struct dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  ::closedir(d);
  return names;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: make_seeds OUT_DIR [CORPUS_DIR]\n");
    return 2;
  }
  std::string out = argv[1];
  ::mkdir(out.c_str(), 0755);
  for (const char* t : {"reader", "dump", "recovery", "index", "payload"}) {
    ::mkdir(absl::StrCat(out, "/", t).c_str(), 0755);
  }
  std::vector<std::pair<std::string, std::string>> binlogs;
  std::vector<std::pair<std::string, std::string>> indexes;
  std::vector<std::pair<std::string, std::string>> payloads;
  for (bool checksums : {true, false}) {
    for (auto codec : {binlog::io::Codec::kNone, binlog::io::Codec::kZstd,
                       binlog::io::Codec::kLz4}) {
      std::string index;
      LibrarySeeds(binlog::fuzz::ScratchDir(), checksums, codec, &binlogs,
                   &payloads, &index);
      indexes.emplace_back(absl::StrCat("lib_", checksums), index);
    }
  }
  if (argc > 2) {
    std::string corpus = argv[2];
    for (const std::string& set : ListDirOrEmpty(corpus)) {
      std::string dir = absl::StrCat(corpus, "/", set, "/binlogs");
      for (const std::string& name : ListDirOrEmpty(dir)) {
        std::string bytes = ReadAllOrDie(dir + "/" + name);
        std::string tag = absl::StrCat(set, "_", name);
        if (name.size() > 6 && name.substr(name.size() - 6) == ".index") {
          indexes.emplace_back(tag, bytes);
          continue;
        }
        for (size_t len : {4096u, 16384u, 65536u}) {
          if (bytes.size() > len) {
            binlogs.emplace_back(absl::StrCat(tag, "_", len), bytes.substr(0, len));
          }
        }
        if (bytes.size() <= 65536) binlogs.emplace_back(tag, bytes);
      }
    }
  }
  indexes.emplace_back("hostile", "./binlog.000001\n../x.000002\n/etc/passwd\n");
  indexes.emplace_back("absolute", "/var/lib/mysql/binlog.000007\r\nbinlog.000009\n\n");
  for (const auto& b : binlogs) {
    for (const char* t : {"reader", "dump", "recovery"}) {
      WriteWholeFile(absl::StrCat(out, "/", t, "/", b.first), b.second);
    }
  }
  for (const auto& i : indexes) {
    WriteWholeFile(absl::StrCat(out, "/index/", i.first), i.second);
  }
  for (const auto& p : payloads) {
    WriteWholeFile(absl::StrCat(out, "/payload/", p.first), p.second);
  }
  std::printf("make_seeds: %zu binlog seeds, %zu index seeds, %zu payload "
              "seeds in %s\n",
              binlogs.size(), indexes.size(), payloads.size(), out.c_str());
  return 0;
}
