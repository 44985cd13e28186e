// binlog/rows_writer.h, writeset: the key hashes RowsWriter adds for each
// row image (same key, same hash across INSERT/UPDATE/DELETE; both keys of
// a key-changing UPDATE; different tables and keys differ), the states it
// declares (missing keys, foreign-key parents, writeset off), and the
// canonical forms of key values.

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "binlog/rows.h"
#include "binlog/rows_writer.h"
#include "binlog/transaction.h"
#include "binlog/writeset.h"
#include "gtest/gtest.h"

namespace binlog {
namespace {

using H = std::vector<uint64_t>;

ColumnDef Col(ColumnType type, uint32_t length = 0, uint32_t collation = 0,
              bool nullable = false) {
  ColumnDef c;
  c.type = type;
  c.length = length;
  c.collation = collation;
  c.nullable = nullable;
  return c;
}

class RowsWritesetTest : public ::testing::Test {
 protected:
  RowsWritesetTest() : w_(Make(RowImage::kFull)) {}
  static RowsWriter Make(RowImage image, bool writeset = true) {
    RowsWriterOptions o;
    o.row_image = image;
    o.writeset = writeset;
    return *RowsWriter::Create(o);
  }
  // id INT PRIMARY KEY, u INT NULL UNIQUE, v VARCHAR(20) (utf8mb4_0900_ai_ci).
  TableDef Keyed(const std::string& name = "t") {
    TableDef t;
    t.table_id = 7;
    t.schema = "db";
    t.table = name;
    t.columns = {Col(kColLong), Col(kColLong, 0, 0, true),
                 Col(kColVarchar, 80, 255, true)};
    t.primary_key = {0};
    t.unique_keys = {KeyDef{{1}, {}}};
    return t;
  }
  RowsWriter::TableHandle Describe(const TableDef& def) {
    absl::StatusOr<RowsWriter::TableHandle> h = w_.DescribeTable(def);
    EXPECT_TRUE(h.ok()) << h.status();
    return *h;
  }
  // Runs one statement in a fresh transaction and returns its writeset.
  template <typename F>
  H Txn(F rows) {
    txn_.Clear();
    EXPECT_TRUE(w_.BeginStatement(&txn_, 1).ok());
    rows();
    EXPECT_TRUE(w_.EndStatement().ok());
    return H(txn_.writeset().begin(), txn_.writeset().end());
  }
  static std::vector<Value> Row(int64_t id, Value u, absl::string_view v) {
    return {Value::Int(id), u, Value::Bytes(v)};
  }

  RowsWriter w_;
  TransactionBuffer txn_{false};
};

TEST_F(RowsWritesetTest, SameKeySameHashAcrossInsertUpdateDelete) {
  auto t = Describe(Keyed());
  const auto r1 = Row(5, Value::Null(), "x");
  const auto r2 = Row(5, Value::Null(), "y");
  const H ins = Txn([&] { ASSERT_TRUE(w_.Insert(t, r1).ok()); });
  const H upd = Txn([&] { ASSERT_TRUE(w_.Update(t, r1, r2).ok()); });
  const H del = Txn([&] { ASSERT_TRUE(w_.Delete(t, r2).ok()); });
  ASSERT_EQ(ins.size(), 1u);  // u is NULL: no unique-key hash
  EXPECT_EQ(upd, ins);        // same key before and after: one hash
  EXPECT_EQ(del, ins);
  uint64_t h = 0;
  ASSERT_TRUE(w_.KeyHash(t, 0, r1, &h));
  EXPECT_EQ(h, ins[0]);
  EXPECT_EQ(txn_.writeset_state(), WritesetState::kComplete);
}

TEST_F(RowsWritesetTest, KeyChangingUpdateYieldsOldAndNewKeys) {
  auto t = Describe(Keyed());
  const auto before = Row(5, Value::Int(1), "x");
  const auto after = Row(6, Value::Int(2), "x");
  const H upd = Txn([&] { ASSERT_TRUE(w_.Update(t, before, after).ok()); });
  const H old_keys = Txn([&] { ASSERT_TRUE(w_.Insert(t, before).ok()); });
  const H new_keys = Txn([&] { ASSERT_TRUE(w_.Insert(t, after).ok()); });
  ASSERT_EQ(old_keys.size(), 2u);
  ASSERT_EQ(new_keys.size(), 2u);
  H want = {old_keys[0], new_keys[0], old_keys[1], new_keys[1]};
  H got = upd;
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, want);
}

TEST_F(RowsWritesetTest, UniqueKeyChangeKeepsOnePrimaryKeyHash) {
  auto t = Describe(Keyed());
  const H upd = Txn([&] {
    ASSERT_TRUE(w_.Update(t, Row(5, Value::Int(1), "x"), Row(5, Value::Int(2), "x")).ok());
  });
  EXPECT_EQ(upd.size(), 3u);  // pk once, u=1, u=2
}

TEST_F(RowsWritesetTest, DifferentTablesAndKeysDiffer) {
  auto a = Describe(Keyed("a"));
  auto b = Describe(Keyed("b"));
  const auto r = Row(5, Value::Int(5), "x");
  const H ha = Txn([&] { ASSERT_TRUE(w_.Insert(a, r).ok()); });
  const H hb = Txn([&] { ASSERT_TRUE(w_.Insert(b, r).ok()); });
  ASSERT_EQ(ha.size(), 2u);
  ASSERT_EQ(hb.size(), 2u);
  EXPECT_NE(ha[0], ha[1]);  // pk 5 and u 5 are different keys
  EXPECT_NE(ha[0], hb[0]);
  EXPECT_NE(ha[1], hb[1]);
  TableDef other = Keyed("a");
  other.schema = "db2";
  auto c = Describe(other);
  const H hc = Txn([&] { ASSERT_TRUE(w_.Insert(c, r).ok()); });
  EXPECT_NE(ha[0], hc[0]);
}

TEST_F(RowsWritesetTest, DifferentValuesDiffer) {
  auto t = Describe(Keyed());
  std::vector<uint64_t> seen;
  for (int64_t id : {0, 1, 2, -1, 1 << 20, INT32_MAX, INT32_MIN}) {
    uint64_t h = 0;
    ASSERT_TRUE(w_.KeyHash(t, 0, Row(id, Value::Null(), ""), &h));
    seen.push_back(h);
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(std::unique(seen.begin(), seen.end()), seen.end());
}

TEST_F(RowsWritesetTest, TableWithoutPrimaryKeyHasMissingKeys) {
  TableDef def = Keyed();
  def.primary_key.clear();  // a UNIQUE key alone: MySQL hashes nothing
  auto t = Describe(def);
  const H h = Txn([&] { ASSERT_TRUE(w_.Insert(t, Row(1, Value::Int(1), "x")).ok()); });
  EXPECT_TRUE(h.empty());
  EXPECT_EQ(txn_.writeset_state(), WritesetState::kMissingKeys);
}

TEST_F(RowsWritesetTest, MissingKeysStaysWithRowsOfKeyedTables) {
  TableDef none = Keyed("none");
  none.primary_key.clear();
  auto n = Describe(none);
  auto k = Describe(Keyed("k"));
  txn_.Clear();
  const RowsWriter::TableHandle both[] = {n, k};
  ASSERT_TRUE(w_.BeginStatement(&txn_, 1, {}, both).ok());
  ASSERT_TRUE(w_.Insert(n, Row(1, Value::Null(), "x")).ok());
  ASSERT_TRUE(w_.Insert(k, Row(1, Value::Null(), "x")).ok());
  ASSERT_TRUE(w_.EndStatement().ok());
  EXPECT_EQ(txn_.writeset().size(), 1u);
  EXPECT_EQ(txn_.writeset_state(), WritesetState::kMissingKeys);
}

TEST_F(RowsWritesetTest, ForeignKeyParentMakesTheWritesetUnusable) {
  TableDef def = Keyed();
  def.foreign_key_parent = true;
  auto t = Describe(def);
  const H h = Txn([&] { ASSERT_TRUE(w_.Insert(t, Row(1, Value::Null(), "x")).ok()); });
  EXPECT_TRUE(h.empty());
  EXPECT_EQ(txn_.writeset_state(), WritesetState::kNone);
}

TEST_F(RowsWritesetTest, WritesetOffDeclaresNothing) {
  w_ = Make(RowImage::kFull, /*writeset=*/false);
  auto t = Describe(Keyed());
  const H h = Txn([&] { ASSERT_TRUE(w_.Insert(t, Row(1, Value::Null(), "x")).ok()); });
  EXPECT_TRUE(h.empty());
  EXPECT_EQ(txn_.writeset_state(), WritesetState::kNone);
}

TEST_F(RowsWritesetTest, RefusedRowAddsNoHash) {
  auto t = Describe(Keyed());
  const H h = Txn([&] {
    // A NULL in the NOT NULL primary key: refused.
    EXPECT_FALSE(w_.Insert(t, {Value::Null(), Value::Int(1), Value::Bytes("x")}).ok());
  });
  EXPECT_TRUE(h.empty());
  EXPECT_EQ(txn_.writeset_state(), WritesetState::kNone);
}

TEST_F(RowsWritesetTest, MinimalImageStillHashesUniqueKeysOfTheBeforeImage) {
  w_ = Make(RowImage::kMinimal);
  auto t = Describe(Keyed());
  // The before image holds the primary key only, but the unique key's value
  // (handed over) conflicts with a later insert of the same u.
  const H del = Txn([&] { ASSERT_TRUE(w_.Delete(t, Row(5, Value::Int(9), "x")).ok()); });
  const H ins = Txn([&] { ASSERT_TRUE(w_.Insert(t, Row(6, Value::Int(9), "y")).ok()); });
  ASSERT_EQ(del.size(), 2u);
  ASSERT_EQ(ins.size(), 2u);
  EXPECT_EQ(del[1], ins[1]);
  EXPECT_NE(del[0], ins[0]);
}

TEST_F(RowsWritesetTest, DescribeRefusesABadUniqueKey) {
  TableDef def = Keyed();
  def.unique_keys = {KeyDef{{3}, {}}};
  EXPECT_EQ(w_.DescribeTable(def).status().code(), absl::StatusCode::kInvalidArgument);
  def.unique_keys = {KeyDef{}};
  EXPECT_EQ(w_.DescribeTable(def).status().code(), absl::StatusCode::kInvalidArgument);
}

// Canonical forms: one single-column primary key of each kind.
class KeyFormTest : public RowsWritesetTest {
 protected:
  uint64_t Hash(const ColumnDef& c, Value v, uint32_t prefix = 0) {
    TableDef def;
    def.table_id = 1;
    def.schema = "db";
    def.table = "k";
    def.columns = {c};
    def.primary_key = {0};
    if (prefix != 0) def.primary_key_prefix = {prefix};
    auto t = Describe(def);
    const H h = Txn([&] { EXPECT_TRUE(w_.Insert(t, {v}).ok()); });
    EXPECT_EQ(h.size(), 1u);
    return h.empty() ? 0 : h[0];
  }
};

TEST_F(KeyFormTest, IntegersBySignednessAgree) {
  ColumnDef u = Col(kColLongLong);
  u.is_unsigned = true;
  EXPECT_EQ(Hash(u, Value::UInt(5)), Hash(u, Value::Int(5)));
  EXPECT_EQ(Hash(Col(kColLong), Value::Int(-1)), Hash(Col(kColLong), Value::Int(-1)));
  EXPECT_NE(Hash(Col(kColLong), Value::Int(-1)), Hash(Col(kColLong), Value::Int(1)));
}

TEST_F(KeyFormTest, CaseInsensitiveCollationTreatsAllValuesAlike) {
  const ColumnDef c = Col(kColVarchar, 80, 255);  // utf8mb4_0900_ai_ci
  EXPECT_EQ(Hash(c, Value::Bytes("abc")), Hash(c, Value::Bytes("ABC ")));
  EXPECT_EQ(Hash(c, Value::Bytes("abc")), Hash(c, Value::Bytes("xyz")));
}

TEST_F(KeyFormTest, BinCollationIgnoresTrailingSpacesOnly) {
  const ColumnDef c = Col(kColVarchar, 80, 46);  // utf8mb4_bin
  EXPECT_EQ(Hash(c, Value::Bytes("abc")), Hash(c, Value::Bytes("abc  ")));
  EXPECT_NE(Hash(c, Value::Bytes("abc")), Hash(c, Value::Bytes("ABC")));
}

TEST_F(KeyFormTest, VarbinaryIsExact) {
  const ColumnDef c = Col(kColVarchar, 80, kBinaryCollation);
  EXPECT_NE(Hash(c, Value::Bytes("abc")), Hash(c, Value::Bytes("abc ")));
  const ColumnDef fixed = Col(kColString, 10, kBinaryCollation);  // BINARY(10)
  EXPECT_EQ(Hash(fixed, Value::Bytes(absl::string_view("ab\0\0", 4))),
            Hash(fixed, Value::Bytes("ab")));
}

TEST_F(KeyFormTest, PrefixKeyHashesOnlyThePrefix) {
  const ColumnDef c = Col(kColVarchar, 80, kBinaryCollation);
  EXPECT_EQ(Hash(c, Value::Bytes("abcdef"), 3), Hash(c, Value::Bytes("abcxyz"), 3));
  EXPECT_NE(Hash(c, Value::Bytes("abcdef"), 3), Hash(c, Value::Bytes("abxdef"), 3));
}

TEST_F(KeyFormTest, ZeroHasOneFormForRealsAndDecimals) {
  const ColumnDef d = Col(kColDouble);
  EXPECT_EQ(Hash(d, Value::Double(0.0)), Hash(d, Value::Double(-0.0)));
  EXPECT_NE(Hash(d, Value::Double(1.0)), Hash(d, Value::Double(-1.0)));
  ColumnDef dec = Col(kColNewDecimal, 10);
  dec.scale = 2;
  EXPECT_EQ(Hash(dec, Value::Decimal("0.00")), Hash(dec, Value::Decimal("-0")));
  EXPECT_EQ(Hash(dec, Value::Decimal("1.5")), Hash(dec, Value::Decimal("1.50")));
  EXPECT_NE(Hash(dec, Value::Decimal("1.5")), Hash(dec, Value::Decimal("-1.5")));
}

TEST_F(KeyFormTest, TemporalUsesTheStoredValue) {
  ColumnDef c = Col(kColDatetime2);
  c.length = 0;  // no fraction: micros are not stored
  Temporal a{2024, 5, 6, 7, 8, 9, 0, false};
  Temporal b = a;
  b.micros = 123456;
  EXPECT_EQ(Hash(c, Value::Time(a)), Hash(c, Value::Time(b)));
  b.second = 10;
  EXPECT_NE(Hash(c, Value::Time(a)), Hash(c, Value::Time(b)));
}

TEST_F(RowsWritesetTest, SteadyStateReusesTheWritesetMemory) {
  auto t = Describe(Keyed());
  Txn([&] {
    for (int i = 0; i < 50; ++i) ASSERT_TRUE(w_.Insert(t, Row(i, Value::Int(i), "x")).ok());
  });
  const uint64_t* p = txn_.writeset().data();
  Txn([&] {
    for (int i = 0; i < 50; ++i) ASSERT_TRUE(w_.Insert(t, Row(i, Value::Int(i), "x")).ok());
  });
  EXPECT_EQ(txn_.writeset().data(), p);
  EXPECT_EQ(txn_.writeset().size(), 100u);
}

}  // namespace
}  // namespace binlog
