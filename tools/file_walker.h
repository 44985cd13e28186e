// File: tools/file_walker.h
//
// FileWalker: reads a binlog to its end with a binlog::Reader and keeps, per
// file, the facts the inspection commands report: event and transaction
// counts, first and last timestamps, the in-use flag, the torn tail the
// reader recorded, and whether the file ends inside an open transaction.
//
// The Reader hands out events of all files as one stream; the walker cuts it
// into files by Event::file_number and attributes each TornTail (which the
// reader records while moving past the end of a file) to the file it names.
// Transactions are delimited with TransactionBoundaryParser, reset at every
// file: MySQL and MariaDB never split a transaction across files.
//
// Thread safety: not thread-safe.
// Lifetime: the reader and the observer must outlive the walker.

#ifndef BINLOG_TOOLS_FILE_WALKER_H_
#define BINLOG_TOOLS_FILE_WALKER_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "binlog/reader.h"
#include "binlog/transaction_boundary.h"

namespace binlog {
namespace tools {

struct FileFacts {
  std::string name;     // base name, from Reader::file_name()
  uint64_t number = 0;  // Event::file_number
  uint64_t events = 0;
  uint64_t transactions = 0;  // events the parser classified as kEnded
  uint64_t bad_checksums = 0;
  bool have_time = false;
  uint32_t first_time = 0;  // header timestamps of the first and last event
  uint32_t last_time = 0;
  bool in_use = false;  // LOG_EVENT_BINLOG_IN_USE_F in the file's FDE
  uint64_t end = 0;     // end offset of the last complete event
  bool torn = false;    // the reader recorded a TornTail for this file
  TornTail torn_tail;
  // Set at the end of the file: the parser was inside a transaction.
  bool open_transaction = false;
  uint64_t open_transaction_start = 0;  // offset of the event that opened it
};

class FileWalker {
 public:
  class Observer {
   public:
    virtual ~Observer() = default;
    // Every event, in order. `file` already counts it.
    virtual void OnEvent(const FileFacts& file, const Event& event,
                         TransactionBoundaryParser::Result boundary) = 0;
    // A file was read to its end (torn tail, if any, attached). `last` is
    // true when the reader has no further file.
    virtual void OnFileEnd(const FileFacts& file, bool last) = 0;
  };

  FileWalker(Reader* reader, Observer* observer);

  // Reads to the end of the last file (or until an observer calls
  // RequestStop): OK. Otherwise returns the reader's
  // error (see binlog/reader.h); failed_file() then holds the facts gathered
  // so far for the file the reader stopped in (only name and number if it
  // stopped before that file's first event). Files before it have had their
  // OnFileEnd(last = false).
  absl::Status Run();

  // Makes Run() return OK after the current event (no OnFileEnd for the
  // file it is in). For observers that have seen enough (dump
  // --stop-position, find).
  void RequestStop() { stop_ = true; }
  bool stopped() const { return stop_; }

  const FileFacts& failed_file() const { return failed_; }
  uint64_t total_events() const { return total_events_; }

 private:
  void StartFile(const Event& event);
  void EndFile(bool last);
  void TakeTornTails();

  Reader* reader_;
  Observer* observer_;
  TransactionBoundaryParser parser_;
  bool in_file_ = false;
  FileFacts cur_;
  FileFacts failed_;
  size_t torn_seen_ = 0;
  uint64_t total_events_ = 0;
  bool stop_ = false;
};

}  // namespace tools
}  // namespace binlog

#endif  // BINLOG_TOOLS_FILE_WALKER_H_
