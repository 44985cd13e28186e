// A log's directory. See binlog/log_directory.h.

#include "binlog/log_directory.h"

#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "binlog/event.h"
#include "binlog/format.h"
#include "binlog/reader.h"
#include "binlog/status_macros.h"

namespace binlog {
namespace internal {


absl::Status CreateLogDirectory(io::FileSystem* fs, const std::string& dir,
                                bool create_if_missing, uint32_t mode) {
  BINLOG_ASSIGN_OR_RETURN(bool existed, fs->Exists(dir));
  if (existed) return absl::OkStatus();
  if (!create_if_missing) {
    return absl::NotFoundError(absl::StrCat("no directory ", dir));
  }
  BINLOG_RETURN_IF_ERROR(fs->CreateDirectory(dir, mode));
  // The new directory's entry lives in its parent: without this fsync a
  // power cut can take the directory, and every file in it, away.
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::Directory> parent,
                          fs->OpenDirectory(io::DirName(dir)));
  return parent->Sync();
}

bool HoldsOnlyHeaderEvents(io::FileSystem* fs, const std::string& path,
                           std::initializer_list<uint8_t> header_types) {
  ReaderOptions ro;
  ro.checksum_mode = ChecksumMode::kSkip;
  ro.payloads = PayloadMode::kRaw;
  ro.check_log_pos = false;
  {
    // Created but torn before its Format_description was whole.
    absl::StatusOr<uint64_t> size = fs->FileSize(path);
    if (size.ok() && *size < kMagicSize + kHeaderSize) return true;
  }
  auto reader = Reader::OpenFiles({path}, ro, fs);
  if (!reader.ok()) return false;
  Event ev;
  absl::Status s;
  while ((s = (*reader)->Next(&ev)).ok()) {
    const uint8_t t = ev.header.type;
    if (std::find(header_types.begin(), header_types.end(), t) == header_types.end()) {
      return false;
    }
  }
  return absl::IsOutOfRange(s) || absl::IsDataLoss(s);
}

absl::StatusOr<bool> OnlyZerosFrom(io::FileSystem* fs, const std::string& path,
                                   uint64_t from) {
  BINLOG_ASSIGN_OR_RETURN(uint64_t size, fs->FileSize(path));
  if (size <= from) return true;
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::RandomAccessFile> f, fs->OpenReadable(path));
  constexpr size_t kChunk = 1 << 20;
  std::string buf(kChunk, '\0');
  for (uint64_t off = from; off < size;) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(kChunk, size - off));
    size_t got = 0;
    BINLOG_RETURN_IF_ERROR(f->Read(off, want, buf.data(), &got));
    if (got == 0) break;  // shorter than its size said: the rest reads as nothing
    for (size_t i = 0; i < got; ++i) {
      if (buf[i] != 0) return false;
    }
    off += got;
  }
  return true;
}

}  // namespace internal
}  // namespace binlog
