// A Binlog with compression on: what Commit writes, what readers return in
// decoded and raw mode, damaged payloads, recovery and torn tails with
// payload events, tailing readers.

#include <cstring>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "binlog/event.h"
#include "binlog/event_builder.h"
#include "binlog/format.h"
#include "binlog/checksum.h"
#include "binlog/gtid.h"
#include "binlog/log.h"
#include "binlog/payload.h"
#include "binlog/rows.h"
#include "binlog/reader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/codec.h"
#include "tests/binlog/log_test_util.h"
#include "tests/testutil/status_matchers.h"

namespace binlog {
namespace {

using ::binlog::testing_util::NewTempDir;
using ::binlog::testing_util::ReadFile;
using ::binlog::testing_util::WriteFile;
using ::binlog::testutil::IsOk;
using ::binlog::testutil::StatusIs;
using ::testing::HasSubstr;

constexpr uint32_t kTs = 1700000000;

// The Table_map of shop.items (id INT, k INT), from the library's encoder.
const std::string& ItemsTableMap() {
  static const std::string* body = [] {
    TableDef t;
    t.table_id = 88;
    t.schema = "shop";
    t.table = "items";
    t.columns.resize(2);
    return new std::string(*EncodeTableMapBody(t, LogFlavor::kMySQL));
  }();
  return *body;
}

// Anonymous_gtid, BEGIN, a Table_map, a Rows_query event whose
// compressible text names the transaction ("txn <id> ..."), Xid.
void BuildTxn(TransactionBuffer* t, uint64_t id, size_t text_size) {
  t->Clear();
  AppendAnonymousGtid(t, kTs, 3, 0, static_cast<int64_t>(id));
  AppendQuery(t, kTs, 3, 7, "shop", "BEGIN");
  t->AppendEvent(kTableMapEvent, 3, kTs, 0, ItemsTableMap());
  std::string text = absl::StrCat("txn ", id, " ");
  while (text.size() < text_size) {
    absl::StrAppend(&text, "UPDATE items SET k=k+1 WHERE id=", text.size() % 97,
                    "; ");
  }
  text.resize(text_size);
  char* b = t->AppendEvent(kRowsQueryEvent, 3, kTs, kFlagIgnorable,
                           text.size() + 1);
  b[0] = static_cast<char>(text.size() & 0xff);
  std::memcpy(b + 1, text.data(), text.size());
  AppendXid(t, kTs, 3, id);
}

// `appended` (a TransactionBuffer's events) split into events, each as a
// payload holds it: no footer, log_pos 0. Element 0 is the Gtid event as
// appended (still with footer placeholder).
std::vector<std::string> InnerForm(absl::string_view appended, bool checksums) {
  std::vector<std::string> out;
  size_t footer = checksums ? kChecksumSize : 0;
  while (!appended.empty()) {
    EventHeader h = DecodeHeader(appended);
    std::string e(appended.substr(0, h.event_size - footer));
    StoreLe32(&e[kEventSizeOffset], h.event_size - footer);
    StoreLe32(&e[kLogPosOffset], 0);
    out.push_back(e);
    appended.remove_prefix(h.event_size);
  }
  return out;
}

struct Committed {
  CommitPosition pos;
  std::string appended;  // the caller's events
  std::string written;   // txn.data() after Commit
  bool compressed;
};

class CompressedLogTest
    : public ::testing::TestWithParam<std::tuple<io::Codec, bool>> {
 protected:
  io::Codec codec() const { return std::get<0>(GetParam()); }
  bool checksums() const { return std::get<1>(GetParam()); }

  Options LogOptions() const {
    Options o;
    o.checksums = checksums();
    o.compression = codec();
    o.compression_threshold = 256;
    o.max_file_size = 1 << 20;
    return o;
  }

  // Commits transactions of the given text sizes; closes the log unless
  // `keep_open`.
  std::vector<Committed> CommitAll(const std::string& dir,
                                   const std::vector<size_t>& sizes) {
    auto log = Binlog::Open(dir, "binlog", LogOptions());
    EXPECT_THAT(log, IsOk());
    std::vector<Committed> out;
    TransactionBuffer txn(checksums());
    for (size_t i = 0; i < sizes.size(); ++i) {
      BuildTxn(&txn, i, sizes[i]);
      auto pos = (*log)->Commit(&txn);
      EXPECT_THAT(pos, IsOk());
      out.push_back(Committed{*pos, std::string(txn.appended_data()),
                              std::string(txn.data()), txn.compressed()});
    }
    EXPECT_THAT((*log)->Close(), IsOk());
    return out;
  }

  std::unique_ptr<Reader> Open(const std::string& dir, PayloadMode mode,
                               size_t max_payload = kDefaultMaxPayloadSize) {
    ReaderOptions ro;
    ro.payloads = mode;
    ro.max_payload_size = max_payload;
    auto r = Reader::OpenDirectory(dir, "binlog", ro);
    EXPECT_THAT(r, IsOk());
    return std::move(*r);
  }
};

TEST_P(CompressedLogTest, CommitWritesGtidAndOnePayloadBelowTheThresholdPlain) {
  std::string dir = NewTempDir("cl_written");
  auto c = CommitAll(dir, {2000, 10, 5000});
  ASSERT_EQ(c.size(), 3u);
  EXPECT_TRUE(c[0].compressed);
  EXPECT_FALSE(c[1].compressed);  // 10 bytes of text: below 256 in all
  EXPECT_TRUE(c[2].compressed);
  std::string file = ReadFile(dir + "/binlog.000001");
  for (const auto& t : c) {
    // The caller's buffer shows the bytes as written.
    EXPECT_EQ(file.substr(t.pos.start, t.pos.end - t.pos.start), t.written);
    if (t.compressed) {
      EXPECT_LT(t.written.size(), t.appended.size());
      EventHeader g = DecodeHeader(t.written);
      EventHeader p = DecodeHeader(absl::string_view(t.written).substr(g.event_size));
      EXPECT_EQ(g.type, kAnonymousGtidEvent);
      EXPECT_EQ(p.type, kTransactionPayloadEvent);
      EXPECT_EQ(g.event_size + p.event_size, t.written.size());
    } else {
      EXPECT_EQ(t.written.size(), t.appended.size());
    }
  }
}

TEST_P(CompressedLogTest, RawReaderReturnsTheBytesOnDisk) {
  std::string dir = NewTempDir("cl_raw");
  auto c = CommitAll(dir, {3000, 4000, 700});
  std::string file = ReadFile(dir + "/binlog.000001");
  auto r = Open(dir, PayloadMode::kRaw);
  Event ev;
  int payloads = 0;
  absl::Status s;
  while ((s = r->Next(&ev)).ok()) {
    EXPECT_FALSE(ev.from_payload);
    EXPECT_EQ(ev.data, file.substr(ev.offset, ev.end_offset - ev.offset));
    if (ev.header.type == kTransactionPayloadEvent) {
      ++payloads;
      EXPECT_EQ(ev.checksum,
                checksums() ? ChecksumState::kOk : ChecksumState::kNone);
    }
  }
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kOutOfRange));
  EXPECT_EQ(payloads, 3);
}

TEST_P(CompressedLogTest, DecodedReaderReturnsWhatWasCommitted) {
  std::string dir = NewTempDir("cl_decoded");
  std::vector<size_t> sizes;
  for (int i = 0; i < 30; ++i) sizes.push_back(i % 3 == 0 ? 50 : 300 + 97 * i);
  auto c = CommitAll(dir, sizes);
  auto r = Open(dir, PayloadMode::kDecoded);
  Event ev;
  // Skip the file header (FDE, Previous_gtids).
  ASSERT_THAT(r->Next(&ev), IsOk());
  ASSERT_THAT(r->Next(&ev), IsOk());
  ASSERT_EQ(ev.header.type, kPreviousGtidsEvent);
  for (const auto& t : c) {
    SCOPED_TRACE(t.pos.start);
    std::vector<std::string> want = InnerForm(t.appended, checksums());
    // The Gtid event: outside the payload, as written.
    ASSERT_THAT(r->Next(&ev), IsOk());
    EXPECT_FALSE(ev.from_payload);
    EXPECT_EQ(ev.header.type, kAnonymousGtidEvent);
    EXPECT_EQ(ev.offset, t.pos.start);
    for (size_t i = 1; i < want.size(); ++i) {
      ASSERT_THAT(r->Next(&ev), IsOk());
      EXPECT_EQ(ev.from_payload, t.compressed);
      if (t.compressed) {
        // Byte-equal to the committed event without footer, log_pos 0,
        // reported at the payload's position.
        EXPECT_EQ(ev.data, want[i]);
        EXPECT_EQ(ev.end_offset, t.pos.end);
        EXPECT_EQ(ev.payload_index, i - 1);
        EXPECT_EQ(ev.payload_events, want.size() - 1);
        EXPECT_EQ(r->position(), t.pos.end);
        EXPECT_FALSE(ev.file_has_checksums);
        EXPECT_EQ(ev.body(), absl::string_view(want[i]).substr(kHeaderSize));
        EXPECT_EQ(r->payload_header().compression_type,
                  codec() == io::Codec::kZstd ? kPayloadCompressionZstd
                                              : kPayloadCompressionLz4);
      } else {
        EXPECT_EQ(ev.body(), absl::string_view(want[i]).substr(kHeaderSize));
      }
    }
    EXPECT_EQ(ev.header.type, kXidEvent);
  }
  ASSERT_THAT(r->Next(&ev), IsOk());
  EXPECT_EQ(ev.header.type, kStopEvent);
  EXPECT_THAT(r->Next(&ev), StatusIs(absl::StatusCode::kOutOfRange));
}

TEST_P(CompressedLogTest, TailingReaderDecodesWhileCommitsRun) {
  std::string dir = NewTempDir("cl_tail");
  auto log = Binlog::Open(dir, "binlog", LogOptions());
  ASSERT_THAT(log, IsOk());
  auto reader = (*log)->NewReader(ReaderOptions());
  ASSERT_THAT(reader, IsOk());
  constexpr int kTxns = 200;
  std::thread writer([&] {
    TransactionBuffer txn(checksums());
    for (int i = 0; i < kTxns; ++i) {
      BuildTxn(&txn, i, 400 + i * 13);
      ASSERT_THAT((*log)->Commit(&txn), IsOk());
    }
  });
  int xids = 0;
  Event ev;
  absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (xids < kTxns && absl::Now() < deadline) {
    absl::Status s = (*reader)->Next(&ev);
    if (absl::IsOutOfRange(s)) {
      (*reader)->WaitForMore(absl::Now() + absl::Milliseconds(100)).IgnoreError();
      continue;
    }
    ASSERT_THAT(s, IsOk());
    if (ev.header.type == kXidEvent) {
      EXPECT_TRUE(ev.from_payload);
      EXPECT_EQ(LoadLe64(ev.body().data()), static_cast<uint64_t>(xids));
      ++xids;
    }
    EXPECT_NE(ev.header.type, kTransactionPayloadEvent);
  }
  writer.join();
  EXPECT_EQ(xids, kTxns);
  ASSERT_THAT((*log)->Close(), IsOk());
}

// A payload whose bytes the test chooses, committed through the normal
// (uncompressed) path, so its checksum and log_pos are valid and only its
// content is wrong.
struct Hostile {
  const char* name;
  std::string body;
  const char* message;
  size_t max_payload;
};

std::string Packed(uint64_t v) {
  char b[9];
  return std::string(b, StorePackedInt(b, v) - b);
}
std::string Field(uint64_t type, uint64_t value) {
  std::string v = Packed(value);
  return Packed(type) + Packed(v.size()) + v;
}
std::string Frame(io::Codec codec, absl::string_view in) {
  std::string out(io::MaxCompressedSize(codec, in.size()), '\0');
  size_t n = *io::Compress(codec, 0, in, out.data(), out.size());
  out.resize(n);
  return out;
}
std::string Body(uint64_t ctype, uint64_t usize, const std::string& frame) {
  return Field(2, ctype) + Field(3, usize) + Field(1, frame.size()) + Packed(0) +
         frame;
}

std::vector<Hostile> HostilePayloads(io::Codec codec) {
  TransactionBuffer t(false);
  BuildTxn(&t, 1, 3000);
  std::string all(t.data());
  std::string inner = all.substr(DecodeHeader(all).event_size);
  for (size_t at = 0; at < inner.size();) {  // log_pos 0 already; no footers
    at += DecodeHeader(absl::string_view(inner).substr(at)).event_size;
  }
  uint64_t ct = codec == io::Codec::kZstd ? 0 : 128;
  std::string f = Frame(codec, inner);
  std::string good = Body(ct, inner.size(), f);
  std::vector<Hostile> v;
  v.push_back({"bad_tlv", std::string("\x02\x01") + good.substr(3, 10),
               "Transaction_payload header", kDefaultMaxPayloadSize});
  v.push_back({"size_past_end", good.substr(0, good.size() - 9),
               "runs past the end of the event", kDefaultMaxPayloadSize});
  v.push_back({"size_mismatch", Body(ct, inner.size() + 1, f),
               "declares an uncompressed size", kDefaultMaxPayloadSize});
  std::string garbage = f;
  for (size_t i = 4; i < garbage.size(); i += 3) garbage[i] ^= 0x55;
  v.push_back({"garbage_frame", Body(ct, inner.size(), garbage), "",
               kDefaultMaxPayloadSize});
  v.push_back({"hostile_4gib", Body(ct, 4ull << 30, f),
               "declared uncompressed size 4294967296 is above the limit",
               kDefaultMaxPayloadSize});
  v.push_back({"low_cap", good, "above the limit of 1000 bytes", 1000});
  // No declared size and a small cap: decompression itself stops at the cap.
  std::string nosize = Field(2, ct) + Field(1, f.size()) + Packed(0) + f;
  v.push_back({"low_cap_no_size", nosize, "exceeds the limit of 1000 bytes",
               1000});
  return v;
}

TEST_P(CompressedLogTest, DamagedPayloadsAreDataLossAtTheirOffset) {
  for (const Hostile& h : HostilePayloads(codec())) {
    SCOPED_TRACE(h.name);
    std::string dir = NewTempDir("cl_hostile");
    Options o = LogOptions();
    o.compression = io::Codec::kNone;  // write the event exactly as given
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_THAT(log, IsOk());
    TransactionBuffer txn(checksums());
    BuildTxn(&txn, 0, 100);
    ASSERT_THAT((*log)->Commit(&txn), IsOk());
    txn.Clear();
    AppendAnonymousGtid(&txn, kTs, 3, 0, 1);
    txn.AppendEvent(kTransactionPayloadEvent, 3, kTs, 0, h.body);
    auto bad = (*log)->Commit(&txn);
    ASSERT_THAT(bad, IsOk());
    uint64_t payload_at = bad->start + txn.event_offset(1);
    BuildTxn(&txn, 2, 100);
    ASSERT_THAT((*log)->Commit(&txn), IsOk());
    ASSERT_THAT((*log)->Close(), IsOk());

    // Decoded: everything up to the Gtid before it, then DataLoss naming
    // file and offset; the reader stays there.
    auto r = Open(dir, PayloadMode::kDecoded, h.max_payload);
    Event ev;
    absl::Status s;
    uint8_t last_type = 0;
    while ((s = r->Next(&ev)).ok()) last_type = ev.header.type;
    EXPECT_EQ(last_type, kAnonymousGtidEvent);
    EXPECT_THAT(s, StatusIs(absl::StatusCode::kDataLoss,
                            HasSubstr(absl::StrCat("binlog.000001: offset ",
                                                   payload_at, ": "))));
    EXPECT_THAT(s, StatusIs(absl::StatusCode::kDataLoss, HasSubstr(h.message)));
    EXPECT_EQ(r->position(), payload_at);
    EXPECT_THAT(r->Next(&ev), StatusIs(absl::StatusCode::kDataLoss));

    // Raw: the event is intact as far as the framing goes.
    auto raw = Open(dir, PayloadMode::kRaw);
    int n = 0;
    while ((s = raw->Next(&ev)).ok()) ++n;
    EXPECT_THAT(s, StatusIs(absl::StatusCode::kOutOfRange));
    EXPECT_GT(n, 8);
  }
}

TEST_P(CompressedLogTest, PayloadWithBadChecksumIsReportedRaw) {
  if (!checksums()) GTEST_SKIP() << "needs CRC32 footers";
  std::string dir = NewTempDir("cl_badcrc");
  auto c = CommitAll(dir, {3000});
  ASSERT_TRUE(c[0].compressed);
  std::string path = dir + "/binlog.000001";
  std::string file = ReadFile(path);
  uint64_t payload_at = c[0].pos.start + DecodeHeader(c[0].written).event_size;
  file[payload_at + kHeaderSize + 20] ^= 0x01;
  WriteFile(path, file);
  ReaderOptions ro;
  ro.checksum_mode = ChecksumMode::kReport;
  auto r = Reader::OpenDirectory(dir, "binlog", ro);
  ASSERT_THAT(r, IsOk());
  Event ev;
  bool seen = false;
  while ((*r)->Next(&ev).ok()) {
    if (ev.offset == payload_at) {
      seen = true;
      EXPECT_EQ(ev.header.type, kTransactionPayloadEvent);
      EXPECT_EQ(ev.checksum, ChecksumState::kBad);
      EXPECT_FALSE(ev.from_payload);
    }
  }
  EXPECT_TRUE(seen);
}

// Torn tails: a crash can cut the file anywhere. Every cut inside a
// transaction (in its Gtid or inside its payload event) removes exactly that
// transaction; the ones before it survive, readable and decodable.
TEST_P(CompressedLogTest, EveryCutKeepsExactlyTheCompleteTransactions) {
  std::string dir = NewTempDir("cl_image");
  Options o = LogOptions();
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_THAT(log, IsOk());
  uint64_t header_end = (*log)->VisibleEnd().end;
  TransactionBuffer txn(checksums());
  std::vector<CommitPosition> pos;
  for (int i = 0; i < 4; ++i) {
    BuildTxn(&txn, i, 600 + 300 * i);
    auto p = (*log)->Commit(&txn);
    ASSERT_THAT(p, IsOk());
    ASSERT_TRUE(txn.compressed());
    pos.push_back(*p);
  }
  std::string image = ReadFile(dir + "/binlog.000001").substr(0, pos.back().end);
  ASSERT_THAT((*log)->Close(), IsOk());
  // Step through every offset of the last two transactions (every 7th to
  // keep the test fast, plus both ends and the payload boundaries).
  std::vector<uint64_t> cuts;
  for (uint64_t cut = pos[2].start; cut <= pos[3].end; cut += 7) cuts.push_back(cut);
  cuts.push_back(pos[3].end);
  cuts.push_back(pos[3].end - 1);
  cuts.push_back(pos[3].start + 1);
  for (uint64_t cut : cuts) {
    SCOPED_TRACE(absl::StrCat("cut at ", cut));
    std::string cdir = NewTempDir("cl_crashed");
    WriteFile(cdir + "/binlog.index", "./binlog.000001\n");
    WriteFile(cdir + "/binlog.000001", image.substr(0, cut));
    uint64_t valid_end = header_end;
    size_t complete = 0;
    for (const auto& p : pos) {
      if (p.end <= cut) {
        valid_end = p.end;
        ++complete;
      }
    }
    {
      auto rlog = Binlog::Open(cdir, "binlog", o);
      ASSERT_THAT(rlog, IsOk());
      EXPECT_TRUE((*rlog)->recovery().recovered);
      EXPECT_EQ((*rlog)->recovery().valid_end, valid_end);
      EXPECT_EQ((*rlog)->recovery().bytes_cut, cut - valid_end);
      ASSERT_THAT((*rlog)->Close(), IsOk());
    }
    EXPECT_EQ(ReadFile(cdir + "/binlog.000001").size(), valid_end);
    // The survivors decode: one Xid per complete transaction.
    auto r = Open(cdir, PayloadMode::kDecoded);
    Event ev;
    absl::Status s;
    size_t xids = 0;
    while ((s = r->Next(&ev)).ok()) {
      if (ev.header.type == kXidEvent) {
        EXPECT_TRUE(ev.from_payload);
        EXPECT_EQ(LoadLe64(ev.body().data()), xids);
        ++xids;
      }
    }
    EXPECT_THAT(s, StatusIs(absl::StatusCode::kOutOfRange));
    EXPECT_EQ(xids, complete);
  }
}

TEST_P(CompressedLogTest, RecoveryKeepsAPayloadWhoseContentIsDamaged) {
  // With checksums recovery reads payloads raw: a complete, checksum-valid
  // payload ends its transaction whatever it holds, so recovery never cuts
  // an acknowledged transaction because a payload does not decode. Without
  // checksums only decoding tells a payload whose pages were torn by a
  // power loss from a good one, so there recovery decodes, and a payload
  // that does not decode is cut like a torn event.
  std::string dir = NewTempDir("cl_recover_raw");
  Options o = LogOptions();
  o.compression = io::Codec::kNone;
  auto log = Binlog::Open(dir, "binlog", o);
  ASSERT_THAT(log, IsOk());
  TransactionBuffer txn(checksums());
  AppendAnonymousGtid(&txn, kTs, 3, 0, 1);
  txn.AppendEvent(kTransactionPayloadEvent, 3, kTs, 0, Body(0, 100, "garbage"));
  auto p = (*log)->Commit(&txn);
  ASSERT_THAT(p, IsOk());
  std::string image = ReadFile(dir + "/binlog.000001").substr(0, p->end);
  ASSERT_THAT((*log)->Close(), IsOk());
  std::string cdir = NewTempDir("cl_recover_raw2");
  WriteFile(cdir + "/binlog.index", "./binlog.000001\n");
  WriteFile(cdir + "/binlog.000001", image);
  auto rlog = Binlog::Open(cdir, "binlog", o);
  ASSERT_THAT(rlog, IsOk());
  if (checksums()) {
    EXPECT_EQ((*rlog)->recovery().valid_end, p->end);
    EXPECT_EQ((*rlog)->recovery().bytes_cut, 0u);
  } else {
    EXPECT_EQ((*rlog)->recovery().valid_end, p->start);
    EXPECT_EQ((*rlog)->recovery().bytes_cut, p->end - p->start);
  }
}

// MySQL 8.4 compresses a tagged transaction as an untagged one: its
// Gtid_tagged_log_event (type 42) stays outside, with transaction_length
// over the packed size, and one Transaction_payload holds every other
// event (sql/binlog.cc: MYSQL_BIN_LOG::write_transaction writes the Gtid
// event, tagged or not, before the cache, which binlog_cache_data::
// compress has replaced by the payload event). Written through Commit,
// read back decoded and raw, recovered at Open and continued.
TEST_P(CompressedLogTest, TaggedTransactionsArePackedAfterTheirGtidEvent) {
  std::string dir = NewTempDir("cl_tagged");
  Options o = LogOptions();
  o.server_uuid = *Uuid::Parse("3e11fa47-71ca-11e1-9e33-c80aa9429562");
  const Tag blue = *Tag::Parse("blue");
  const Tag long_tag = *Tag::Parse(std::string(32, 'x'));
  struct Written {
    Committed c;
    AssignedIdentity id;
  };
  std::vector<Written> txns;
  auto commit_some = [&](Binlog* log, int n, int first_id) {
    TransactionBuffer txn(checksums());
    for (int i = 0; i < n; ++i) {
      const int id = first_id + i;
      // BuildTxn's events after a tagged, long-tagged or untagged
      // CommitGtid; every fourth below the threshold (stays plain).
      BuildTxn(&txn, id, id % 4 == 3 ? 20 : 900 + 37 * id);
      TransactionBuffer plain(checksums());
      CommitGtid g;
      if (id % 3 == 0) g.tag = blue;
      if (id % 3 == 1) g.tag = long_tag;
      plain.AppendCommitGtid(kTs, 3, g);
      absl::string_view rest = txn.appended_data();
      rest.remove_prefix(txn.appended_event_size(0));  // the Anonymous_gtid
      while (!rest.empty()) {
        EventHeader h = DecodeHeader(rest);
        plain.AppendEvent(h.type, h.server_id, h.timestamp, h.flags,
                          rest.substr(kHeaderSize, h.event_size - kHeaderSize -
                                                       (checksums() ? kChecksumSize : 0)));
        rest.remove_prefix(h.event_size);
      }
      auto pos = log->Commit(&plain);
      ASSERT_THAT(pos, IsOk());
      txns.push_back(Written{Committed{*pos, std::string(plain.appended_data()),
                                       std::string(plain.data()), plain.compressed()},
                             plain.identity()});
      EXPECT_EQ(plain.compressed(), id % 4 != 3) << id;
    }
  };
  {
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_THAT(log, IsOk());
    ASSERT_NO_FATAL_FAILURE(commit_some(log->get(), 12, 0));
    ASSERT_THAT((*log)->Close(), IsOk());
  }
  {
    // Recovery at Open reads the packed tagged transactions: the tagged
    // GTIDs are executed, and the next ones continue their sequences.
    auto log = Binlog::Open(dir, "binlog", o);
    ASSERT_THAT(log, IsOk());
    GtidSet want;
    for (const Written& w : txns) want.Add(Tsid(w.id.uuid, w.id.tag), w.id.gno);
    EXPECT_EQ((*log)->executed_gtids().ToString(), want.ToString());
    ASSERT_NO_FATAL_FAILURE(commit_some(log->get(), 6, 12));
    ASSERT_THAT((*log)->Close(), IsOk());
  }
  int packed_tagged = 0;
  for (const Written& w : txns) {
    const Committed& t = w.c;
    SCOPED_TRACE(absl::StrCat("txn at ", t.pos.file_number, ":", t.pos.start));
    const std::string file =
        ReadFile(absl::StrCat(dir, "/binlog.", absl::Dec(t.pos.file_number, absl::kZeroPad6)));
    ASSERT_LE(t.pos.end, file.size());
    EXPECT_EQ(file.substr(t.pos.start, t.pos.end - t.pos.start), t.written);
    EventHeader g = DecodeHeader(t.written);
    EXPECT_EQ(g.type, w.id.tag.empty() ? kGtidEvent : kGtidTaggedEvent);
    absl::string_view gev = absl::string_view(t.written).substr(0, g.event_size);
    auto e = DecodeAnyMySqlGtidEvent(g.type, EventBody(gev, checksums()));
    ASSERT_THAT(e, IsOk());
    EXPECT_EQ(e->tag, w.id.tag);
    EXPECT_EQ(e->gno, w.id.gno);
    EXPECT_EQ(e->sequence_number, w.id.sequence_number);
    EXPECT_EQ(e->last_committed, w.id.last_committed);
    EXPECT_EQ(e->transaction_length, t.pos.end - t.pos.start);
    if (checksums()) {
      EXPECT_EQ(Crc32(gev.data(), gev.size() - kChecksumSize),
                LoadLe32(gev.data() + gev.size() - kChecksumSize));
    }
    if (t.compressed) {
      EventHeader p = DecodeHeader(absl::string_view(t.written).substr(g.event_size));
      EXPECT_EQ(p.type, kTransactionPayloadEvent);
      EXPECT_EQ(g.event_size + p.event_size, t.written.size());
      EXPECT_LT(t.written.size(), t.appended.size());
      if (!w.id.tag.empty()) ++packed_tagged;
    }
  }
  EXPECT_GE(packed_tagged, 6);
  // Decoded: the Gtid event outside, then the committed events from the
  // payload, byte for byte.
  auto r = Open(dir, PayloadMode::kDecoded);
  Event ev;
  for (const Written& w : txns) {
    const Committed& t = w.c;
    SCOPED_TRACE(absl::StrCat("txn at ", t.pos.file_number, ":", t.pos.start));
    do {
      ASSERT_THAT(r->Next(&ev), IsOk());
    } while (ev.header.type != kGtidEvent && ev.header.type != kGtidTaggedEvent);
    EXPECT_FALSE(ev.from_payload);
    EXPECT_EQ(ev.file_number, t.pos.file_number);
    EXPECT_EQ(ev.offset, t.pos.start);
    std::vector<std::string> want = InnerForm(t.appended, checksums());
    for (size_t i = 1; i < want.size(); ++i) {
      ASSERT_THAT(r->Next(&ev), IsOk());
      EXPECT_EQ(ev.from_payload, t.compressed);
      EXPECT_EQ(ev.body(), absl::string_view(want[i]).substr(kHeaderSize));
    }
    EXPECT_EQ(ev.header.type, kXidEvent);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Codecs, CompressedLogTest,
    ::testing::Combine(::testing::Values(io::Codec::kZstd, io::Codec::kLz4),
                       ::testing::Bool()),
    [](const ::testing::TestParamInfo<std::tuple<io::Codec, bool>>& i) {
      return absl::StrCat(io::CodecName(std::get<0>(i.param)),
                          std::get<1>(i.param) ? "_crc32" : "_nocrc");
    });

TEST(CompressionOptionsTest, BadLevelIsRejectedAtOpen) {
  Options o;
  o.compression = io::Codec::kZstd;
  o.compression_level = 40;
  auto log = Binlog::Open(NewTempDir("cl_opts"), "binlog", o);
  EXPECT_THAT(log, StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace binlog
