// demo: a small end-to-end run of the library, as a server would use it.
//
// N client threads commit transactions concurrently, each built in its own
// reusable TransactionBuffer (Anonymous_gtid, Query "BEGIN", one
// Rows_query event of --payload bytes, Xid), while one tailing reader
// follows the live log. At the end the reader must have seen exactly the
// transactions the writers committed, at the positions Commit returned, in
// increasing order. Prints throughput, commit latency and the log's stats.
//
//   bazel run //tools:demo -- --dir=/tmp/demo --threads=8 --seconds=3
//
// Exit status: 0 on success, 1 on any library error or if the reader missed
// or misplaced a transaction, 2 on bad arguments.

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "binlog/event_builder.h"
#include "binlog/format.h"
#include "binlog/log.h"
#include "binlog/options.h"
#include "binlog/reader.h"
#include "binlog/rows_writer.h"
#include "binlog/transaction.h"

ABSL_FLAG(std::string, dir, "", "directory of the log (required)");
ABSL_FLAG(int, threads, 8, "number of committing client threads");
ABSL_FLAG(double, seconds, 3.0, "how long the clients commit");
ABSL_FLAG(uint64_t, max_file_size, 4ull << 20,
          "rotate after a file reaches this many bytes");
ABSL_FLAG(int, payload, 512, "body bytes of the Rows_query event");
ABSL_FLAG(std::string, tag, "",
          "a GTID tag (MySQL 8.4's uuid:tag:gno) for the transactions of every "
          "other client thread; empty: untagged GTIDs only");

namespace {

constexpr uint32_t kServerId = 1;
// The demo server's UUID: the log assigns its GTIDs in commit order.
constexpr char kServerUuid[] = "5ae1d3a6-1c4e-11f1-8a3b-0242ac120002";

// The table the clients insert into: demo.t (thread INT, seq BIGINT, a
// primary key of both), written by RowsWriter, whose key hashes give the
// log its WRITESET clocks.
binlog::TableDef DemoTable() {
  binlog::TableDef t;
  t.table_id = 100;
  t.schema = "demo";
  t.table = "t";
  binlog::ColumnDef thread;
  thread.type = binlog::kColLong;
  binlog::ColumnDef seq;
  seq.type = binlog::kColLongLong;
  t.columns = {thread, seq};
  t.primary_key = {0, 1};
  return t;
}

// A transaction's place in the log: (file, start, end).
struct TxnPos {
  uint64_t file = 0;
  uint64_t start = 0;
  uint64_t end = 0;
  bool operator<(const TxnPos& o) const {
    return std::tie(file, start, end) < std::tie(o.file, o.start, o.end);
  }
  bool operator==(const TxnPos& o) const {
    return file == o.file && start == o.start && end == o.end;
  }
};

std::string PosString(const TxnPos& p) {
  return absl::StrCat(p.file, ":", p.start, "-", p.end);
}

// What one client thread did.
struct ClientResult {
  std::vector<TxnPos> committed;
  std::vector<uint32_t> latency_us;
  absl::Status status;
};

// The Rows_query body: one length byte (MySQL stores the length modulo 256
// and readers ignore it) and an INSERT statement padded to `payload` bytes.
void FillRowsQuery(char* body, size_t payload, int thread, uint64_t seq) {
  std::string text = absl::StrCat("INSERT INTO demo.t VALUES (", thread, ", ",
                                  seq, ", '");
  const size_t text_len = payload - 1;
  const size_t tail = 2;  // "')"
  while (text.size() + tail < text_len) {
    text.push_back(static_cast<char>('a' + (text.size() + seq) % 26));
  }
  text.resize(text_len - tail);
  text += "')";
  body[0] = static_cast<char>(text.size() & 0xff);
  std::copy(text.begin(), text.end(), body + 1);
}

void RunClient(binlog::Binlog* log, int thread, size_t payload,
               absl::Time deadline, std::atomic<uint64_t>* seq_counter,
               std::atomic<bool>* stop, ClientResult* out) {
  std::unique_ptr<binlog::TransactionBuffer> txn_owner = log->NewTransactionBuffer();
  binlog::TransactionBuffer& txn = *txn_owner;
  absl::StatusOr<binlog::RowsWriter> rows =
      binlog::RowsWriter::Create(binlog::RowsWriterOptions());
  absl::StatusOr<binlog::RowsWriter::TableHandle> table =
      rows.ok() ? rows->DescribeTable(DemoTable()) : rows.status();
  if (!table.ok()) {
    out->status = table.status();
    stop->store(true);
    return;
  }
  binlog::CommitGtid gtid;  // AUTOMATIC: the server UUID's next GNO
  const std::string tag = absl::GetFlag(FLAGS_tag);
  if (!tag.empty() && thread % 2 == 1) {
    absl::StatusOr<binlog::Tag> t = binlog::Tag::Parse(tag);
    if (!t.ok()) {
      out->status = t.status();
      stop->store(true);
      return;
    }
    gtid.tag = *t;  // AUTOMATIC:tag, a GNO sequence of its own
  }
  std::string text;
  while (!stop->load(std::memory_order_relaxed) && absl::Now() < deadline) {
    const uint64_t seq =
        seq_counter->fetch_add(1, std::memory_order_relaxed) + 1;
    const uint32_t now = static_cast<uint32_t>(::time(nullptr));
    txn.Clear();
    txn.AppendCommitGtid(now, kServerId, gtid);
    binlog::AppendQuery(&txn, now, kServerId, static_cast<uint32_t>(thread),
                        "", "BEGIN");
    // The statement's text as a Rows_query event (MySQL marks them
    // ignorable, so servers that do not know the type skip it), then its
    // Table_map and Write_rows.
    text.resize(payload);
    FillRowsQuery(text.data(), payload, thread, seq);
    absl::Status rs = rows->BeginStatement(
        &txn, now, absl::string_view(text.data() + 1, payload - 1));
    if (rs.ok()) {
      rs = rows->Insert(*table, {binlog::Value::Int(thread),
                                 binlog::Value::Int(static_cast<int64_t>(seq))});
    }
    if (rs.ok()) rs = rows->EndStatement();
    if (!rs.ok()) {
      out->status = rs;
      stop->store(true);
      return;
    }
    binlog::AppendXid(&txn, now, kServerId, seq);

    const absl::Time t0 = absl::Now();
    absl::StatusOr<binlog::CommitPosition> pos = log->Commit(&txn);
    const absl::Duration latency = absl::Now() - t0;
    if (!pos.ok()) {
      out->status = pos.status();
      stop->store(true);
      return;
    }
    out->committed.push_back(TxnPos{pos->file_number, pos->start, pos->end});
    out->latency_us.push_back(
        static_cast<uint32_t>(absl::ToInt64Microseconds(latency)));
  }
}

// What the tailing reader saw.
struct ReaderResult {
  uint64_t events = 0;
  std::vector<TxnPos> transactions;
  absl::Status status;
};

// Follows the live log until the clients are done and everything visible
// has been read. Checks that events come in increasing (file, offset) order
// and that every transaction has the shape the clients build.
void RunReader(binlog::Binlog* log, size_t payload,
               const std::atomic<bool>* clients_done, ReaderResult* out) {
  auto fail = [out](std::string msg) {
    out->status = absl::InternalError(std::move(msg));
  };
  // Open() always starts a new file; begin there, so that the files of an
  // earlier run in the same directory are not counted.
  binlog::ReaderOptions options;
  options.start_file = log->VisibleEnd().file_number;
  absl::StatusOr<std::unique_ptr<binlog::Reader>> r = log->NewReader(options);
  if (!r.ok()) {
    out->status = r.status();
    return;
  }
  binlog::Reader& reader = **r;
  binlog::Event ev;
  TxnPos last_event{0, 0, 0};
  int step = 0;  // 0 outside a transaction, else how many events seen in it
  TxnPos current;
  absl::Time idle_since = absl::InfiniteFuture();
  for (;;) {
    absl::Status s = reader.Next(&ev);
    if (s.ok()) {
      idle_since = absl::InfiniteFuture();
      ++out->events;
      TxnPos here{ev.file_number, ev.offset, ev.end_offset};
      // Within a file each event starts where the previous one ended; a new
      // file (a higher number) starts with its Format_description at 4.
      const bool follows =
          here.file == last_event.file
              ? here.start == last_event.end
              : here.file > last_event.file && here.start == binlog::kMagicSize;
      if (!follows || here.end <= here.start) {
        return fail(absl::StrCat("event at ", PosString(here),
                                 " does not follow the event at ",
                                 PosString(last_event)));
      }
      last_event = here;
      const uint8_t type = ev.header.type;
      const char* want = nullptr;
      switch (step) {
        case 0:
          if (type == binlog::kGtidEvent || type == binlog::kGtidTaggedEvent) {
            current = TxnPos{ev.file_number, ev.offset, 0};
            step = 1;
          } else if (type != binlog::kFormatDescriptionEvent &&
                     type != binlog::kPreviousGtidsEvent &&
                     type != binlog::kRotateEvent &&
                     type != binlog::kStopEvent) {
            want = "GTID_LOG_EVENT, GTID_TAGGED_LOG_EVENT or a file header/trailer event";
          }
          break;
        case 1:
          if (type == binlog::kQueryEvent) {
            step = 2;
          } else {
            want = "QUERY_EVENT (BEGIN)";
          }
          break;
        case 2:
          if (type == binlog::kRowsQueryEvent && ev.body().size() == payload) {
            step = 3;
          } else {
            want = "ROWS_QUERY_LOG_EVENT of the payload size";
          }
          break;
        case 3:
          if (type == binlog::kTableMapEvent) {
            step = 4;
          } else {
            want = "TABLE_MAP_EVENT";
          }
          break;
        case 4:
          if (type == binlog::kWriteRowsEvent) {
            step = 5;
          } else {
            want = "WRITE_ROWS_EVENT";
          }
          break;
        case 5:
          if (type == binlog::kXidEvent && ev.file_number == current.file) {
            current.end = ev.end_offset;
            out->transactions.push_back(current);
            step = 0;
          } else {
            want = "XID_EVENT in the same file";
          }
          break;
      }
      if (want != nullptr) {
        return fail(absl::StrCat("unexpected ", binlog::EventTypeName(type),
                                 " at ", PosString(here), "; expected ", want));
      }
      continue;
    }
    if (!absl::IsOutOfRange(s)) {
      out->status = s;
      return;
    }
    if (clients_done->load(std::memory_order_acquire)) {
      // Every commit has returned, so VisibleEnd() covers all of them.
      const binlog::CommitPosition end = log->VisibleEnd();
      if (std::make_pair(reader.file_number(), reader.position()) >=
          std::make_pair(end.file_number, end.end)) {
        if (step != 0) return fail("the log ends inside a transaction");
        return;
      }
      if (idle_since == absl::InfiniteFuture()) idle_since = absl::Now();
      if (absl::Now() - idle_since > absl::Seconds(10)) {
        return fail(absl::StrCat(
            "reader stuck at ", reader.file_name(), ":", reader.position(),
            " for 10 s; the visible end is ", end.file_number, ":", end.end));
      }
    }
    s = reader.WaitForMore(absl::Now() + absl::Milliseconds(100));
    if (!s.ok() && !absl::IsDeadlineExceeded(s)) {
      out->status = s;
      return;
    }
  }
}

uint32_t Percentile(const std::vector<uint32_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t i =
      static_cast<size_t>(p * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(i, sorted.size() - 1)];
}

void Row(const char* name, const std::string& value) {
  std::printf("  %-26s %s\n", name, value.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "demo --dir=PATH [--threads=N] [--seconds=S] [--max_file_size=BYTES] "
      "[--payload=BYTES]\nCommits transactions from N threads while a tailing "
      "reader follows the log; prints throughput and latency.");
  std::vector<char*> rest = absl::ParseCommandLine(argc, argv);
  const std::string dir = absl::GetFlag(FLAGS_dir);
  const int threads = absl::GetFlag(FLAGS_threads);
  const double seconds = absl::GetFlag(FLAGS_seconds);
  const int payload_flag = absl::GetFlag(FLAGS_payload);
  if (rest.size() > 1 || dir.empty() || threads < 1 || threads > 1024 ||
      !(seconds > 0) || payload_flag < 64 || payload_flag > (16 << 20)) {
    std::fprintf(stderr,
                 "usage: %s\n  --dir is required; --threads in 1..1024; "
                 "--seconds > 0; --payload in 64..16777216\n",
                 absl::ProgramUsageMessage().data());
    return 2;
  }
  const size_t payload = static_cast<size_t>(payload_flag);

  binlog::Options options;  // durable (sync every group), checksums on,
                            // MySQL 8.4 files, WRITESET clocks
  options.max_file_size = absl::GetFlag(FLAGS_max_file_size);
  options.server_uuid = *binlog::Uuid::Parse(kServerUuid);
  absl::StatusOr<std::unique_ptr<binlog::Binlog>> opened =
      binlog::Binlog::Open(dir, "binlog", options);
  if (!opened.ok()) {
    std::fprintf(stderr, "demo: open %s: %s\n", dir.c_str(),
                 opened.status().ToString().c_str());
    return 1;
  }
  std::unique_ptr<binlog::Binlog> log = std::move(*opened);
  const binlog::RecoveryReport& rec = log->recovery();
  if (rec.recovered) {
    std::printf("demo: recovered %s: kept %" PRIu64 " bytes, cut %" PRIu64
                " bytes (%s)\n",
                rec.file_name.c_str(), rec.valid_end, rec.bytes_cut,
                rec.reason.c_str());
  }
  // Open() starts a new file; files below it are from earlier runs.
  const uint64_t first_file = log->VisibleEnd().file_number;

  std::printf("demo: %d client threads for %.1f s, %zu-byte Rows_query "
              "payload, max_file_size %" PRIu64 ", dir %s\n",
              threads, seconds, payload, options.max_file_size, dir.c_str());
  std::fflush(stdout);

  std::atomic<bool> clients_done{false};
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> seq{0};
  ReaderResult reader_result;
  std::thread reader_thread(RunReader, log.get(), payload, &clients_done,
                            &reader_result);

  std::vector<ClientResult> results(static_cast<size_t>(threads));
  std::vector<std::thread> clients;
  const absl::Time start = absl::Now();
  const absl::Time deadline = start + absl::Seconds(seconds);
  for (int i = 0; i < threads; ++i) {
    clients.emplace_back(RunClient, log.get(), i, payload, deadline, &seq,
                         &stop, &results[static_cast<size_t>(i)]);
  }
  for (auto& t : clients) t.join();
  const double elapsed = absl::ToDoubleSeconds(absl::Now() - start);
  clients_done.store(true, std::memory_order_release);
  reader_thread.join();

  const binlog::LogStats stats = log->stats();
  const absl::Status close_status = log->Close();
  size_t files_written = 0;
  for (const binlog::LogFileInfo& f : log->ListFiles()) {
    if (f.number >= first_file) ++files_written;
  }

  // Merge what the clients committed; the log orders commits by position.
  int failures = 0;
  std::vector<TxnPos> committed;
  std::vector<uint32_t> latencies;
  for (const ClientResult& r : results) {
    if (!r.status.ok()) {
      std::fprintf(stderr, "demo: commit failed: %s\n",
                   r.status.ToString().c_str());
      ++failures;
    }
    committed.insert(committed.end(), r.committed.begin(), r.committed.end());
    latencies.insert(latencies.end(), r.latency_us.begin(), r.latency_us.end());
  }
  std::sort(committed.begin(), committed.end());
  std::sort(latencies.begin(), latencies.end());
  for (size_t i = 1; i < committed.size(); ++i) {
    const TxnPos& a = committed[i - 1];
    const TxnPos& b = committed[i];
    if (a.file == b.file && b.start < a.end) {
      std::fprintf(stderr, "demo: commits overlap: %s and %s\n",
                   PosString(a).c_str(), PosString(b).c_str());
      ++failures;
      break;
    }
  }
  if (!reader_result.status.ok()) {
    std::fprintf(stderr, "demo: reader failed: %s\n",
                 reader_result.status.ToString().c_str());
    ++failures;
  }
  if (!close_status.ok()) {
    std::fprintf(stderr, "demo: close failed: %s\n",
                 close_status.ToString().c_str());
    ++failures;
  }

  // The reader must have seen exactly the committed transactions, in order.
  const std::vector<TxnPos>& seen = reader_result.transactions;
  bool reader_complete = seen.size() == committed.size();
  for (size_t i = 0; reader_complete && i < seen.size(); ++i) {
    if (!(seen[i] == committed[i])) {
      std::fprintf(stderr,
                   "demo: transaction %zu: the reader saw %s, the writers "
                   "committed %s\n",
                   i, PosString(seen[i]).c_str(),
                   PosString(committed[i]).c_str());
      reader_complete = false;
    }
  }
  if (seen.size() != committed.size()) {
    std::fprintf(stderr,
                 "demo: the reader saw %zu transactions, the writers "
                 "committed %zu\n",
                 seen.size(), committed.size());
  }
  if (!reader_complete) ++failures;

  const double n = static_cast<double>(committed.size());
  std::printf("\n");
  Row("commits", absl::StrCat(committed.size()));
  Row("commits/s", absl::StrFormat("%.0f", n / elapsed));
  Row("MB/s written", absl::StrFormat(
                          "%.2f", static_cast<double>(stats.bytes_written) /
                                      elapsed / 1e6));
  Row("commit latency p50 (us)", absl::StrCat(Percentile(latencies, 0.50)));
  Row("commit latency p99 (us)", absl::StrCat(Percentile(latencies, 0.99)));
  Row("files written", absl::StrCat(files_written));
  Row("rotations", absl::StrCat(stats.rotations));
  Row("fsyncs", absl::StrCat(stats.fsyncs));
  Row("fsync time (ms)",
      absl::StrFormat("%.1f", static_cast<double>(stats.fsync_micros) / 1e3));
  Row("reader events", absl::StrCat(reader_result.events));
  Row("reader transactions", absl::StrCat(seen.size()));
  Row("reader saw every commit", reader_complete ? "yes" : "NO");
  std::printf("\n%s\n", failures == 0 ? "demo: OK" : "demo: FAILED");
  return failures == 0 ? 0 : 1;
}
