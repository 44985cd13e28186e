// binlogtool follow: tail -f for a binlog directory.
//
// Mechanism. The live log's tailing reader (Binlog::NewReader) belongs to
// the process that holds the writer's lock, so a separate process reads the
// files at rest: Reader::OpenDirectory with start_file/start_offset set to
// the position after the last event printed, read to the end of what is on
// disk, sleep --poll-interval, repeat. Latency: at most one poll interval
// (default 100 ms) plus the time to open the reader (index read, file
// open, Format_description read: well under a millisecond on a warm cache)
// and read the new events.
//
// What the at-rest reader sees of a file being written:
//   - the end of the written data followed by preallocated zeros, or by
//     nothing: the end (recorded as a torn tail, not printed);
//   - a partly written event (the writer's pwrite in progress): a torn
//     tail (file shorter than the event) or a checksum mismatch (zeros
//     inside the event): the reader is opened with ChecksumMode::kVerify,
//     so such an event is never printed; it is read again at the next poll.
//     A DataLoss that persists for 5 seconds at the same position is real
//     damage: follow then reports it and exits 1;
//   - a new file: followed once the index names it (the writer updates the
//     index after creating the file), since each poll opens a new reader.
// Events are printed once written, before the writer's fdatasync: follow
// shows what a kAfterWrite reader would see.

#include <atomic>
#include <csignal>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tools/commands.h"
#include "tools/event_printer.h"

namespace binlog {
namespace tools {
namespace {

std::atomic<bool> g_stop{false};

extern "C" void OnStopSignal(int) { g_stop.store(true); }

// Installs SIGINT/SIGTERM handlers for the lifetime of the object.
class StopSignals {
 public:
  StopSignals() {
    g_stop.store(false);
    old_int_ = std::signal(SIGINT, OnStopSignal);
    old_term_ = std::signal(SIGTERM, OnStopSignal);
  }
  ~StopSignals() {
    std::signal(SIGINT, old_int_);
    std::signal(SIGTERM, old_term_);
  }

 private:
  void (*old_int_)(int);
  void (*old_term_)(int);
};

constexpr absl::Duration kDamagePersistence = absl::Seconds(5);

struct Position {
  bool known = false;
  uint64_t file = 0;    // file number
  uint64_t offset = 0;  // start of the next event
};

}  // namespace

int RunFollow(io::FileSystem* fs, const Args& args) {
  std::string error;
  PrintOptions po;
  std::string basename;
  uint64_t poll_ms = 100;
  uint64_t max_events = 0;
  double timeout = 0;
  if (!GetFormat(args, &po.format, &error) ||
      !GetBasename(args, &basename, &error) ||
      !GetUint(args, "--poll-interval", &poll_ms, &error) ||
      !GetUint(args, "--max-events", &max_events, &error) ||
      !GetSeconds(args, "--timeout", &timeout, &error)) {
    return UsageError("follow", error);
  }
  if (poll_ms < 1 || poll_ms > 60000) {
    return UsageError("follow", "--poll-interval must be 1..60000 ms");
  }
  po.decode_rows = args.Has("--decode-rows");
  if (args.paths.size() != 1 || !IsDirectory(fs, args.paths[0])) {
    return UsageError("follow", "follow takes one binlog directory");
  }
  const std::string dir = args.paths[0];
  const bool has_deadline = args.Has("--timeout");
  const absl::Time deadline =
      has_deadline ? absl::Now() + absl::Seconds(timeout) : absl::InfiniteFuture();
  const absl::Duration poll = absl::Milliseconds(static_cast<int64_t>(poll_ms));

  StopSignals signals;
  EventPrinter printer(po);
  Position pos;
  uint64_t printed = 0;
  uint64_t printed_file = 0;
  std::string current_name;

  auto should_stop = [&] {
    return g_stop.load() || (has_deadline && absl::Now() >= deadline);
  };

  // Start at the end: read the last file once without printing (its
  // Table_maps are remembered for the Rows events that follow).
  if (!args.Has("--from-start")) {
    Source src;
    src.is_dir = true;
    src.dir = dir;
    src.basename = basename;
    auto last = LastFileNumber(fs, src);
    ReaderOptions o = BaseReaderOptions();
    o.checksum_mode = ChecksumMode::kVerify;
    if (last.ok()) o.start_file = *last;
    absl::StatusOr<std::unique_ptr<Reader>> probe =
        absl::OutOfRangeError("index update pending");
    if (!InspectIndex(fs, dir, basename).pending_rename) {
      probe = Reader::OpenDirectory(dir, basename, o, fs);
    }
    if (probe.ok()) {
      Event ev;
      while ((*probe)->Next(&ev).ok()) {
        pos.known = true;
        pos.file = ev.file_number;
        pos.offset = ev.end_offset;
        if (ev.header.type == kTableMapEvent ||
            ev.header.type == kFormatDescriptionEvent) {
          std::string discard;
          printer.PrintEvent((*probe)->file_name(), ev,
                             (*probe)->format_description(), &discard);
        }
        if (should_stop()) return OutFlush() ? kExitOk : kExitUsage;
      }
    } else if (absl::IsInvalidArgument(probe.status())) {
      ErrStatus("follow", probe.status());
      return kExitUsage;
    }
  }
  if (pos.known) {
    Err(absl::StrCat("binlogtool follow: following ", Printable(dir),
                     " from file ", pos.file, " offset ", pos.offset, "\n"));
  } else {
    Err(absl::StrCat("binlogtool follow: following ", Printable(dir),
                     " from its first event\n"));
  }

  absl::Status last_error;
  absl::Time error_since;
  Position error_pos;
  for (;;) {
    ReaderOptions o = BaseReaderOptions();
    o.checksum_mode = ChecksumMode::kVerify;
    if (pos.known) {
      o.start_file = pos.file;
      o.start_offset = pos.offset;
    }
    absl::Status s;
    // Reader::OpenDirectory completes a pending index update (a rename,
    // see IndexState in cli.h); a writer creating its first index is in
    // that state for a moment, and the rename would break the writer's own.
    // Wait for the index instead.
    IndexState st = InspectIndex(fs, dir, basename);
    if (st.pending_rename) s = absl::OutOfRangeError("index update pending");
    absl::StatusOr<std::unique_ptr<Reader>> reader =
        s.ok() ? Reader::OpenDirectory(dir, basename, o, fs)
               : absl::StatusOr<std::unique_ptr<Reader>>(s);
    if (!reader.ok()) {
      s = reader.status();
      if (absl::IsOutOfRange(s)) {
        // no index yet: poll again
      } else if (absl::IsInvalidArgument(s)) {  // e.g. two logs, no --basename
        ErrStatus("follow", s);
        return kExitUsage;
      }
    } else {
      Reader* r = reader->get();
      Event ev;
      size_t torn_seen = 0;
      while ((s = r->Next(&ev)).ok()) {
        // A torn tail of a file the reader has left (a crashed file
        // followed by a newer one) is printed as dump prints it; the torn
        // end of the active file is just "not written yet".
        const auto& tails = r->torn_tails();
        for (; torn_seen < tails.size(); ++torn_seen) {
          printer.PrintTornTail(tails[torn_seen], OutBuffer());
        }
        if (ev.file_number != printed_file || printed == 0) {
          printer.PrintFileStart(r->file_name(), OutBuffer());
          printed_file = ev.file_number;
        }
        printer.PrintEvent(r->file_name(), ev, r->format_description(),
                           OutBuffer(),
                           ev.from_payload ? &r->payload_header() : nullptr);
        OutMaybeFlush();
        pos.known = true;
        pos.file = ev.file_number;
        pos.offset = ev.end_offset;
        last_error = absl::OkStatus();
        ++printed;
        if (max_events > 0 && printed >= max_events) {
          return OutFlush() ? kExitOk : kExitUsage;
        }
        if (g_stop.load()) return OutFlush() ? kExitOk : kExitUsage;
      }
    }
    if (!OutFlush()) {
      Err("binlogtool follow: error writing to stdout\n");
      return kExitUsage;
    }
    if (!s.ok() && !absl::IsOutOfRange(s)) {
      // DataLoss at the end of the active file is usually an event being
      // written; NotFound a file named by the index before it exists.
      // Either has to clear within kDamagePersistence.
      absl::Time now = absl::Now();
      if (last_error.ok() || pos.file != error_pos.file ||
          pos.offset != error_pos.offset ||
          last_error.code() != s.code()) {
        last_error = s;
        error_since = now;
        error_pos = pos;
      } else if (now - error_since >= kDamagePersistence) {
        ErrStatus("follow", s);
        return ExitForStatus(s);
      }
    } else {
      last_error = absl::OkStatus();
    }
    // Sleep one poll interval, in slices, so signals and the timeout are
    // noticed quickly.
    absl::Time wake = absl::Now() + poll;
    while (absl::Now() < wake) {
      if (should_stop()) return OutFlush() ? kExitOk : kExitUsage;
      absl::SleepFor(std::min(poll, absl::Milliseconds(20)));
    }
    if (should_stop()) return OutFlush() ? kExitOk : kExitUsage;
  }
}

}  // namespace tools
}  // namespace binlog
