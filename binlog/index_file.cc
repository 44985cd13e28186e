#include "binlog/index_file.h"

#include <algorithm>
#include <iterator>

#include <cstdio>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace binlog {

std::string BinlogFileName(absl::string_view basename, uint64_t number) {
  return absl::StrFormat("%s.%06u", basename, number);
}

std::string IndexFileName(absl::string_view basename) {
  return absl::StrCat(basename, ".index");
}

std::string IndexTempFileName(absl::string_view basename) {
  return absl::StrCat(basename, ".index_crash_safe");
}

bool SplitBinlogFileName(absl::string_view name, absl::string_view* basename,
                         uint64_t* number) {
  const size_t dot = name.rfind('.');
  if (dot == absl::string_view::npos || dot == 0) return false;
  absl::string_view digits = name.substr(dot + 1);
  if (digits.size() < 6 || digits.size() > 10) return false;
  uint64_t n = 0;
  for (char c : digits) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  if (n > kMaxFileNumber) return false;
  *basename = name.substr(0, dot);
  *number = n;
  return true;
}

bool ParseBinlogFileName(absl::string_view basename, absl::string_view name,
                         uint64_t* number) {
  absl::string_view base;
  uint64_t n = 0;
  if (!SplitBinlogFileName(name, &base, &n) || base != basename) return false;
  *number = n;
  return true;
}

absl::StatusOr<std::vector<uint64_t>> ParseIndex(absl::string_view content,
                                                 absl::string_view dir,
                                                 absl::string_view basename,
                                                 absl::string_view index_path) {
  std::vector<uint64_t> numbers;
  int line_no = 0;
  std::string dir_slash(dir);
  while (!dir_slash.empty() && dir_slash.back() == '/') dir_slash.pop_back();
  dir_slash += '/';
  for (absl::string_view line : absl::StrSplit(content, '\n')) {
    ++line_no;
    absl::ConsumeSuffix(&line, "\r");
    if (line.size() <= 1) break;  // as the servers: a 0-1 char line ends it
    absl::string_view name = line;
    if (absl::StartsWith(name, "/")) {
      if (!absl::ConsumePrefix(&name, dir_slash)) {
        return absl::DataLossError(absl::StrCat(
            index_path, " line ", line_no, ": entry '", line,
            "' is outside the log directory ", dir));
      }
    } else {
      absl::ConsumePrefix(&name, "./");
    }
    uint64_t n = 0;
    if (name.find('/') != absl::string_view::npos ||
        !ParseBinlogFileName(basename, name, &n)) {
      return absl::DataLossError(absl::StrCat(
          index_path, " line ", line_no, ": entry '", line,
          "' is not a file '", basename, ".NNNNNN' in the log directory"));
    }
    if (!numbers.empty() && n <= numbers.back()) {
      return absl::DataLossError(absl::StrCat(
          index_path, " line ", line_no, ": entry '", line,
          "' is out of order or repeated"));
    }
    numbers.push_back(n);
  }
  return numbers;
}

absl::StatusOr<std::string> ReadSmallFile(io::FileSystem* fs,
                                          const std::string& path,
                                          size_t max_size) {
  auto file = fs->OpenReadable(path);
  if (!file.ok()) return file.status();
  auto size = (*file)->Size();
  if (!size.ok()) return size.status();
  if (*size > max_size) {
    return absl::ResourceExhaustedError(absl::StrCat(
        path, ": ", *size, " bytes is larger than the limit ", max_size));
  }
  std::string out(static_cast<size_t>(*size), '\0');
  size_t got = 0;
  absl::Status s = (*file)->Read(0, out.size(), out.data(), &got);
  if (!s.ok()) return s;
  out.resize(got);
  return out;
}

absl::StatusOr<std::vector<uint64_t>> ReadIndex(io::FileSystem* fs,
                                                const std::string& dir,
                                                const std::string& basename) {
  std::string path = io::JoinPath(dir, IndexFileName(basename));
  std::string tmp = io::JoinPath(dir, IndexTempFileName(basename));
  auto exists = fs->Exists(path);
  if (!exists.ok()) return exists.status();
  if (*exists) {
    auto content = ReadSmallFile(fs, path);
    if (!content.ok()) return content.status();
    return ParseIndex(*content, dir, basename, path);
  }
  // No index. A server that unlinks its index before renaming the new one
  // into place (MySQL) can die in between, leaving only the new copy. Read
  // it, without renaming anything (readers never change the directory), and
  // only if it is complete: a copy cut short by a crash before its
  // fdatasync ends without a newline.
  auto tmp_exists = fs->Exists(tmp);
  if (!tmp_exists.ok()) return tmp_exists.status();
  if (*tmp_exists) {
    auto content = ReadSmallFile(fs, tmp);
    if (!content.ok()) return content.status();
    if (!content->empty() && content->back() == '\n') {
      return ParseIndex(*content, dir, basename, tmp);
    }
  }
  return absl::NotFoundError(absl::StrCat("no index file ", path));
}

namespace {

// Replaces `path` with `content`: temporary file, fdatasync, rename,
// directory fsync, so a crash leaves the old or the new content.
absl::Status ReplaceFile(io::FileSystem* fs, io::Directory* dir_handle,
                         const std::string& tmp, const std::string& path,
                         absl::string_view content, uint32_t file_mode) {
  auto file = fs->OpenWritable(tmp, io::OpenMode::kCreateOrTruncate, file_mode);
  if (!file.ok()) return file.status();
  absl::Status s = (*file)->Write(0, content);
  if (s.ok()) s = (*file)->Sync();
  absl::Status c = (*file)->Close();
  if (!s.ok()) return s;
  if (!c.ok()) return c;
  s = fs->Rename(tmp, path);
  if (!s.ok()) return s;
  return dir_handle->Sync();
}

}  // namespace

absl::Status WriteIndex(io::FileSystem* fs, io::Directory* dir_handle,
                        const std::string& dir, const std::string& basename,
                        const std::vector<uint64_t>& numbers, uint32_t file_mode) {
  std::string content;
  for (uint64_t n : numbers) {
    absl::StrAppend(&content, "./", BinlogFileName(basename, n), "\n");
  }
  return ReplaceFile(fs, dir_handle,
                     io::JoinPath(dir, IndexTempFileName(basename)),
                     io::JoinPath(dir, IndexFileName(basename)), content,
                     file_mode);
}

std::string SyncRecordFileName(absl::string_view basename) {
  return absl::StrCat(basename, ".recovery");
}

absl::StatusOr<std::vector<FileSyncRecord>> ReadSyncRecords(
    io::FileSystem* fs, const std::string& dir, const std::string& basename) {
  std::string path = io::JoinPath(dir, SyncRecordFileName(basename));
  std::vector<FileSyncRecord> out;
  auto content = ReadSmallFile(fs, path, 1 << 20);
  if (absl::IsNotFound(content.status())) return out;
  if (!content.ok()) return content.status();
  int line_no = 0;
  bool header = false;
  for (absl::string_view line : absl::StrSplit(*content, '\n', absl::SkipEmpty())) {
    ++line_no;
    std::vector<absl::string_view> f = absl::StrSplit(line, ' ');
    if (!header) {
      if (line != "binlog-recovery 1") break;
      header = true;
      continue;
    }
    FileSyncRecord r;
    bool ok = f.size() == 6 && f[0] == "file" && f[2] == "sync" &&
              f[4] == "window" && absl::SimpleAtoi(f[1], &r.first_file) &&
              absl::SimpleAtoi(f[5], &r.unsynced_window) &&
              (f[3] == "every_group" || f[3] == "every_n_groups" ||
               f[3] == "never") &&
              (out.empty() || r.first_file > out.back().first_file);
    if (!ok) {
      return absl::DataLossError(absl::StrCat(path, " line ", line_no,
                                              ": malformed record '", line, "'"));
    }
    r.sync_policy = std::string(f[3]);
    out.push_back(r);
  }
  if (!header) {
    return absl::DataLossError(
        absl::StrCat(path, ": not a binlog-recovery file"));
  }
  return out;
}

absl::Status WriteSyncRecords(io::FileSystem* fs, io::Directory* dir_handle,
                              const std::string& dir,
                              const std::string& basename,
                              const std::vector<FileSyncRecord>& records,
                              uint32_t file_mode) {
  std::string content = "binlog-recovery 1\n";
  for (const FileSyncRecord& r : records) {
    absl::StrAppend(&content, "file ", r.first_file, " sync ", r.sync_policy,
                    " window ", r.unsynced_window, "\n");
  }
  std::string path = io::JoinPath(dir, SyncRecordFileName(basename));
  return ReplaceFile(fs, dir_handle, absl::StrCat(path, ".tmp"), path, content,
                     file_mode);
}

std::string SourceMapFileName(absl::string_view basename) {
  return absl::StrCat(basename, ".sources");
}

const SourceFileRecord* SegmentOf(const std::vector<SourceFileRecord>& records, uint64_t n) {
  auto it = std::upper_bound(records.begin(), records.end(), n,
                             [](uint64_t v, const SourceFileRecord& r) { return v < r.file; });
  if (it == records.begin()) return nullptr;
  return &*std::prev(it);
}

std::string SourceFileNameOf(const std::vector<SourceFileRecord>& records,
                             absl::string_view basename, uint64_t n) {
  const SourceFileRecord* r = SegmentOf(records, n);
  if (r == nullptr) return BinlogFileName(basename, n);
  if (r->file == n) return r->source_file;
  absl::string_view base;
  uint64_t k = 0;
  if (!SplitBinlogFileName(r->source_file, &base, &k)) return BinlogFileName(basename, n);
  return BinlogFileName(base, k + (n - r->file));
}

bool IsValidSourceFileName(absl::string_view name) {
  if (name.size() > kMaxSourceFileNameLength) return false;
  for (char ch : name) {
    if (ch <= ' ' || ch > '~' || ch == '/') return false;
  }
  absl::string_view base;
  uint64_t number = 0;
  return SplitBinlogFileName(name, &base, &number) && !base.empty();
}

absl::StatusOr<std::vector<SourceFileRecord>> ReadSourceMap(io::FileSystem* fs,
                                                            const std::string& dir,
                                                            const std::string& basename) {
  const std::string path = io::JoinPath(dir, SourceMapFileName(basename));
  std::vector<SourceFileRecord> out;
  auto content = ReadSmallFile(fs, path, 16 << 20);
  if (absl::IsNotFound(content.status())) return out;
  if (!content.ok()) return content.status();
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(*content, '\n', absl::SkipEmpty())) {
    ++line_no;
    if (line_no == 1) {
      if (line != "binlog-sources 1") {
        return absl::DataLossError(absl::StrCat(path, ": not a binlog-sources file"));
      }
      continue;
    }
    std::vector<absl::string_view> f = absl::StrSplit(line, ' ');
    SourceFileRecord r;
    const bool ok = f.size() == 6 && f[0] == "file" && f[2] == "server" && f[4] == "source" &&
                    absl::SimpleAtoi(f[1], &r.file) && r.file >= 1 &&
                    r.file <= kMaxFileNumber && absl::SimpleAtoi(f[3], &r.server_id) &&
                    IsValidSourceFileName(f[5]) &&
                    (out.empty() || r.file > out.back().file);
    if (!ok) {
      return absl::DataLossError(
          absl::StrCat(path, " line ", line_no, ": malformed record '", line, "'"));
    }
    r.source_file = std::string(f[5]);
    out.push_back(std::move(r));
  }
  if (line_no == 0) return absl::DataLossError(absl::StrCat(path, ": empty"));
  return out;
}

absl::Status WriteSourceMap(io::FileSystem* fs, io::Directory* dir_handle,
                            const std::string& dir, const std::string& basename,
                            const std::vector<SourceFileRecord>& records,
                            uint32_t file_mode) {
  std::string content = "binlog-sources 1\n";
  for (const SourceFileRecord& r : records) {
    absl::StrAppend(&content, "file ", r.file, " server ", r.server_id, " source ",
                    r.source_file, "\n");
  }
  const std::string path = io::JoinPath(dir, SourceMapFileName(basename));
  return ReplaceFile(fs, dir_handle, absl::StrCat(path, ".tmp"), path, content, file_mode);
}

std::string ResetIntentFileName(absl::string_view basename) {
  return absl::StrCat(basename, ".reset");
}

absl::Status WriteResetIntent(io::FileSystem* fs, io::Directory* dir_handle,
                              const std::string& dir, const std::string& basename,
                              uint64_t first_file, uint32_t file_mode) {
  std::string path = io::JoinPath(dir, ResetIntentFileName(basename));
  return ReplaceFile(fs, dir_handle, absl::StrCat(path, ".tmp"), path,
                     absl::StrCat("binlog-reset 1\nfirst ", first_file, "\n"),
                     file_mode);
}

absl::StatusOr<uint64_t> ReadResetIntent(io::FileSystem* fs, const std::string& dir,
                                         const std::string& basename) {
  std::string path = io::JoinPath(dir, ResetIntentFileName(basename));
  absl::StatusOr<bool> exists = fs->Exists(path);
  if (!exists.ok()) return exists.status();
  if (!*exists) return absl::NotFoundError(absl::StrCat(path, " does not exist"));
  absl::StatusOr<std::string> content = ReadSmallFile(fs, path, 4096);
  if (!content.ok()) return content.status();
  std::vector<absl::string_view> lines =
      absl::StrSplit(*content, '\n', absl::SkipEmpty());
  uint64_t first = 0;
  if (lines.size() != 2 || lines[0] != "binlog-reset 1" ||
      !absl::ConsumePrefix(&lines[1], "first ") ||
      !absl::SimpleAtoi(lines[1], &first) || first < 1 || first > kMaxFileNumber) {
    return absl::DataLossError(absl::StrCat(path, ": not a reset intent record"));
  }
  return first;
}

const FileSyncRecord* SyncRecordFor(const std::vector<FileSyncRecord>& records,
                                    uint64_t number) {
  const FileSyncRecord* found = nullptr;
  for (const FileSyncRecord& r : records) {
    if (r.first_file <= number) found = &r;
  }
  return found;
}

}  // namespace binlog
