// File: binlog/transaction_scan.h (internal)
//
// The one routine that walks a log file by transactions. Every scan of a
// whole file goes through it: the last-file recovery scan, the scan of the
// files a MariaDB Binlog_checkpoint names, the close of a file a rotation
// left unclosed (binlog/log_recovery.cc), the relay log's last-file scan
// (binlog/relay_log.cc), the mirror log's last-file scan
// (binlog/mirror_log.cc), the GTID scans (binlog/gtid_scan.cc) and the
// last-event-time lookup (binlog/retention.cc).
//
// What it does once, for all of them: open the file with a Reader, read its
// Format_description, classify each following event with a
// TransactionBoundaryParser (or the caller's classifier), track where the
// last event that leaves no transaction open ends (the valid end: the end
// of the last complete transaction or file-level event), and say why the
// scan stopped, in one vocabulary:
//
//   kEnd         the file ended after a complete event (a transaction may
//                still be open: see pending())
//   kTornTail    the Reader stopped at a torn tail (a partial event, or
//                zeros where an event should start)
//   kDamaged     the Reader refused an event (DataLoss: a bad checksum, an
//                impossible header)
//   kUnexpected  an event that fits no transaction (the parser said so, or
//                the visitor did)
//   kStopped     the visitor asked to stop
//
// The caller's visitor sees every event after the Format_description with
// its classification and decides what it means (collect XIDs, GTIDs, a
// timestamp); it can refuse (an error status ends the scan with that error)
// or stop early. I/O errors end the scan with the error.
//
// Thread safety: thread-compatible.

#ifndef BINLOG_BINLOG_TRANSACTION_SCAN_H_
#define BINLOG_BINLOG_TRANSACTION_SCAN_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "binlog/event.h"
#include "binlog/reader.h"
#include "binlog/transaction_boundary.h"
#include "io/file_system.h"

namespace binlog {
namespace internal {

// What a visitor tells the scan after an event.
enum class ScanNext {
  kContinue,
  kStop,        // end the scan here (ScanStop::kStopped)
  kUnexpected,  // the event is damage the caller recognises: treat it as
                // an event that fits no transaction (ScanStop::kUnexpected)
};

enum class ScanStop { kEnd, kTornTail, kDamaged, kUnexpected, kStopped };

class TransactionScan {
 public:
  using Result = TransactionBoundaryParser::Result;
  // Classifies one event (the default: a TransactionBoundaryParser that
  // follows the file's Format_description, including ones later in the
  // file, which are file-level events).
  using Classifier = absl::FunctionRef<Result(const Event&)>;
  using Visitor = absl::FunctionRef<absl::StatusOr<ScanNext>(const Event&, Result)>;

  // Opens `path` and reads its Format_description event. Errors: DataLoss
  // naming the file when that event is unreadable; I/O errors.
  static absl::StatusOr<TransactionScan> Open(io::FileSystem* fs, const std::string& path,
                                              const ReaderOptions& options);

  TransactionScan(TransactionScan&&) = default;
  TransactionScan& operator=(TransactionScan&&) = default;

  // With `tolerate`, an event that fits no transaction does not stop the
  // scan: the visitor sees it (Result::kUnexpected) and the scan goes on,
  // the parser recovering as its contract says. For scans that read files
  // other servers wrote and look for what they hold (the GTID scans), not
  // for where they end. Default: false (stop, ScanStop::kUnexpected).
  void set_tolerate_unexpected(bool tolerate) { tolerate_unexpected_ = tolerate; }

  // The file's own Format_description, and where its event ends.
  const FormatDescription& format_description() const { return fde_; }
  // The Format_description event's header (its timestamp, server id).
  const EventHeader& fde_header() const { return fde_header_; }
  uint64_t header_end() const { return header_end_; }
  const std::string& path() const { return path_; }

  // Reads the rest of the file. Each event goes to `classify` (when given)
  // or to the built-in parser, then to `visit`. Returns the visitor's error
  // or an I/O error; a damaged or torn file is not an error here (stop()
  // says so), so each caller decides what damage means for it. Call once.
  absl::Status Run(Visitor visit);
  absl::Status Run(Classifier classify, Visitor visit);

  // Closes the file (the results stay): before a caller changes it.
  void Close() { reader_.reset(); }

  // After Run:
  ScanStop stop() const { return stop_; }
  // The end of the last event that left no transaction open (at least
  // header_end()).
  uint64_t valid_end() const { return valid_end_; }
  // Events read after valid_end() (in a transaction still open).
  uint64_t pending() const { return pending_; }
  // Where the damage starts (kTornTail, kDamaged, kUnexpected).
  uint64_t bad_at() const { return bad_at_; }
  // A partial or bad event, not zeros (kTornTail of zeros is false).
  bool partial() const { return partial_; }
  // A bad event, zeros or an event that fits no transaction: what the
  // torn-tail bound must explain (kTornTail, kDamaged, kUnexpected).
  bool damaged() const {
    return stop_ == ScanStop::kTornTail || stop_ == ScanStop::kDamaged ||
           stop_ == ScanStop::kUnexpected;
  }
  // Why the scan stopped, for messages: the Reader's reason, "file ends
  // inside a transaction", "end of file", or the unexpected event.
  const std::string& reason() const { return reason_; }
  // kDamaged: the Reader's DataLoss status.
  const absl::Status& reader_error() const { return reader_error_; }

 private:
  TransactionScan() = default;

  std::string path_;
  std::unique_ptr<Reader> reader_;
  FormatDescription fde_;
  EventHeader fde_header_;
  uint64_t header_end_ = 0;
  Event ev_;
  ScanStop stop_ = ScanStop::kEnd;
  uint64_t valid_end_ = 0;
  uint64_t pending_ = 0;
  uint64_t bad_at_ = 0;
  bool partial_ = false;
  std::string reason_ = "end of file";
  absl::Status reader_error_;
  bool tolerate_unexpected_ = false;
};

}  // namespace internal
}  // namespace binlog

#endif  // BINLOG_BINLOG_TRANSACTION_SCAN_H_
