// A GTID index (binlog/gtid_index.h) crafted by someone who can write the
// log directory: its CRCs are unkeyed, so they check out. Each crafted
// index is refused as corrupt (and rebuilt from the binlog file, as a
// missing one) and a GTID reader returns exactly the events, and counts
// exactly the skipped transactions, of one that reads the file from its
// start: an index larger than kMaxGtidIndexSize, one naming a
// Format_description larger than kMaxFormatDescriptionSize (memory per
// GTID dump), an entry moved inside a transaction with its header CRC
// recomputed, an entry whose GTID state is that of a later point (it
// claims transactions the file has only after the entry). And the
// builder never writes an index past the limit the readers apply. A
// MariaDB entry whose domain ids are not strictly increasing (unsorted or
// repeated) ends the entries; decoding is not quadratic in the domains.

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "binlog/checksum.h"
#include "binlog/event_builder.h"
#include "binlog/format.h"
#include "binlog/gtid.h"
#include "binlog/gtid_index.h"
#include "binlog/gtid_reader.h"
#include "binlog/index_file.h"
#include "binlog/log.h"
#include "gtest/gtest.h"
#include "tests/binlog/log_test_util.h"

namespace binlog {
namespace {

using internal::GtidIndex;
using internal::GtidIndexPath;

constexpr uint32_t kTs = 1700000000;
const Uuid kUuid = *Uuid::Parse("3e11fa47-71ca-11e1-9e33-c80aa9429562");

// What a reader returned: file, offset, type.
using Seen = std::tuple<uint64_t, uint64_t, int>;

class GtidIndexHostileTest : public ::testing::TestWithParam<LogFlavor> {
 protected:
  void SetUp() override {
    dir_ = testing_util::NewTempDir("gtid_index_hostile");
    Options o;
    o.flavor = GetParam();
    o.max_file_size = 64 << 10;
    o.sync_policy = SyncPolicy::kNever;
    o.server_uuid = kUuid;
    o.gtid_index_interval = 4096;
    auto log = Binlog::Open(dir_, "binlog", o);
    ASSERT_TRUE(log.ok()) << log.status();
    log_ = std::move(*log);
    Commit(300);
    ASSERT_GE(log_->ListFiles().size(), 3u);
    // The builder indexes closed files in a thread of its own: Close waits
    // for it, so the first file's index is there when the log reopens.
    ASSERT_TRUE(log_->Close().ok());
    log_.reset();
    log = Binlog::Open(dir_, "binlog", o);
    ASSERT_TRUE(log.ok()) << log.status();
    log_ = std::move(*log);
    bin_ = io::JoinPath(dir_, log_->ListFiles()[0].name);
    ipath_ = GtidIndexPath(bin_);
    good_ = testing_util::ReadFile(ipath_);
    ASSERT_FALSE(good_.empty());
    auto idx = internal::DecodeGtidIndex(good_);
    ASSERT_TRUE(idx.ok()) << idx.status();
    index_ = *idx;
    ASSERT_GE(index_.entries.size(), 4u);
  }
  void TearDown() override {
    log_.reset();
    std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(::system(cmd.c_str()), 0);
  }
  bool maria() const { return GetParam() == LogFlavor::kMariaDB; }

  // Transactions of two domains (MariaDB) or this server's GTIDs with some
  // anonymous ones (MySQL).
  void Commit(int n) {
    TransactionBuffer txn;
    for (int i = 0; i < n; ++i) {
      txn.Clear();
      CommitGtid g;
      if (maria()) {
        if (i % 3 == 0) {
          g.has_domain_id = true;
          g.domain_id = 1;
        }
        txn.AppendMariaCommitGtid(kTs, 1, g);
      } else {
        if (i % 7 == 3) g.kind = CommitGtid::Kind::kAnonymous;
        txn.AppendCommitGtid(kTs, 1, g);
        AppendQuery(&txn, kTs, 1, 5, "db", "BEGIN");
      }
      AppendQuery(&txn, kTs, 1, 5, "db", std::string(200 + (i * 37) % 400, 'a' + i % 26));
      AppendXid(&txn, kTs, 1, static_cast<uint64_t>(i + 1));
      auto c = log_->Commit(&txn);
      ASSERT_TRUE(c.ok()) << c.status();
    }
  }

  void Put(const std::string& data) { testing_util::WriteFile(ipath_, data); }

  // The event at `offset` of the first file: its header.
  EventHeader HeaderAt(uint64_t offset) {
    const std::string data = testing_util::ReadFile(bin_);
    return DecodeHeader(absl::string_view(data).substr(offset, kHeaderSize));
  }
  uint32_t HeaderCrcAt(uint64_t offset) {
    const std::string data = testing_util::ReadFile(bin_);
    return Crc32(data.data() + offset, kHeaderSize);
  }

  // The replica the index's entry `i` serves: MySQL: the entry's set;
  // MariaDB: per domain the last GTID before the entry (the entry's
  // domains reached).
  void ReplicaAt(const GtidIndex& index, size_t i, GtidSet* have, MariaGtidState* pos) {
    const internal::GtidIndexEntry& e = index.entries[i];
    *have = e.gtids;
    *pos = MariaGtidState();
    for (const auto& d : e.domains) pos->Add(d.domain_id, d.last_server_id, d.last_seq_no);
  }

  std::unique_ptr<GtidReader> Open(bool at_rest, bool index, const GtidSet& have,
                                   const MariaGtidState& pos) {
    ReaderOptions ro;
    ro.payloads = PayloadMode::kRaw;
    ro.gtid_index_interval = index ? 4096 : 0;
    absl::StatusOr<std::unique_ptr<GtidReader>> g;
    if (at_rest) {
      auto st = ReadAtRestGtidState(dir_, "binlog", GetParam());
      EXPECT_TRUE(st.ok()) << st.status();
      if (!st.ok()) return nullptr;
      g = maria() ? OpenMariaGtidReaderAtRest(dir_, "binlog", *st, pos, ro)
                  : OpenGtidReaderAtRest(dir_, "binlog", *st, have, Uuid(), ro);
    } else {
      g = maria() ? log_->NewMariaGtidReader(pos, ro) : log_->NewGtidReader(have, ro);
    }
    EXPECT_TRUE(g.ok()) << g.status();
    return g.ok() ? std::move(*g) : nullptr;
  }

  // With the index on disk now (`crafted`, put back before each reader):
  // the events and the skipped count of the reader without an index, live
  // and at rest; and no jump past what checks out: the crafted index is
  // replaced by the rebuilt one, with the good index's entries.
  void ExpectTheFullScan(const std::string& crafted, const GtidSet& have,
                         const MariaGtidState& pos, const std::string& what) {
    for (bool at_rest : {false, true}) {
      std::vector<Seen> runs[2];
      uint64_t skipped[2] = {0, 0};
      for (int idx = 0; idx < 2; ++idx) {
        Put(crafted);
        std::unique_ptr<GtidReader> g = Open(at_rest, idx == 1, have, pos);
        ASSERT_NE(g, nullptr) << what;
        Event ev;
        absl::Status s;
        while ((s = g->Next(&ev)).ok()) {
          runs[idx].emplace_back(ev.file_number, ev.offset, ev.header.type);
        }
        EXPECT_TRUE(absl::IsOutOfRange(s)) << what << ": " << s;
        skipped[idx] = g->skipped_transactions();
      }
      const std::string where = absl::StrCat(what, at_rest ? " at rest" : " live");
      EXPECT_EQ(runs[0], runs[1]) << where;
      EXPECT_EQ(skipped[0], skipped[1]) << where;
      auto again = internal::LoadGtidIndex(io::FileSystem::Default(), bin_, GetParam());
      ASSERT_TRUE(again.ok()) << where << ": " << again.status();
      EXPECT_EQ(again->entries.size(), index_.entries.size()) << where << ": not rebuilt";
    }
  }

  std::string dir_, bin_, ipath_, good_;
  GtidIndex index_;
  std::unique_ptr<Binlog> log_;
};

// The good index serves the replicas of these tests (the crafted ones are
// refused, not unused for want of a usable entry).
TEST_P(GtidIndexHostileTest, TheGoodIndexIsUsed) {
  GtidSet have;
  MariaGtidState pos;
  ReplicaAt(index_, index_.entries.size() - 1, &have, &pos);
  std::unique_ptr<GtidReader> g = Open(true, true, have, pos);
  ASSERT_NE(g, nullptr);
  Event ev;
  ASSERT_TRUE(g->Next(&ev).ok());
  EXPECT_EQ(g->planned_jumps(), 1u);
  while (g->Next(&ev).ok()) {
  }
  EXPECT_EQ(g->jumped_to(), index_.entries.back().offset);
}

// An index file past kMaxGtidIndexSize (the good one, then garbage) is
// not read: DataLoss, then rebuilt.
TEST_P(GtidIndexHostileTest, IndexLargerThanTheLimitIsCorrupt) {
  const std::string big = good_ + std::string(internal::kMaxGtidIndexSize + 1 - good_.size(), 'x');
  Put(big);
  EXPECT_TRUE(absl::IsDataLoss(
      internal::LoadGtidIndex(io::FileSystem::Default(), bin_, GetParam()).status()));
  EXPECT_TRUE(absl::IsDataLoss(internal::DecodeGtidIndex(big).status()));
  GtidSet have;
  MariaGtidState pos;
  ReplicaAt(index_, index_.entries.size() - 1, &have, &pos);
  ExpectTheFullScan(big, have, pos, "an index past the limit");
  EXPECT_EQ(testing_util::ReadFile(ipath_).size(), good_.size());
}

// A header naming a Format_description past kMaxFormatDescriptionSize
// (here: the whole binlog file, with its CRC, so that every other check
// passes) is refused before the reader reads those bytes.
TEST_P(GtidIndexHostileTest, FormatDescriptionLargerThanTheLimitIsCorrupt) {
  GtidIndex lie = index_;
  lie.fde_end = lie.file_size;
  const std::string data = testing_util::ReadFile(bin_);
  ASSERT_EQ(data.size(), lie.file_size);
  lie.fde_crc = Crc32(data.data(), data.size());
  const std::string crafted = internal::EncodeGtidIndex(lie);
  Put(crafted);
  EXPECT_TRUE(absl::IsDataLoss(
      internal::LoadGtidIndex(io::FileSystem::Default(), bin_, GetParam()).status()));
  GtidSet have;
  MariaGtidState pos;
  ReplicaAt(index_, index_.entries.size() - 1, &have, &pos);
  ExpectTheFullScan(crafted, have, pos, "a Format_description past the limit");
}

// The builder stops adding entries before the index would pass its limit.
TEST_P(GtidIndexHostileTest, TheBuilderKeepsUnderTheLimit) {
  const uint64_t limit = good_.size() / 2;
  auto small = internal::BuildGtidIndex(io::FileSystem::Default(), bin_, GetParam(), 4096,
                                        ReaderOptions(), nullptr, limit);
  ASSERT_TRUE(small.ok()) << small.status();
  const std::string encoded = internal::EncodeGtidIndex(*small);
  EXPECT_LE(encoded.size(), limit);
  EXPECT_GE(small->entries.size(), 1u);
  EXPECT_LT(small->entries.size(), index_.entries.size());
  // The default limit: the whole index, as the log wrote it.
  auto whole = internal::BuildGtidIndex(io::FileSystem::Default(), bin_, GetParam(), 4096,
                                        ReaderOptions());
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(internal::EncodeGtidIndex(*whole), good_);
}

// Every entry the builder writes sits at a GTID event whose GTID its state
// does not hold (what a reader checks before it jumps there).
TEST_P(GtidIndexHostileTest, EntriesSitAtGtidEvents) {
  for (const auto& e : index_.entries) {
    const uint8_t type = HeaderAt(e.offset).type;
    if (maria()) {
      EXPECT_EQ(type, kMariaGtidEvent) << e.offset;
    } else {
      EXPECT_TRUE(type == kGtidEvent || type == kGtidTaggedEvent) << e.offset << ": " << int{type};
    }
  }
}

// The entry a replica uses moved to the next event, inside the
// transaction that starts there, its header CRC recomputed: the reader
// would return that transaction without its GTID event.
TEST_P(GtidIndexHostileTest, EntryInsideATransactionIsCorrupt) {
  for (size_t i : {size_t{1}, index_.entries.size() / 2, index_.entries.size() - 1}) {
    GtidIndex lie = index_;
    internal::GtidIndexEntry& e = lie.entries[i];
    e.offset += HeaderAt(e.offset).event_size;
    e.header_crc = HeaderCrcAt(e.offset);
    lie.entries.resize(i + 1);
    GtidSet have;
    MariaGtidState pos;
    ReplicaAt(index_, i, &have, &pos);
    ExpectTheFullScan(internal::EncodeGtidIndex(lie), have, pos,
                      absl::StrCat("entry ", i, " inside a transaction"));
  }
}

// An entry with the GTID state of the next entry: it claims transactions
// the file has only after it. MySQL: a replica that has them skips them
// anyway, but the skipped count would be wrong; MariaDB: the domains
// count as reached too early and transactions the replica has are sent.
TEST_P(GtidIndexHostileTest, EntryClaimingLaterTransactionsIsCorrupt) {
  for (size_t i : {size_t{1}, index_.entries.size() / 2, index_.entries.size() - 2}) {
    GtidIndex lie = index_;
    const internal::GtidIndexEntry& next = index_.entries[i + 1];
    internal::GtidIndexEntry& e = lie.entries[i];
    e.gtids = next.gtids;
    e.domains = next.domains;
    e.gtid_transactions = next.gtid_transactions;
    lie.entries.resize(i + 1);
    GtidSet have;
    MariaGtidState pos;
    ReplicaAt(index_, i + 1, &have, &pos);
    ExpectTheFullScan(internal::EncodeGtidIndex(lie), have, pos,
                      absl::StrCat("entry ", i, " with a later state"));
  }
}

INSTANTIATE_TEST_SUITE_P(Flavors, GtidIndexHostileTest,
                         ::testing::Values(LogFlavor::kMySQL, LogFlavor::kMariaDB),
                         [](const ::testing::TestParamInfo<LogFlavor>& p) {
                           return p.param == LogFlavor::kMariaDB ? "MariaDB" : "MySQL";
                         });

// A MariaDB index of `entries` entries with `domains` domains each (ids
// 0, 1, ...; the state grows from entry to entry), for a binlog file large
// enough to hold them: what the decoder sees, not a file's.
GtidIndex MariaIndexOfDomains(size_t entries, uint32_t domains) {
  GtidIndex index;
  index.flavor = LogFlavor::kMariaDB;
  index.interval = 4096;
  index.file_size = 1 << 20;
  index.fde_end = 120;
  for (size_t i = 0; i < entries; ++i) {
    internal::GtidIndexEntry e;
    e.offset = 4096 * (i + 1);
    e.gtid_transactions = (i + 1) * domains;
    if (i == 0) e.returned.emplace_back(kMagicSize, index.fde_end);
    for (uint32_t d = 0; d < domains; ++d) {
      internal::GtidIndexDomain x;
      x.domain_id = d;
      x.last_server_id = 1;
      x.last_seq_no = x.max_seq_no = i + 1;
      x.last_is_new_max = true;
      e.domains.push_back(x);
    }
    index.entries.push_back(std::move(e));
  }
  return index;
}

// The decoder requires a MariaDB entry's domain ids strictly increasing
// (the builder writes them so): an entry with domains out of order, or one
// twice, does not check out and ends the entries, as a damaged one does
// (readers use the entries before it; verify reports it).
TEST(GtidIndexDomainOrder, UnsortedOrRepeatedDomainsEndTheEntries) {
  const GtidIndex good = MariaIndexOfDomains(3, 4);
  auto d = internal::DecodeGtidIndex(internal::EncodeGtidIndex(good));
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->entries.size(), 3u);
  for (const bool repeat : {false, true}) {
    for (size_t at : {0u, 1u}) {
      GtidIndex bad = good;
      auto& domains = bad.entries[at].domains;
      if (repeat) {
        domains.insert(domains.begin() + 2, domains[1]);  // domain 1 twice
      } else {
        std::swap(domains[1], domains[2]);
      }
      auto r = internal::DecodeGtidIndex(internal::EncodeGtidIndex(bad));
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_EQ(r->entries.size(), at)
          << (repeat ? "a repeated" : "unsorted") << " domain in entry " << at;
    }
  }
}

// Decoding checks that each entry's state holds the one before it, domain
// by domain: a merge of two sorted lists, not a search per domain. Two
// entries of 100000 domains (5 MB, under kMaxGtidIndexSize) decode in
// about the time of 25000 ones times four; a generous bound, and a
// floor under which any ratio passes, so a stall of the machine does not
// decide. (Measured, 2 shared cores, optimized: a search per domain took
// 54 ms and 1.7 s; the merge, both sizes with the encoding, 44 ms.)
TEST(GtidIndexDomainOrder, DecodingIsLinearInTheDomains) {
  auto fastest_decode = [](uint32_t domains) {
    const std::string data = internal::EncodeGtidIndex(MariaIndexOfDomains(2, domains));
    EXPECT_LE(data.size(), internal::kMaxGtidIndexSize);
    absl::Duration best = absl::InfiniteDuration();
    for (int i = 0; i < 3; ++i) {
      const absl::Time start = absl::Now();
      auto d = internal::DecodeGtidIndex(data);
      best = std::min(best, absl::Now() - start);
      EXPECT_TRUE(d.ok() && d->entries.size() == 2) << domains << " domains";
    }
    return best;
  };
  const absl::Duration small = fastest_decode(25000);
  const absl::Duration large = fastest_decode(100000);
  EXPECT_LT(large, std::max(8 * small, absl::Milliseconds(500)))
      << "25000 domains: " << small << ", 100000: " << large;
}

}  // namespace
}  // namespace binlog
