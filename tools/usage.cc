// Usage texts of binlogtool and the flags of each command.

#include "absl/strings/str_cat.h"
#include "tools/commands.h"

namespace binlog {
namespace tools {

const char kMainUsage[] =
    R"usage(binlogtool: inspect MySQL / MariaDB binary log (binlog v4) files.

Usage:
  binlogtool list   [--format=text|jsonl] [--basename=NAME] DIR|FILE...
  binlogtool dump   [--format=text|jsonl] [--decode-rows] [--raw]
                    [--start-position=N] [--stop-position=N]
                    [--start-datetime=T] [--stop-datetime=T]
                    [--basename=NAME] FILE...|DIR
  binlogtool verify [--basename=NAME] DIR|FILE...
  binlogtool stats  [--format=text|jsonl] [--bucket=SECONDS]
                    [--basename=NAME] DIR|FILE...
  binlogtool follow [--format=text|jsonl] [--decode-rows] [--from-start]
                    [--poll-interval=MS] [--max-events=N] [--timeout=S]
                    [--basename=NAME] DIR
  binlogtool find   (--datetime=T | --gtid=UUID[:TAG]:N | --gtid=D-S-N)
                    [--format=text|jsonl] [--basename=NAME] DIR|FILE...
  binlogtool help [COMMAND]        (or: binlogtool COMMAND --help)
  binlogtool --version             the library version (MAJOR.MINOR.PATCH)

A single DIR argument means the binlog of that directory: the files listed
in its <basename>.index, or, without an index, every <basename>.NNNNNN file
in number order (--basename picks one log when a directory holds several).
Otherwise every argument is a binlog file, read in the order given.
Encrypted binlog files (MySQL 8.0.14+ binlog_encryption; every command
reads them) need --keyring_file=PATH: a text file with one master key per
line, "<key_id> <64 hex digits>" (e.g. "MySQLReplicationKey_<uuid>_1 0a1b..."),
'#' starts a comment line. Offsets shown are those of the plain file.
MariaDB-encrypted binlogs (encrypt_binlog) need --mariadb_key_file=PATH:
the key file of MariaDB's file_key_management plugin ("<id>;<hex key>"
lines; key 1 is the binlogs'). Without it, reading stops after the
Start_encryption event with exit status 4.
Times are UTC: 'YYYY-MM-DD HH:MM:SS', 'YYYY-MM-DDTHH:MM:SS', 'YYYY-MM-DD'
or @SECONDS since the epoch.

Exit status: 0 OK; 1 damaged data (or, for verify, problems found; for
dump and list, data left unread); 2 usage or I/O error; 3 find found
nothing; 4 a format the library does not read (binlog v1-v3, the
encrypted events of a MariaDB-encrypted binlog); 5 verify: a bad GTID
index file beside good binlog files.

Examples:
  binlogtool list /var/lib/mysql
  binlogtool dump --format=jsonl /var/lib/mysql/binlog.000042 | jq .type_name
  binlogtool dump --decode-rows --start-position=4711 binlog.000042
  binlogtool verify /var/lib/mysql
  binlogtool stats /var/lib/mysql
  binlogtool follow /var/lib/mysql
  binlogtool find --datetime='2026-11-21 14:03:00' /var/lib/mysql
)usage";

namespace {

constexpr char kListUsage[] =
    R"usage(Usage: binlogtool list [--format=text|jsonl] [--basename=NAME] DIR|FILE...

One line per binlog file: name, size in bytes, number of events, number of
transactions, first and last event timestamp (UTC), the share of the file
held in compressed Transaction_payload events, and status:
  clean                      in-use flag clear, ends on an event boundary
  in-use                     in-use flag set (file open, or server crashed)
  torn at OFF (N bytes, ...) the file ends in N bytes that are not a
                             complete event, after offset OFF
  trailing at OFF (N bytes)  bytes after the file's Rotate event
  error at OFF               unreadable from OFF on (details on stderr)
", N bad checksums" is appended when events fail their CRC32.
COMPRESSED is "-" for a file without Transaction_payload events (type 40),
else the percentage of the file's bytes in them.

--format=jsonl prints one JSON object per file with the keys file, size,
events, transactions, first_timestamp, last_timestamp, first_time,
last_time, status ("clean", "in-use", "torn", "trailing" or "error"),
in_use, bad_checksums, payload_events, payload_bytes, and for torn files
torn_offset, torn_bytes, torn_reason (trailing: trailing_offset,
trailing_bytes; error: error_offset).

Exit status: 0 OK (crash and preallocation tails included); 1 a file is
damaged (reading stops there) or has bytes the reader did not read (after
a Rotate event; a torn event in a closed file); 2 usage or I/O error;
4 an unsupported format (binlog v1-v3, MariaDB-encrypted events).

Examples:
  binlogtool list /var/lib/mysql
  binlogtool list --format=jsonl /var/lib/mysql | jq -c '[.file,.status]'
  binlogtool list binlog.000001 binlog.000002
)usage";

constexpr char kDumpUsage[] =
    R"usage(Usage: binlogtool dump [--format=text|jsonl] [--decode-rows] [--raw]
                       [--start-position=N] [--stop-position=N]
                       [--start-datetime=T] [--stop-datetime=T]
                       [--basename=NAME] FILE...|DIR

Prints the events of the files, in order: position, end position, type,
size, server id, time, checksum state ("ok", "none" for files without
checksums, "bad": a bad checksum does not stop the dump), header flags, and
the fields of the event's type: Query: db, statement; GTID (MySQL 33/34):
gtid, last_committed, sequence_number, commit timestamps, transaction
length; MariaDB GTID (162): gtid domain-server-seq, flags, commit_id;
Table_map: table id, db, table, column types; Rows events: table, row
count; Xid, Rotate, Format_description, Previous_gtids, Gtid_list,
Intvar, Rand, User_var, Annotate_rows/Rows_query, XA_prepare, Incident,
Begin_load_query/Append_block, Transaction_payload. Event types neither server defines are
printed with their body in hex (body_hex); they do not stop the dump.

  --decode-rows        print the row images of Rows events as column values
                       (@1, @2, ... in column order). Integers (unsigned
                       when the Table_map's optional metadata says so),
                       DECIMAL (as a string), FLOAT/DOUBLE, strings and
                       BLOBs (bytes as JSON strings; binary-collation
                       columns in hex when the metadata names the collation),
                       DATE/TIME/DATETIME/TIMESTAMP with fractional seconds
                       (TIMESTAMP in UTC), YEAR, ENUM/SET (index/bit mask,
                       or names when logged), BIT (a number), MySQL JSON
                       (the document), NULL. A malformed image gives a
                       rows_error field after the rows before it.
  --start-position=N   start at offset N of the first file (an event start)
  --stop-position=N    stop at the first event of the last file that starts
                       at or after offset N
  --start-datetime=T   skip events whose timestamp is before T
  --stop-datetime=T    stop at the first event whose timestamp is at or
                       after T
  --raw                print Transaction_payload events (MySQL compressed
                       transactions) as stored: one event with its header
                       fields (compression, payload_size,
                       uncompressed_size). Without --raw they are expanded:
                       each inner event is printed at the payload's position
                       with payload_index and payload_events (and, on the
                       first, payload_compression, payload_size,
                       payload_uncompressed_size).

Text format: one line per event (strings are JSON-quoted),
  #<pos> end=<end_pos> <TYPE_NAME> size=<n> server_id=<id> time=<UTC>
      crc=<ok|none|bad> flags=<hex> [fields of the type]
a "# file NAME" line before each file's first event, with --decode-rows
one "  row N before|after: @1=... @2=..." line per row image, and for a
torn tail "# torn tail in FILE at OFFSET: REASON (N bytes)".

JSON lines (--format=jsonl): one object per event with the keys
  file pos end_pos type type_name size server_id checksum timestamp time
  log_pos flags
plus the keys of its type (tools/README.md lists them all; they are
stable), "rows" with --decode-rows:
  [{"after":{"@1":1,"@2":"x"}}, {"before":{...},"after":{...}}, ...]
A field that cannot be decoded gives decode_error (rows: rows_error).
A torn tail is the object
  {"torn_tail":true,"file":...,"pos":...,"bytes":...,"reason":...,
   "in_use":...,"zeros":...}

Exit status: 0 OK (bad checksums, crash and preallocation tails included);
1 a malformed event stopped the dump (stderr names file and offset), or
bytes were left unread (after a Rotate event; a torn event in a closed
file); 2 usage or I/O error; 4 an unsupported format (binlog v1-v3,
MariaDB-encrypted events).

Examples:
  binlogtool dump binlog.000042
  binlogtool dump --format=jsonl binlog.000041 binlog.000042 > events.jsonl
  binlogtool dump --decode-rows --start-position=4711 --stop-position=9000 \
      binlog.000042
  binlogtool dump --start-datetime='2026-11-21 14:03' \
      --stop-datetime='2026-11-21 14:04' /var/lib/mysql
)usage";

constexpr char kVerifyUsage[] =
    R"usage(Usage: binlogtool verify [--basename=NAME] DIR|FILE...

Reads everything and prints one line per finding, "FILE:OFFSET: ...":
  - an event whose CRC32 does not match;
  - a malformed event or a log_pos that does not match the event's end
    (reading that file, or for a DIR the whole log, stops there);
  - an event that does not fit the transaction structure (e.g. a GTID inside
    an open transaction; pre-GA MySQL 5.1 row events, types 20-22, are
    reported as unsupported);
  - an Incident event whose number servers do not define (only 1);
  - a closed (in-use flag clear) file that is not the last one and ends
    inside an open transaction;
  - a torn tail (bytes after the last complete event) in a closed file;
  - for a DIR: an index entry whose file is missing, a malformed index;
  - a GTID index file beside a binlog file ("FILE.gidx: bad GTID index:")
    that does not match a scan of the file (derived data: GTID readers
    rebuild it, removing it loses nothing; a finding of its own).
Findings marked "warning:" are not failures: a torn tail or an incomplete
last transaction in a file whose in-use flag is set (what a crash leaves),
the in-use flag itself, and binlog files missing from the index.
The last line is a summary:
  verified N files, M events, K transactions: OK
  verified N files, M events, K transactions: P problems
with "; B bad GTID index files" after it when there are some.

Exit status: 0 no problems (warnings allowed); 1 problems found; 2 usage or
I/O error; 4 no problems but a file in a format the library does not read
(binlog v1-v3, MariaDB-encrypted events: "unsupported:" lines); 5 no
problems in the binlog files but a bad GTID index file.

Examples:
  binlogtool verify /var/lib/mysql
  binlogtool verify binlog.000041 binlog.000042
)usage";

constexpr char kStatsUsage[] =
    R"usage(Usage: binlogtool stats [--format=text|jsonl] [--bucket=SECONDS]
                        [--basename=NAME] DIR|FILE...

Reads the whole log and prints:
  - totals: files, events, bytes, transactions, time span;
  - the event-type histogram: events and bytes per type;
  - transactions per second over time: the number of transactions that
    ended (commit event timestamp, UTC) in each bucket. Buckets are one
    second when the log spans at most 10 minutes, one minute up to 2 days,
    one hour beyond; --bucket=SECONDS sets the width;
  - transaction sizes in bytes (first event to last, headers and checksums
    included): p50, p99 (nearest rank), max, mean;
  - per table (from Table_map and Rows events): rows inserted, updated,
    deleted, Rows events and their bytes;
  - compression: Transaction_payload events (MySQL compressed
    transactions), their bytes in the files, the bytes of their compressed
    data and of the events inside them, and the ratio of the two.
Transaction_payload events are expanded: the events inside them are
counted by type (IN PAYLOADS, with their uncompressed sizes) and their rows
per table. Rows events whose images cannot be decoded count their events
and bytes, not their rows (see "rows unknown").

--format=jsonl prints the same as one JSON object (keys in tools/README.md).

Exit status: 0 OK; 1 damaged data stopped the scan (the statistics cover
what was read); 2 usage or I/O error.

Examples:
  binlogtool stats /var/lib/mysql
  binlogtool stats --bucket=60 binlog.000041 binlog.000042
  binlogtool stats --format=jsonl /var/lib/mysql | jq .transaction_size
)usage";

constexpr char kFollowUsage[] =
    R"usage(Usage: binlogtool follow [--format=text|jsonl] [--decode-rows]
                         [--from-start] [--poll-interval=MS]
                         [--max-events=N] [--timeout=SECONDS]
                         [--basename=NAME] DIR

Like tail -f: prints the events of the binlog in DIR as they are written,
across file rotations, in dump's format. Starts at the end of the log
(after its last complete event), or with --from-start at its first event.

How: a Binlog writer holds its log's lock, so another process cannot open
the live log; follow reads the files at rest instead. It opens a reader on
the directory (Reader::OpenDirectory) at the position after the last event
it printed, reads until the end of what is on disk, then sleeps
--poll-interval milliseconds (default 100) and opens a new reader at that
position. An event appears at most one poll interval (plus the time to read
it) after the writer has written it, durable or not. A partly written event
at the end of the active file is not printed until it is complete; a new
file is followed once the index names it.

  --from-start         print the whole log first
  --poll-interval=MS   sleep between polls, 1..60000 (default 100)
  --max-events=N       exit 0 after printing N events
  --timeout=SECONDS    exit 0 after this long (fractions allowed)
SIGINT (Ctrl-C) and SIGTERM exit 0 after flushing the output.

Exit status: 0 stopped by a signal, --max-events or --timeout; 1 damaged
data (an event that stays malformed for 5 seconds); 2 usage or I/O error.

Examples:
  binlogtool follow /var/lib/mysql
  binlogtool follow --format=jsonl --decode-rows /var/lib/mysql | jq .
  binlogtool follow --from-start --max-events=100 --timeout=10 /tmp/log
)usage";

constexpr char kFindUsage[] =
    R"usage(Usage: binlogtool find (--datetime=T | --gtid=UUID[:TAG]:N | --gtid=D-S-N)
                       [--format=text|jsonl] [--basename=NAME] DIR|FILE...

Finds a transaction and prints the file and position of its first event
(its GTID event, or its first event without GTIDs), where a replica or
`dump --start-position` would start:
  --datetime=T    the first transaction whose first event's timestamp is at
                  or after T (UTC)
  --gtid=UUID:N   the MySQL transaction with that GTID (UUID:TAG:N: a
                  MySQL 8.4 tagged GTID)
  --gtid=D-S-N    the MariaDB transaction with that GTID (domain, server
                  id, sequence number)

Text output: FILE POS end=END gtid=GTID time=UTC path=PATH
JSON (--format=jsonl): {"file","path","pos","end_pos","timestamp","time",
"gtid"} ("gtid" only when the transaction has one; "end_pos" is the end of
its last event).

Exit status: 0 found; 3 not found; 1 damaged data stopped the search;
2 usage or I/O error.

Examples:
  binlogtool find --datetime='2026-11-21 14:03:00' /var/lib/mysql
  binlogtool find --gtid=3e11fa47-71ca-11e1-9e33-c80aa9429562:23 /var/lib/mysql
  binlogtool find --gtid=0-1-57 /var/lib/mysql
)usage";

}  // namespace

const char* CommandUsage(absl::string_view command) {
  if (command == "list") return kListUsage;
  if (command == "dump") return kDumpUsage;
  if (command == "verify") return kVerifyUsage;
  if (command == "stats") return kStatsUsage;
  if (command == "follow") return kFollowUsage;
  if (command == "find") return kFindUsage;
  return nullptr;
}

std::vector<FlagSpec> CommandFlags(absl::string_view command) {
  std::vector<FlagSpec> flags = {{"--basename", true},
                                 {"--keyring_file", true},
                                 {"--mariadb_key_file", true}};
  if (command != "verify") flags.push_back({"--format", true});
  if (command == "dump") {
    flags.insert(flags.end(), {{"--decode-rows", false},
                               {"--raw", false},
                               {"--start-position", true},
                               {"--stop-position", true},
                               {"--start-datetime", true},
                               {"--stop-datetime", true}});
  } else if (command == "stats") {
    flags.push_back({"--bucket", true});
  } else if (command == "follow") {
    flags.insert(flags.end(), {{"--decode-rows", false},
                               {"--from-start", false},
                               {"--poll-interval", true},
                               {"--max-events", true},
                               {"--timeout", true}});
  } else if (command == "find") {
    flags.insert(flags.end(), {{"--datetime", true}, {"--gtid", true}});
  }
  return flags;
}

int UsageError(absl::string_view command, absl::string_view message) {
  const char* usage = CommandUsage(command);
  Err(absl::StrCat("binlogtool: ", Printable(message), "\n\n",
                   usage != nullptr ? usage : kMainUsage));
  return kExitUsage;
}

}  // namespace tools
}  // namespace binlog
