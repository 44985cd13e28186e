// libFuzzer target: crash recovery on an arbitrary last file. The input
// becomes binlog.000001 of a log whose index names it; Binlog::Open runs the
// recovery scan (binlog/log.cc RecoverLastFile). When Open succeeds, the
// target appends one transaction, closes the log and reads the whole
// directory back.
//
// Besides sanitizer reports, it aborts when recovery breaks its promise
// (binlog/log.h): after a successful Open of a file that needed recovery,
// the file must end exactly at RecoveryReport::valid_end and read back with
// no error and no torn tail; the appended transaction must be readable and
// be the last one.
//
// Errors: binlog/log.h names the codes Open may return: Unavailable
// (another writer holds the log), InvalidArgument (bad options), DataLoss
// (an index or last file that cannot be trusted), NotFound (a missing
// directory, or an index entry whose file is missing). Here no other writer
// exists, the options are valid, and the directory, the index and the file
// it names all exist, so the only code the file's bytes may produce is
// DataLoss, FailedPrecondition for the two refusals the contract names
// (another flavor; an encrypted file without a keyring), or Unimplemented
// for a binlog format the library does not read (v1/v3). Anything else
// (another FailedPrecondition, ResourceExhausted, Unknown,
// Internal, InvalidArgument for bytes...) is a finding: either the library
// returns a code its contract does not name, or it names the wrong one.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "binlog/event_builder.h"
#include "binlog/format.h"
#include "binlog/log.h"
#include "binlog/reader.h"
#include "binlog/transaction.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

uint32_t FixedNow() { return 1700000000; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace binlog;
  static const std::string dir = fuzz::ScratchDir() + "/recovery";
  ::mkdir(dir.c_str(), 0755);
  fuzz::ClearDir(dir);
  fuzz::WriteWholeFile(dir + "/binlog.index", std::string("./binlog.000001\n"));
  const std::string file1 = dir + "/binlog.000001";
  fuzz::WriteWholeFile(file1, data, size);

  // The input decides whether the log uses checksums (a file's own FDE
  // decides how it is read; the new file follows the options).
  Options o;
  o.checksums = size == 0 || (data[size - 1] & 1) == 0;
  o.max_file_size = 4096;
  o.now_seconds = FixedNow;
  auto log = Binlog::Open(dir, "binlog", o);
  if (!log.ok()) {
    const absl::Status& s = log.status();
    // A code outside the contract's list...
    FUZZ_CHECK_MSG(absl::IsUnavailable(s) || absl::IsInvalidArgument(s) ||
                       absl::IsDataLoss(s) || absl::IsNotFound(s) ||
                       absl::IsFailedPrecondition(s) || absl::IsUnimplemented(s),
                   s.ToString());
    // A file of another flavor or layout than the options' (its
    // Format_description says so) is refused, not recovered.
    if (absl::IsFailedPrecondition(s) &&
        s.message().find("a log keeps the flavor of its files") != absl::string_view::npos) {
      return 0;
    }
    // A file that starts with the encrypted-binlog magic, in a log opened
    // without a keyring: refused as Open's contract says.
    if (absl::IsFailedPrecondition(s) &&
        s.message().find("reading it needs the keyring") != absl::string_view::npos) {
      return 0;
    }
    // A file of a binlog format the library does not read (a Start_v3
    // event opens it): Unimplemented, as Open's contract says.
    if (absl::IsUnimplemented(s)) return 0;
    // ...and, in this harness, anything but DataLoss (see the file comment).
    FUZZ_CHECK_MSG(absl::IsDataLoss(s), s.ToString());
    return 0;
  }
  RecoveryReport rep = (*log)->recovery();
  TransactionBuffer txn(o.checksums);
  AppendQuery(&txn, FixedNow(), 1, 7, "db", "BEGIN");
  AppendXid(&txn, FixedNow(), 1, 424242);
  auto pos = (*log)->Commit(&txn);
  FUZZ_CHECK_MSG(pos.ok(), pos.status().ToString());
  absl::Status cs = (*log)->Close();
  FUZZ_CHECK_MSG(cs.ok(), cs.ToString());
  log->reset();

  if (rep.recovered) {
    struct stat st;
    FUZZ_CHECK_MSG(::stat(file1.c_str(), &st) == 0, "stat");
    FUZZ_CHECK_MSG(static_cast<uint64_t>(st.st_size) == rep.valid_end,
               absl::StrCat("size ", st.st_size, " valid_end ", rep.valid_end));
  }
  auto reader = Reader::OpenDirectory(dir, "binlog", ReaderOptions());
  FUZZ_CHECK_MSG(reader.ok(), reader.status().ToString());
  uint64_t last_xid_file = 0;
  for (;;) {
    Event ev;
    absl::Status s = (*reader)->Next(&ev);
    if (absl::IsOutOfRange(s)) break;
    if (!s.ok()) {
      // Only a file recovery left alone (closed cleanly: in-use flag clear)
      // may hold damage; the recovered file and the new one must not.
      FUZZ_CHECK_MSG(!rep.recovered && ev.file_number != 2 &&
                     (*reader)->file_number() == 1,
                 s.ToString());
      return 0;
    }
    if (ev.header.type == kXidEvent) last_xid_file = ev.file_number;
  }
  if (rep.recovered) {
    FUZZ_CHECK_MSG((*reader)->torn_tails().empty(),
               (*reader)->torn_tails().front().reason);
  }
  FUZZ_CHECK_MSG(last_xid_file == pos->file_number, "appended transaction missing");
  return 0;
}
