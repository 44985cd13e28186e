// File: tools/cli.h
//
// What binlogtool's commands share: exit codes, buffered stdout, messages on
// stderr, the command-line parser, the choice between one directory and a
// list of files (Source), time arguments, and the progress indicator.
//
// Output: everything a command prints on stdout goes through Out(), which
// collects it in a 1 MiB buffer and writes it with one fwrite per buffer
// (no per-line or per-field flush: the dump loop prints millions of lines).
// Err() flushes that buffer first, so messages stay in order on a terminal.
//
// Thread safety: not thread-safe (binlogtool is single-threaded; follow's
// SIGINT handler only sets an atomic flag).

#ifndef BINLOG_TOOLS_CLI_H_
#define BINLOG_TOOLS_CLI_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "binlog/gtid.h"
#include "binlog/options.h"
#include "binlog/reader.h"
#include "io/file_system.h"
#include "tools/output.h"

namespace binlog {
namespace tools {

inline constexpr int kExitOk = 0;
inline constexpr int kExitDamaged = 1;   // DataLoss, or verify found problems
inline constexpr int kExitUsage = 2;     // bad command line, or an I/O error
inline constexpr int kExitNotFound = 3;  // find: no such transaction
// A file in a format the library does not read (Unimplemented from the
// reader: binlog v1-v3, MariaDB-encrypted events), not damage.
inline constexpr int kExitUnsupported = 4;
// verify: the binlog files check out but a GTID index file beside one
// does not (derived data: readers rebuild it; removing it loses nothing).
inline constexpr int kExitBadIndex = 5;

// The exit status for a reader error: kExitDamaged for DataLoss,
// kExitUnsupported for Unimplemented, kExitUsage for anything else (I/O).
int ExitForStatus(const absl::Status& s);

// The ReaderOptions every command starts from: the defaults, plus the
// MariaDB binlog keys of --mariadb_key_file (SetMariaDbKeys).
ReaderOptions BaseReaderOptions();
void SetMariaDbKeys(std::map<uint32_t, std::string> keys);

// For dump and list: reports on stderr every torn tail in `tails` that is
// data the reader did not read (TornTail::unread_data: bytes after a
// Rotate event, a torn event in a closed file) and returns kExitDamaged if
// there is one, else kExitOk. A command that stops before the end of a
// file never exits 0.
int ReportUnreadTails(absl::string_view command,
                      const std::vector<TornTail>& tails);

// ---------------------------------------------------------------------------
// Output

// The stdout buffer; append to it, then call OutMaybeFlush().
std::string* OutBuffer();
// Writes the buffer if it holds more than 1 MiB.
void OutMaybeFlush();
// Writes the buffer and fflush(stdout). False if stdout failed.
bool OutFlush();
// Appends to the buffer (and flushes when full).
void Out(absl::string_view s);

// Writes to stderr, after flushing stdout.
void Err(absl::string_view s);
// "binlogtool COMMAND: message" on stderr (message made Printable).
void ErrStatus(absl::string_view command, const absl::Status& s);

// ---------------------------------------------------------------------------
// Command line

struct FlagSpec {
  const char* name;  // "--format"
  bool takes_value;
};

struct Args {
  std::string command;
  std::vector<std::string> paths;
  std::map<std::string, std::string> flags;  // given flags: name -> value
  bool help = false;

  bool Has(absl::string_view name) const;
  // The value of a flag, or `def` when it was not given.
  std::string Get(absl::string_view name, absl::string_view def = "") const;
};

// Parses argv[2..] against `specs`. Accepts "--flag=value" and "--flag
// value"; "--" ends the flags; "--help"/"-h" sets Args::help. False with
// `*error` set for an unknown flag or a missing value.
bool ParseCommandArgs(int argc, char** argv, const std::vector<FlagSpec>& specs,
                      Args* args, std::string* error);

// Typed flag values. Each returns false with `*error` set when the flag
// was given with a bad value; when absent the output is left unchanged.
bool GetFormat(const Args& args, OutputFormat* format, std::string* error);
bool GetBasename(const Args& args, std::string* basename, std::string* error);
bool GetUint(const Args& args, absl::string_view name, uint64_t* value,
             std::string* error);
bool GetSeconds(const Args& args, absl::string_view name, double* value,
                std::string* error);
// A time: "YYYY-MM-DD HH:MM:SS", "YYYY-MM-DDTHH:MM:SS[Z]", "YYYY-MM-DD"
// (all UTC), or "@SECONDS" since the epoch.
bool GetTime(const Args& args, absl::string_view name, absl::Time* value,
             std::string* error);
bool ParseTimeArg(absl::string_view text, absl::Time* value);

// A GTID given on the command line: MySQL "UUID:N" (N >= 1) or MariaDB
// "D-S-N". Exactly one of the two forms is filled; false for anything
// else.
struct GtidSpec {
  bool mysql = false;
  Uuid uuid;
  Tag tag;  // MySQL 8.4 "UUID:TAG:N" (normalized); empty for "UUID:N"
  int64_t gno = 0;
  bool maria = false;
  uint32_t domain_id = 0;
  uint32_t server_id = 0;
  uint64_t seq_no = 0;
};
bool ParseGtidSpec(absl::string_view text, GtidSpec* spec);

// ---------------------------------------------------------------------------
// What to read: one directory, or a list of files.

struct Source {
  bool is_dir = false;
  std::string dir;
  std::string basename;            // for a directory; empty = find it
  std::vector<std::string> files;  // for files, in order
};

bool IsDirectory(io::FileSystem* fs, const std::string& path);

// One directory argument, or only files. False with `*error` for a usage
// problem (nothing given, a directory among files, --basename with files).
bool ResolveSource(io::FileSystem* fs, const std::vector<std::string>& paths,
                   const std::string& basename, Source* src,
                   std::string* error);

// How a directory's index looks. binlog::Reader::OpenDirectory reads the
// index with binlog::ReadIndex, which *completes* an interrupted index
// update: when `<basename>.index` is missing and
// `<basename>.index_crash_safe` exists it renames the latter into place.
// That is a write to the directory an inspection tool inspects, and it
// races with a writer that is creating its index (its own rename then
// fails and the writer gives up). The tool therefore looks first and does
// not call OpenDirectory in that state.
struct IndexState {
  std::string basename;        // as OpenDirectory would choose it ("" if
                               // it could not: OpenDirectory will say why)
  bool pending_rename = false;  // .index_crash_safe without .index
};
IndexState InspectIndex(io::FileSystem* fs, const std::string& dir,
                        const std::string& basename);
// The message for a directory whose index update is pending.
std::string PendingIndexMessage(const std::string& dir,
                                const std::string& basename);

// A reader on `src`. For a directory whose index update is pending (see
// IndexState) it fails with FailedPrecondition instead of calling
// Reader::OpenDirectory.
absl::StatusOr<std::unique_ptr<Reader>> OpenReader(io::FileSystem* fs,
                                                   const Source& src,
                                                   const ReaderOptions& o);

// Path of file `number` (Event::file_number) named `name`. For OpenFiles
// readers the number is the 1-based position in `files`, offset by
// `first_index` when a reader was opened on a tail of the list.
std::string PathOf(const Source& src, const std::string& name,
                   uint64_t number, size_t first_index = 0);

// Sum of the sizes of the files a Source reads (for a directory: every
// `<name>.NNNNNN` file in it, of `basename` if given). For the progress
// indicator only; unreadable sizes count as 0.
uint64_t SourceBytes(io::FileSystem* fs, const Source& src);

// The index entries of `<dir>/<basename>.index`. Unlike binlog::ReadIndex,
// which completes an interrupted index update (renames
// <basename>.index_crash_safe into place), this never changes the
// directory: an inspection tool must not write to what it inspects.
absl::StatusOr<std::vector<uint64_t>> ReadIndexReadOnly(
    io::FileSystem* fs, const std::string& dir, const std::string& basename);

// The number of the last file `src` reads: for files, their count (the
// reader numbers them 1..N); for a directory, the highest number in its
// index (or, without an index, among its numbered files); 0 if none.
absl::StatusOr<uint64_t> LastFileNumber(io::FileSystem* fs, const Source& src);

// The reader's DataLoss messages read "<file>: offset <N>: <what>". Splits
// such a message; false for any other shape.
bool SplitReaderError(absl::string_view message, absl::string_view file,
                      uint64_t* offset, absl::string_view* what);

// Makes the reader hand out Transaction_payload events as stored
// (PayloadMode::kRaw) instead of expanding them into their inner events
// (kDecoded, the default).
void SetRawPayloads(ReaderOptions* o);

// ---------------------------------------------------------------------------
// Progress indicator

// Shows "\r<command>: 45% 123.4 of 274.1 MB, 180 MB/s <file>" on stderr,
// refreshed every 250 ms, once a scan has run for a second, when stderr is
// a terminal (and, when `stdout_is_output`, stdout is not the terminal too,
// so it does not mix with the output). Done() erases the line.
// BINLOGTOOL_PROGRESS=always|never overrides the terminal test;
// BINLOGTOOL_PROGRESS_DELAY_MS the one-second delay (for tests).
class Progress {
 public:
  Progress(absl::string_view command, uint64_t total_bytes,
           bool stdout_is_output);
  ~Progress();

  // Called per event; cheap (looks at the clock every 512 calls).
  void Add(uint64_t bytes, absl::string_view file) {
    done_ += bytes;
    if (enabled_ && ++calls_ % 512 == 0) Tick(file);
  }
  void Done();

 private:
  void Tick(absl::string_view file);

  std::string command_;
  uint64_t total_;
  uint64_t done_ = 0;
  uint64_t calls_ = 0;
  bool enabled_ = false;
  bool shown_ = false;
  absl::Time start_;
  absl::Time last_;
  absl::Duration delay_;
};

}  // namespace tools
}  // namespace binlog

#endif  // BINLOG_TOOLS_CLI_H_
