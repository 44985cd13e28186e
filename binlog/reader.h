// File: binlog/reader.h
//
// Reader: iterates the events of a binlog, across files, in order.
//
// Two kinds of readers share this class:
//   - a tailing reader of a live log, from Binlog::NewReader(). It never
//     reads past the end the writer has published (see Binlog), never takes
//     a lock the writer holds during I/O, and can wait for more events.
//   - a reader of files at rest, from Reader::OpenDirectory() or
//     Reader::OpenFiles(): any MySQL or MariaDB binlog directory or file,
//     including ours after Close().
//
// Each event is validated before it is returned: event_size within bounds,
// the event inside the file, log_pos equal to its end offset (unless
// disabled), and the CRC32 footer (per ChecksumMode; a tailing reader does
// not re-verify the bytes it takes from the log's in-memory ring of recent
// groups, which its own process's writer published, unless
// ReaderOptions::verify_published_checksums says so; bytes read from a
// file are always verified). The first event of each
// file must be a Format_description event; it decides whether the file's
// events carry checksums.
//
// Positions written by MariaDB 11.4 and later: the events a transaction
// wrote through the server's binlog cache carry log_pos 0; exactly 0 is
// accepted for them, in files whose Format_description names MariaDB 11.4+
// (FormatDescription::unpositioned_cache_events, LogPosMayBeZero in
// binlog/event.h); every other event keeps the check.
//
// Relay logs (binlog/relay_log.h) are detected by the relay flag
// (LOG_EVENT_RELAY_LOG_F) in a file's first Format_description, or, for the
// relay logs of MySQL 5.0-5.5 replicas, which have no such flag, by the
// source's Rotate event such a replica stores after its own
// Format_description: log_pos 0 without the artificial flag (no binlog has
// one); format_description().relay_log is then true from that event on.
// Relay logs are read with these differences, whatever the ReaderOptions say: log_pos is not
// checked (the events carry the source's log_pos; check_log_pos is off for
// that file), the source's Format_description later in the file applies to
// the events after it (format_description() returns it then, with the
// file's own in_use and relay_log), and only a Rotate event with the relay
// flag (the relay log's own rotation) ends the file; the source's Rotate
// events are returned like any other event.
//
// End of a file: a Rotate event, or the end of the file's bytes, moves the
// reader to the next file. For files at rest, a file whose in-use flag is set
// (a crashed or still-open file) may end with a torn event or with zeros;
// the reader records that as a TornTail (see torn_tails()) and goes on with
// the next file, as mysqlbinlog does. The same in a file whose in-use flag is
// clear is DataLoss, except all-zero bytes where a header should be, which
// end the file cleanly (the unused part of a preallocated file) and are
// recorded as a TornTail too. Bytes after a Rotate event (which should end
// its file) are recorded as a TornTail as well.
//
// Transaction_payload events (compressed transactions) are expanded into
// their inner events by default (ReaderOptions::payloads, PayloadMode).
// The whole payload is decompressed and validated when the reader reaches
// it, before its first inner event is returned, so a damaged payload is one
// DataLoss at the payload's offset (nothing of it is returned). While the
// inner events are returned, position() is already the payload's end: a
// reader resumed there continues after the whole transaction. A payload
// whose CRC32 is bad under ChecksumMode::kReport is returned raw (with
// checksum kBad), since its bytes cannot be trusted to decompress.
//
// Where a tailing reader reads: a reader that has caught up takes its
// events from the log's ring of the most recent bytes written
// (Options::reader_ring_bytes, binlog/tail_ring.h; NextBatch returns views
// of it), without a system call or a copy; a reader behind the ring reads
// the file in windows of ReaderOptions::buffer_size and returns to the
// ring at the end of the first window after the ring holds its position
// (the file is read at most one window past that point). The events are
// the same either way; an event whose header came from the file window
// and whose rest from the ring is returned only if the file's header
// equals the ring's, else it is read from the file and verified.
//
// Errors (absl::Status from Next):
//   OutOfRange   no more events now. For a live log, more may come: call
//                WaitForMore(). For files at rest: the end.
//   DataLoss     malformed event or checksum mismatch; the message names
//                the file and the offset ("<file>: offset N: ..."), and
//                position() is that offset. The reader stays at that event:
//                later calls return the same error.
//   NotFound     a file the reader needs is missing (purged, deleted).
//   Unimplemented  a file in a format the library does not read (not
//                damage): binlog v1-v3 (MySQL 3.23-4.x: a Start_v3 event
//                opens the file; "unsupported binlog version N"), or the
//                events after a MariaDB Start_encryption event (164; the
//                Start_encryption event itself is returned, the error
//                comes next and stays) when ReaderOptions::
//                mariadb_binlog_keys lacks key 1. With the key, the
//                events after it are decrypted (binlog/maria_encryption.h)
//                and validated and returned as the server wrote them
//                (NextBatch then returns them one per batch, decrypted).
//   other        I/O errors from the FileSystem.
//
// Thread safety: not thread-safe; use one reader per thread. Any number of
// readers may run concurrently with each other and with the writer.
// Lifetime: the Event returned by Next() (its data view) is valid until the
// next call to Next() or the reader's destruction. A tailing reader may
// outlive its Binlog (it then reports OutOfRange at the end, and
// WaitForMore() returns Cancelled).

#ifndef BINLOG_BINLOG_READER_H_
#define BINLOG_BINLOG_READER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "binlog/event.h"
#include "binlog/options.h"
#include "binlog/payload_header.h"
#include "io/file_system.h"
#include "io/types.h"  // io::SequentialReaderStats

namespace binlog {

namespace internal {
class LogSource;
class TailRing;
}  // namespace internal

struct Event {
  absl::string_view data;  // the whole event: header, body, footer
  EventHeader header;
  uint64_t file_number = 0;  // number of the file (its extension)
  uint64_t offset = 0;       // start of the event in its file
  uint64_t end_offset = 0;   // offset + event_size
  ChecksumState checksum = ChecksumState::kNone;
  bool file_has_checksums = false;
  // Set for the inner events of a Transaction_payload that a reader in
  // PayloadMode::kDecoded expands: `data` is the inner event as stored in
  // the payload (log_pos 0, no footer), file_number/offset/end_offset are
  // the payload event's, file_has_checksums is false (inner events have no
  // footer), and `checksum` is the payload event's (its CRC32 covered
  // these bytes). payload_index counts the inner events from 0;
  // payload_events is their number.
  bool from_payload = false;
  uint32_t payload_index = 0;
  uint32_t payload_events = 0;

  // The event body: after the 19-byte header, before the footer.
  absl::string_view body() const { return EventBody(data, file_has_checksums); }
};

// Consecutive whole events of one file, as stored, returned together by
// Reader::NextBatch (for senders that forward events without decoding
// them: one span of bytes, framed per event from `starts`).
struct EventBatch {
  absl::string_view data;    // the events, back to back, as in the file
  uint64_t file_number = 0;  // the file they are in
  uint64_t offset = 0;       // file offset of data[0]
  // Where each event starts in `data`, ascending, the first 0: event i is
  // data[starts[i], starts[i + 1]) and the last one ends at data.size().
  // The vector is reused from call to call (no allocation once it has
  // grown to the largest batch).
  std::vector<uint32_t> starts;
  bool file_has_checksums = false;  // the events end in a CRC32 footer

  size_t size() const { return starts.size(); }
  bool empty() const { return starts.empty(); }
  absl::string_view event(size_t i) const {
    size_t end = i + 1 < starts.size() ? starts[i + 1] : data.size();
    return data.substr(starts[i], end - starts[i]);
  }
  uint64_t end_offset() const { return offset + data.size(); }
};

struct BatchOptions {
  // At most this many bytes per batch (0: the reader's window,
  // ReaderOptions::buffer_size). A single event larger than the cap is
  // returned alone.
  size_t max_bytes = 0;
  // Verify each event's CRC32 footer. Off by default: a source forwarding
  // its log does not verify (MySQL's dump thread does not by default); the
  // replica verifies what it receives.
  bool verify_checksums = false;
};

// A file that ended in something other than a complete event.
struct TornTail {
  std::string file_name;
  uint64_t offset = 0;          // end of the last complete event
  uint64_t trailing_bytes = 0;  // bytes after it
  bool zeros = false;           // all-zero header where an event should start
  bool in_use = false;          // the file's in-use flag was set
  // Bytes after a Rotate event, which ends its file: they were not read.
  bool after_rotate = false;
  std::string reason;

  // The tail is data the reader skipped rather than what a crash or a
  // preallocation leaves: bytes after a Rotate event, or a torn event in a
  // closed file (in-use flag clear) that are not all zeros. A reader of
  // such a file has not read all of it.
  bool unread_data() const { return after_rotate || (!zeros && !in_use); }
};

class Reader {
 public:
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // Opens the binlog files of directory `dir`. With a non-empty `basename`
  // the files listed in `<basename>.index` are read. With an empty basename
  // the one `*.index` file in the directory names the basename; if there is
  // none, every file named `<name>.NNNNNN` (one basename) is read in number
  // order. InvalidArgument if the choice is ambiguous.
  static absl::StatusOr<std::unique_ptr<Reader>> OpenDirectory(
      const std::string& dir, const std::string& basename,
      const ReaderOptions& options, io::FileSystem* fs = nullptr);

  // Reads the given files in the given order, each one completely.
  // ReaderOptions::start_file is an index into `paths` plus one (0 = first).
  static absl::StatusOr<std::unique_ptr<Reader>> OpenFiles(
      const std::vector<std::string>& paths, const ReaderOptions& options,
      io::FileSystem* fs = nullptr);

  // Reads the next event into `*event`. See the file comment for errors.
  absl::Status Next(Event* event);

  // Reads the next events, up to the end visible now (the published end
  // of a live log), as one batch: consecutive whole events of one file in
  // one view of the reader's window, with their boundaries. On OK the
  // batch holds at least one event and position() is its end.
  //
  // The work per event is finding its boundary: event_size is checked
  // against the same bounds Next() applies (and against the end of the
  // window, the file and the published end), log_pos as Next() checks it
  // (ReaderOptions::check_log_pos: one load, which also tells a torn event
  // from a whole one), and the CRC32 footer only with
  // BatchOptions::verify_checksums (whatever ReaderOptions::checksum_mode
  // says; without it, an in-use file at rest, a crashed log not yet
  // recovered, may end in a torn event whose header is whole, which is
  // returned as Next() with ChecksumMode::kSkip returns it). Events are
  // returned as stored:
  // Transaction_payload events are not expanded, whatever
  // ReaderOptions::payloads says. Everything else is as for Next(): a
  // file's Format_description (and, in a relay log, a later one) starts a
  // batch, a Rotate event ends its batch and its file, the next batch
  // comes from the next file, torn tails of files at rest are recorded the
  // same way, and the errors are the same (OutOfRange at the end, then
  // WaitForMore() for a live log; DataLoss naming the file and offset of
  // the first bad event, which stays sticky). Events that need more than
  // finding boundaries (a file's first events, a relay log's events,
  // anything unusual) come one per batch, validated as Next() validates
  // them.
  //
  // Next() and NextBatch() may be mixed at event boundaries; while Next()
  // is returning the inner events of a payload, NextBatch() returns
  // FailedPrecondition. The batch's views are valid until the next call
  // to Next() or NextBatch() or the reader's destruction.
  absl::Status NextBatch(EventBatch* batch, const BatchOptions& options = {});

  // Ends the views of the last NextBatch (they become invalid) and gives
  // back what the reader holds of the log's in-memory ring of recent
  // groups. A caller that has copied a batch and may then block for long
  // (a send to a slow replica) calls it, so that the writer can reuse the
  // ring for the other readers meanwhile. The next call reads on from
  // where the reader is.
  void ReleaseViews() { DropRingView(); }

  // For a live log: waits until more events are visible past the reader's
  // position, or the deadline passes. OK when there is more to read,
  // DeadlineExceeded on timeout, Cancelled if the log was closed and the
  // reader has read everything (after a clean Close() the reader can read
  // up to and including the Stop event first).
  // For files at rest: returns OutOfRange at once.
  absl::Status WaitForMore(absl::Time deadline);

  // Name (not path) of the file the reader is in, and the offset of the next
  // event it will read.
  const std::string& file_name() const { return file_name_; }
  uint64_t file_number() const { return file_number_; }
  uint64_t position() const { return pos_; }

  // The Format_description of the current file (after its first Next()).
  const FormatDescription& format_description() const { return fde_; }

  const std::vector<TornTail>& torn_tails() const { return torn_tails_; }

  // I/O counters of this reader (reads, bytes, prefetch hits and waits).
  io::SequentialReaderStats io_stats() const;

  // The header fields of the payload whose inner events Next() is
  // returning (valid while Event::from_payload events come from it).
  const PayloadHeader& payload_header() const { return payload_header_; }

 private:
  friend class Binlog;
  friend class MirrorLog;  // NewReader over the copy's published end
  Reader(std::shared_ptr<internal::LogSource> source, const ReaderOptions& o,
         io::FileSystem* fs);

  // Next() without its payload expansion when `expand` is false, with
  // the given checksum rule; with `trust_written_here`, events of a file
  // this process wrote (written_here_) are not verified.
  absl::Status ReadEvent(Event* event, bool expand, ChecksumMode checksum_mode,
                         bool trust_written_here);
  // NextBatch's common case: the whole events in the window at pos_.
  // `*done` false: none (the caller reads one event with ReadEvent).
  absl::Status FillBatch(EventBatch* batch, const BatchOptions& options,
                         bool* done);
  // Next()'s path for the common case of a caught-up reader (reader.cc);
  // false: ReadEvent reads the event.
  bool NextInRingView(Event* ev, bool trust_written_here);
  // log_pos of an event ending at `end` is as the reader requires
  // (ReaderOptions::check_log_pos; relay logs, artificial events and
  // MariaDB 11.4+ cache events excepted).
  bool LogPosOk(uint32_t log_pos, uint16_t flags, uint8_t type,
                uint64_t end) const;
  // The file window holds the whole event at pos_ (false if it holds less
  // than its header).
  bool WholeEventInWindow();
  // A Rotate event ending at `end` ends the file.
  void EndFileAtRotate(uint64_t end, uint64_t limit);
  absl::Status OpenFile(uint64_t number);
  // How far the current file may be read (LogSource::Limit), cached in
  // limit_ and loaded again only once pos_ reaches it (see reader.cc).
  uint64_t ReadableEnd();
  // The SequentialReader's limit for a LogSource limit, set if it changed.
  void SetWindowLimit(uint64_t limit);
  // Bytes [offset, offset + n) of the current ring view, or empty.
  absl::string_view InRing(uint64_t offset, size_t n) const {
    if (offset < ring_off_) return absl::string_view();
    const uint64_t d = offset - ring_off_;
    if (d > ring_view_.size() || n > ring_view_.size() - d) {
      return absl::string_view();
    }
    return ring_view_.substr(static_cast<size_t>(d), n);
  }
  // The rest of the current ring view from pos_, or empty.
  absl::string_view RingRest() const {
    if (pos_ < ring_off_ || pos_ - ring_off_ >= ring_view_.size()) {
      return absl::string_view();
    }
    return ring_view_.substr(static_cast<size_t>(pos_ - ring_off_));
  }
  // A new ring view at pos_, below `limit`; false (no view, no pin) when
  // the ring does not hold pos_ (no ring, behind it, another file).
  bool RingAt(uint64_t limit);
  // Leaves the ring (the reader reads the file): no view, no pin.
  void DropRingView();
  absl::Status NextFile(bool* moved);
  // A view of file bytes [offset, offset + need), shorter at `limit` or at
  // the end of the file; valid until the next Fill.
  absl::Status Fill(uint64_t offset, size_t need, uint64_t limit,
                    absl::string_view* out);
  absl::Status ReadFormatDescription();
  absl::Status Corrupt(uint64_t offset, absl::string_view what);
  // PayloadMode::kDecoded (reader_payload.cc): decode the payload event
  // `*ev` and return its first inner event in `*ev`; return the next one.
  absl::Status StartPayload(Event* ev);
  absl::Status NextInPayload(Event* ev);

  std::shared_ptr<internal::LogSource> source_;
  ReaderOptions options_;
  io::FileSystem* fs_;

  // Current file.
  std::unique_ptr<io::RandomAccessFile> file_;
  uint64_t file_number_ = 0;
  std::string file_name_;
  FormatDescription fde_;
  bool has_checksums_ = false;
  bool file_done_ = false;  // Rotate seen or end reached
  bool fde_pending_return_ = false;
  bool need_fde_ = false;   // the file is listed but not yet published
  // The current file was written and published by this process's writer
  // (LogSource::WrittenHere): see ReaderOptions::verify_published_checksums.
  bool written_here_ = false;
  uint64_t pos_ = 0;
  // The readable end of the current file as last loaded (ReadableEnd);
  // 0 after OpenFile, so the first read loads it.
  uint64_t limit_ = 0;

  // The read-ahead reader of file_ (windows of ReaderOptions::buffer_size)
  // and the buffer of the payload being expanded (binlog/reader_buffers.h;
  // internal types, so behind a pointer). Declared after file_, so it is
  // destroyed first: a prefetch never outlives the file.
  struct Buffers;
  std::unique_ptr<Buffers> buffers_;

  // A live log's ring of the most recent bytes written (binlog/tail_ring.h)
  // and this reader's pin slot in it (null: the reader reads the file
  // only). ring_view_ holds ring bytes of the current file from offset
  // ring_off_, intact while the pin is held (until the next RingAt or
  // DropRingView). A caught-up reader reads from it; one behind it reads
  // the file through buffers_->seq, and comes back when its file window
  // ends inside the ring.
  internal::TailRing* ring_ = nullptr;
  int ring_slot_ = -1;
  absl::string_view ring_view_;
  uint64_t ring_off_ = 0;

  std::vector<TornTail> torn_tails_;

  // The payload being expanded: its inner events in buffers_->payload, the
  // next one at payload_next_, and the payload event's position and
  // checksum.
  PayloadHeader payload_header_;
  bool in_payload_ = false;
  size_t payload_next_ = 0;
  Event payload_event_;

  // A MariaDB-encrypted file after its Start_encryption event, with the
  // key (ReaderOptions::mariadb_binlog_keys) and the event's nonce.
  bool decrypting_ = false;
  std::string maria_key_;
  std::string maria_nonce_;

  bool started_ = false;
  absl::Status sticky_;  // a DataLoss the reader cannot move past
};

}  // namespace binlog

#endif  // BINLOG_BINLOG_READER_H_
