#include "binlog/file_recovery.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "binlog/format.h"
#include "binlog/status_macros.h"

namespace binlog {
namespace internal {

absl::Status CutAndClearInUse(io::FileSystem* fs, const std::string& path,
                              uint64_t size, uint64_t valid_end) {
  BINLOG_ASSIGN_OR_RETURN(std::unique_ptr<io::WritableFile> f,
                          fs->OpenWritable(path, io::OpenMode::kOpenExisting));
  // Two steps, each durable before the next: first the cut, then the
  // in-use flag. Pages reach the disk in any order before an fdatasync
  // returns, so with one fdatasync a crash could persist the cleared flag
  // without the cut: the file would claim a clean close, end in a torn
  // event or half transaction, and never be recovered again.
  absl::Status ws = absl::OkStatus();
  if (size > valid_end) {
    ws = f->Truncate(valid_end);
    if (ws.ok()) ws = f->Sync();
  }
  // Clear the in-use flag (one byte in place; the FDE checksum is defined
  // with the flag clear, so it stays valid). The other flag bits (a relay
  // log's kFlagRelayLog) stay.
  char flags_lo = 0;
  size_t got = 0;
  if (ws.ok()) {
    auto rf = fs->OpenReadable(path);
    ws = rf.ok() ? (*rf)->Read(kInUseFlagFileOffset, 1, &flags_lo, &got)
                 : rf.status();
  }
  if (ws.ok() && got != 1) {
    // Writing back a byte never read would clear the other flags too.
    ws = absl::DataLossError(absl::StrCat(path, ": cannot read the flags of its ",
                                          "Format_description"));
  }
  if (ws.ok()) {
    flags_lo = static_cast<char>(flags_lo & ~kFlagBinlogInUse);
    ws = f->Write(kInUseFlagFileOffset, absl::string_view(&flags_lo, 1));
  }
  if (ws.ok()) ws = f->Sync();
  absl::Status cs = f->Close();
  if (!ws.ok()) return ws;
  return cs;
}

absl::Status FinishFileClose(io::WritableFile* f, uint64_t end, bool trim, char flags_lo,
                             const std::function<absl::Status(io::WritableFile*)>& sync) {
  if (trim) {
    BINLOG_ASSIGN_OR_RETURN(uint64_t size, f->Size());
    if (size > end) BINLOG_RETURN_IF_ERROR(f->Truncate(end));
  }
  BINLOG_RETURN_IF_ERROR(sync(f));
  BINLOG_RETURN_IF_ERROR(f->Write(kInUseFlagFileOffset, absl::string_view(&flags_lo, 1)));
  return sync(f);
}

}  // namespace internal
}  // namespace binlog
