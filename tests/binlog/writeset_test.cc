// binlog/writeset.h: WritesetHistory's rules (conflicts, independence, the
// floor, overflow, clears, fallbacks) and the key hash, plus the writeset
// a TransactionBuffer carries.

#include "binlog/writeset.h"

#include <cstdint>
#include <vector>

#include "binlog/transaction.h"
#include "gtest/gtest.h"

namespace binlog {
namespace {

using S = WritesetState;

class WritesetHistoryTest : public ::testing::Test {
 protected:
  void Make(size_t size) { h_ = *WritesetHistory::Create(size); }
  // Assigns the next sequence number with a commit-order last_committed of
  // seq - 1 (no concurrency: the most a commit-order clock can give).
  int64_t Next(std::vector<uint64_t> hashes, S state = S::kComplete) {
    ++seq_;
    return h_.Assign(hashes, state, seq_, seq_ - 1);
  }
  WritesetHistory h_ = *WritesetHistory::Create();
  int64_t seq_ = 0;
};

TEST_F(WritesetHistoryTest, CreateRefusesSizesOutOfRange) {
  EXPECT_EQ(WritesetHistory::Create(0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(WritesetHistory::Create(kMaxWritesetHistorySize + 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(WritesetHistory::Create(1).ok());
  EXPECT_TRUE(WritesetHistory::Create(kMaxWritesetHistorySize).ok());
}

TEST_F(WritesetHistoryTest, IndependentTransactionsShareTheFloor) {
  h_.StartFile();
  EXPECT_EQ(Next({1}), 0);  // the file's first: commit order gives 0
  EXPECT_EQ(Next({2}), 1);  // the floor after rotation is 1
  EXPECT_EQ(Next({3}), 1);
  EXPECT_EQ(Next({4, 5, 6}), 1);
}

TEST_F(WritesetHistoryTest, ConflictDependsOnTheLastWriterOfTheKey) {
  h_.StartFile();
  Next({10});      // 1
  Next({20});      // 2
  Next({30});      // 3
  EXPECT_EQ(Next({20}), 2);      // 4: last wrote 20 at 2
  EXPECT_EQ(Next({20, 10}), 4);  // 5: newest of 4 (20) and 1 (10)
  EXPECT_EQ(Next({30}), 3);      // 6
  EXPECT_EQ(Next({10}), 5);      // 7
}

TEST_F(WritesetHistoryTest, CommitOrderIsAnUpperBound) {
  h_.StartFile();
  Next({1});  // 1
  Next({2});  // 2
  // Transaction 3 conflicts with 2, but prepared before 1 committed: its
  // commit-order last_committed is 0, and writeset never raises it.
  EXPECT_EQ(h_.Assign(std::vector<uint64_t>{2}, S::kComplete, 3, 0), 0);
  seq_ = 3;
  EXPECT_EQ(Next({2}), 3);
}

TEST_F(WritesetHistoryTest, DuplicateHashesInOneTransactionDoNotSelfDepend) {
  h_.StartFile();
  Next({7});                      // 1
  EXPECT_EQ(Next({8, 8, 8}), 1);  // 2: not 2 itself
  EXPECT_EQ(h_.size(), 2u);
}

TEST_F(WritesetHistoryTest, UnusableTransactionClearsAndRaisesTheFloor) {
  h_.StartFile();
  Next({1});                              // 1
  Next({2});                              // 2
  EXPECT_EQ(Next({}, S::kNone), 2);       // 3: DDL, commit order
  EXPECT_EQ(h_.size(), 0u);
  EXPECT_EQ(h_.floor(), 3);
  EXPECT_EQ(Next({1}), 3);  // 4: its key's writer was forgotten: floor
  EXPECT_EQ(Next({9}), 3);  // 5: independent, still after the DDL
}

TEST_F(WritesetHistoryTest, IsolatedFallbackKeepsItsCommitOrderValue) {
  h_.StartFile();
  Next({1});
  Next({2});
  // An isolated transaction: the log gives it seq - 1 by commit order.
  EXPECT_EQ(h_.Assign(std::vector<uint64_t>{5}, S::kNone, 3, 2), 2);
  seq_ = 3;
  EXPECT_EQ(Next({5}), 3);  // its hashes were not recorded, floor covers it
}

TEST_F(WritesetHistoryTest, MissingKeysUsesCommitOrderButKeepsTheHistory) {
  h_.StartFile();
  Next({1});                                  // 1
  Next({2});                                  // 2
  EXPECT_EQ(Next({3}, S::kMissingKeys), 2);   // 3: commit order
  EXPECT_EQ(h_.floor(), 1);                   // not cleared
  EXPECT_EQ(Next({2}), 2);                    // 4: 2 is still known
  EXPECT_EQ(Next({3}), 3);                    // 5: 3's hashes were recorded
  EXPECT_EQ(Next({}, S::kMissingKeys), 5);    // 6
  EXPECT_EQ(Next({99}), 1);                   // 7: independent of all
}

TEST_F(WritesetHistoryTest, EmptyCompleteWritesetDependsOnlyOnTheFloor) {
  h_.StartFile();
  Next({1});
  Next({2});
  EXPECT_EQ(Next({}), 1);
  EXPECT_EQ(h_.floor(), 1);
}

TEST_F(WritesetHistoryTest, OverflowUsesHistoryThenClears) {
  Make(4);
  h_.StartFile();
  Next({1});                 // 1
  Next({2, 3});              // 2
  EXPECT_EQ(h_.size(), 3u);
  // 3 + 2 > 4: the transaction still finds 1 (written at 1) and updates it,
  // does not insert 5, then the history is cleared with floor 3.
  EXPECT_EQ(Next({1, 5}), 1);
  EXPECT_EQ(h_.size(), 0u);
  EXPECT_EQ(h_.floor(), 3);
  EXPECT_EQ(h_.clears(), 2u);  // StartFile and the overflow
  EXPECT_EQ(Next({2}), 3);     // 4: 2's writer forgotten: floor
  EXPECT_EQ(Next({7}), 3);
}

TEST_F(WritesetHistoryTest, FillingExactlyToTheSizeDoesNotClear) {
  Make(4);
  h_.StartFile();
  Next({1, 2});
  Next({3, 4});
  EXPECT_EQ(h_.size(), 4u);
  EXPECT_EQ(h_.floor(), 1);
}

TEST_F(WritesetHistoryTest, OverflowCountsEveryHashEvenUpdates) {
  // As MySQL: the test is entries + the transaction's hashes > size, even
  // when the hashes are all in the history already.
  Make(4);
  h_.StartFile();
  Next({1, 2});
  Next({3, 4});
  EXPECT_EQ(Next({4}), 2);
  EXPECT_EQ(h_.size(), 0u);
  EXPECT_EQ(h_.floor(), 3);
}

TEST_F(WritesetHistoryTest, WritesetLargerThanTheHistoryIsUnusable) {
  Make(2);
  h_.StartFile();
  Next({1});
  EXPECT_EQ(Next({1, 2, 3}), 1);  // commit order (seq - 1 = 1)
  EXPECT_EQ(h_.floor(), 2);
  EXPECT_EQ(Next({1}), 2);
}

TEST_F(WritesetHistoryTest, StartFileForgetsThePreviousFile) {
  h_.StartFile();
  Next({1});
  Next({2});
  Next({3});
  h_.StartFile();
  seq_ = 0;
  EXPECT_EQ(Next({3}), 0);  // new file's first transaction
  EXPECT_EQ(Next({2}), 1);  // 2's writer was in the old file: floor 1
  EXPECT_EQ(Next({3}), 1);  // written at 1 of this file
}

TEST_F(WritesetHistoryTest, ClearBoundsBelow) {
  h_.Clear(40);
  seq_ = 41;
  Next({1});
  EXPECT_EQ(Next({2}), 40);
  EXPECT_EQ(Next({1}), 42);
}

TEST_F(WritesetHistoryTest, ManyClearsWrapTheGenerationSafely) {
  Make(8);
  h_.StartFile();
  Next({1});  // recorded under the current generation
  // A full cycle of the 16-bit generation: without a real wipe at the wrap,
  // the entry above would look live again.
  for (int i = 0; i < 65536; ++i) h_.Clear(seq_);
  EXPECT_EQ(h_.size(), 0u);
  EXPECT_EQ(Next({1}), 1);  // not found: the floor, and inserted anew
  EXPECT_EQ(h_.size(), 1u);
}

TEST_F(WritesetHistoryTest, ManyKeysMatchAReferenceModel) {
  // A plain map model of the same rules, with collisions of the open
  // addressing table exercised by 20000 distinct and repeated keys.
  Make(5000);
  h_.StartFile();
  std::vector<int64_t> last(20000, 0);  // key -> seq, 0: unknown
  size_t entries = 0;
  int64_t floor = 1;
  uint64_t x = 12345;
  for (int t = 0; t < 20000; ++t) {
    std::vector<uint64_t> keys;
    int n = 1 + static_cast<int>(x % 4);
    for (int k = 0; k < n; ++k) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      keys.push_back((x >> 33) % (t % 3 == 0 ? 50 : 20000));
    }
    ++seq_;
    int64_t expect = floor;
    const bool exceeds = entries + keys.size() > 5000;
    for (uint64_t k : keys) {
      if (last[k] != 0) {
        if (last[k] > expect && last[k] < seq_) expect = last[k];
        last[k] = seq_;
      } else if (!exceeds) {
        last[k] = seq_;
        ++entries;
      }
    }
    expect = std::min(expect, seq_ - 1);
    ASSERT_EQ(h_.Assign(keys, S::kComplete, seq_, seq_ - 1), expect) << t;
    if (exceeds) {
      std::fill(last.begin(), last.end(), 0);
      entries = 0;
      floor = seq_;
    }
    ASSERT_EQ(h_.size(), entries);
  }
  EXPECT_GT(h_.clears(), 2u);
}

TEST(WritesetHashTest, SeedsDifferBySchemaTableAndKey) {
  const uint64_t a = WritesetKeySeed("db", "t", 0);
  EXPECT_EQ(a, WritesetKeySeed("db", "t", 0));
  EXPECT_NE(a, WritesetKeySeed("db", "t", 1));
  EXPECT_NE(a, WritesetKeySeed("db", "u", 0));
  EXPECT_NE(a, WritesetKeySeed("dc", "t", 0));
  EXPECT_NE(WritesetKeySeed("ab", "c", 0), WritesetKeySeed("a", "bc", 0));
}

TEST(WritesetHashTest, BytesDependOnEveryByteAndTheLength) {
  EXPECT_EQ(WritesetBytes("hello world"), WritesetBytes("hello world"));
  EXPECT_NE(WritesetBytes("hello world"), WritesetBytes("hello worle"));
  EXPECT_NE(WritesetBytes("a"), WritesetBytes(absl::string_view("a\0", 2)));
  EXPECT_NE(WritesetBytes(""), WritesetBytes(absl::string_view("\0", 1)));
  EXPECT_NE(WritesetBytes("12345678x"), WritesetBytes("12345678y"));
}

TEST(WritesetHashTest, MixIsOrderSensitive) {
  const uint64_t s = WritesetKeySeed("db", "t", 0);
  EXPECT_NE(WritesetMix(WritesetMix(s, 1), 2), WritesetMix(WritesetMix(s, 2), 1));
  EXPECT_NE(WritesetMix(s, 0), s);
}

TEST(TransactionWritesetTest, StartsUndeclared) {
  TransactionBuffer b;
  EXPECT_EQ(b.writeset_state(), WritesetState::kNone);
  EXPECT_TRUE(b.writeset().empty());
}

TEST(TransactionWritesetTest, HashesDeclareCompleteAndClearResets) {
  TransactionBuffer b;
  b.AddWritesetHash(5);
  b.AddWritesetHash(6);
  EXPECT_EQ(b.writeset_state(), WritesetState::kComplete);
  EXPECT_EQ(b.writeset().size(), 2u);
  b.Clear();
  EXPECT_EQ(b.writeset_state(), WritesetState::kNone);
  EXPECT_TRUE(b.writeset().empty());
}

TEST(TransactionWritesetTest, MissingKeysSurvivesLaterHashes) {
  TransactionBuffer b;
  b.MarkWritesetMissingKeys();
  b.AddWritesetHash(5);
  EXPECT_EQ(b.writeset_state(), WritesetState::kMissingKeys);
  EXPECT_EQ(b.writeset().size(), 1u);
}

TEST(TransactionWritesetTest, UnusableIsSticky) {
  TransactionBuffer b;
  b.AddWritesetHash(5);
  b.MarkWritesetUnusable();
  b.AddWritesetHash(6);
  b.MarkWritesetMissingKeys();
  b.DeclareWritesetComplete();
  EXPECT_EQ(b.writeset_state(), WritesetState::kNone);
  EXPECT_TRUE(b.writeset().empty());
}

TEST(TransactionWritesetTest, PassingTheLimitMakesItUnusable) {
  TransactionBuffer b;
  b.set_writeset_limit(3);
  for (uint64_t i = 0; i < 3; ++i) b.AddWritesetHash(i);
  EXPECT_EQ(b.writeset_state(), WritesetState::kComplete);
  b.AddWritesetHash(3);
  EXPECT_EQ(b.writeset_state(), WritesetState::kNone);
  EXPECT_TRUE(b.writeset().empty());
}

TEST(TransactionWritesetTest, EmptyDeclaredCompleteIsComplete) {
  TransactionBuffer b;
  b.DeclareWritesetComplete();
  EXPECT_EQ(b.writeset_state(), WritesetState::kComplete);
}

TEST(TransactionWritesetTest, SteadyStateKeepsItsMemory) {
  TransactionBuffer b;
  for (uint64_t i = 0; i < 100; ++i) b.AddWritesetHash(i);
  const uint64_t* p = b.writeset().data();
  b.Clear();
  for (uint64_t i = 0; i < 100; ++i) b.AddWritesetHash(i);
  EXPECT_EQ(b.writeset().data(), p);
}

}  // namespace
}  // namespace binlog
