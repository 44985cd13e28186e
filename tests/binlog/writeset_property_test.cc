// WRITESET dependency tracking, proved by replay: random workloads (hot
// keys, deletes and re-inserts, updates that change the primary or a unique
// key, a table without a primary key, isolated DDL-like statements, history
// overflow, rotations) are written through RowsWriter, their clocks
// assigned by WritesetHistory in log order, and the resulting log is then
// applied in many random orders that its logical clocks allow. Every order
// must apply every row change without error and reach the state that
// applying in log order reaches.
//
// The harness (Log, ApplyInOrder, CheckSchedules) knows nothing of how the
// clocks were computed: it takes (file, last_committed, sequence_number)
// and the row changes of each transaction, so the same check applies to a
// log written by Binlog once it assigns writeset clocks itself.
//
// What "allowed by the logical clock" means (a MySQL replica's
// LOGICAL_CLOCK applier): within a file, a transaction may start once every
// transaction of the file with sequence_number <= its last_committed has
// been applied; a file starts after the previous file is fully applied
// (sequence numbers restart). Transactions are applied atomically in the
// model, which is what a replica's row locks give independent ones.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "binlog/rows.h"
#include "binlog/rows_writer.h"
#include "binlog/transaction.h"
#include "binlog/writeset.h"
#include "gtest/gtest.h"

namespace binlog {
namespace {

// ---------------------------------------------------------------------------
// The model: tables of integer rows, applied as a row-based replica does.

constexpr int64_t kNull = INT64_MIN;
using Row = std::vector<int64_t>;

struct TableModel {
  std::vector<uint32_t> primary_key;               // empty: no primary key
  std::vector<std::vector<uint32_t>> unique_keys;  // NULL parts never clash
};

enum class OpKind { kInsert, kUpdate, kDelete, kAddToColumn };

struct Op {
  int table = 0;
  OpKind kind = OpKind::kInsert;
  Row before;  // kUpdate, kDelete
  Row after;   // kInsert, kUpdate
  uint32_t column = 0;  // kAddToColumn: every row's `column` += 1
};

struct LoggedTxn {
  int file = 0;
  int64_t last_committed = 0;
  int64_t sequence_number = 0;
  std::vector<Op> ops;
};

using Log = std::vector<LoggedTxn>;
using State = std::vector<std::vector<Row>>;  // per table, unordered rows

bool KeyClash(const std::vector<uint32_t>& key, const Row& a, const Row& b) {
  for (uint32_t c : key) {
    if (a[c] == kNull || b[c] == kNull || a[c] != b[c]) return false;
  }
  return true;
}

// Applies one change as a replica would: the before image must match a row
// exactly, and no key may clash. An error string on failure.
std::string ApplyOp(const std::vector<TableModel>& tables, const Op& op,
                    State* state) {
  std::vector<Row>& rows = (*state)[op.table];
  const TableModel& t = tables[op.table];
  auto clashes = [&](const Row& r, size_t skip) -> bool {
    for (size_t i = 0; i < rows.size(); ++i) {
      if (i == skip) continue;
      if (!t.primary_key.empty() && KeyClash(t.primary_key, r, rows[i])) return true;
      for (const auto& k : t.unique_keys) {
        if (KeyClash(k, r, rows[i])) return true;
      }
    }
    return false;
  };
  auto find = [&](const Row& r) -> size_t {
    for (size_t i = 0; i < rows.size(); ++i) {
      if (rows[i] == r) return i;
    }
    return rows.size();
  };
  switch (op.kind) {
    case OpKind::kInsert:
      if (clashes(op.after, rows.size())) return "insert: duplicate key";
      rows.push_back(op.after);
      return "";
    case OpKind::kUpdate: {
      const size_t i = find(op.before);
      if (i == rows.size()) return "update: row not found";
      if (clashes(op.after, i)) return "update: duplicate key";
      rows[i] = op.after;
      return "";
    }
    case OpKind::kDelete: {
      const size_t i = find(op.before);
      if (i == rows.size()) return "delete: row not found";
      rows.erase(rows.begin() + static_cast<std::ptrdiff_t>(i));
      return "";
    }
    case OpKind::kAddToColumn:
      for (Row& r : rows) r[op.column] += 1;
      return "";
  }
  return "unknown op";
}

State Canonical(State s) {
  for (auto& rows : s) std::sort(rows.begin(), rows.end());
  return s;
}

// Applies the whole log in the order `order` (indexes into `log`).
std::string ApplyInOrder(const std::vector<TableModel>& tables, const Log& log,
                         const std::vector<size_t>& order, State* state) {
  for (size_t i : order) {
    for (const Op& op : log[i].ops) {
      std::string e = ApplyOp(tables, op, state);
      if (!e.empty()) {
        return absl::StrCat("file ", log[i].file, " seq ", log[i].sequence_number,
                            " (last_committed ", log[i].last_committed, "): ", e);
      }
    }
  }
  return "";
}

// A random order the logical clocks allow (see the file comment).
std::vector<size_t> RandomSchedule(const Log& log, std::mt19937_64* rng) {
  std::vector<size_t> order;
  order.reserve(log.size());
  size_t begin = 0;
  while (begin < log.size()) {
    size_t end = begin;
    while (end < log.size() && log[end].file == log[begin].file) ++end;
    // Within the file [begin, end): applied[k] for k = seq - 1.
    std::vector<bool> applied(end - begin, false);
    size_t prefix = 0;  // every seq <= prefix is applied
    std::vector<size_t> pending;
    for (size_t i = begin; i < end; ++i) pending.push_back(i);
    while (!pending.empty()) {
      std::vector<size_t> ready;
      for (size_t k = 0; k < pending.size(); ++k) {
        if (log[pending[k]].last_committed <= static_cast<int64_t>(prefix)) {
          ready.push_back(k);
        }
      }
      // The oldest pending transaction is always ready (last_committed <
      // sequence_number), so `ready` is never empty.
      const size_t pick = ready[(*rng)() % ready.size()];
      const size_t i = pending[pick];
      order.push_back(i);
      applied[static_cast<size_t>(log[i].sequence_number - 1)] = true;
      while (prefix < applied.size() && applied[prefix]) ++prefix;
      pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(pick));
    }
    begin = end;
  }
  return order;
}

// Checks the log's own shape, then `schedules` random orders against the
// log order. An empty string when all agree.
std::string CheckSchedules(const std::vector<TableModel>& tables, const Log& log,
                           const State& initial, int schedules, uint64_t seed) {
  for (size_t i = 0; i < log.size(); ++i) {
    const bool first = i == 0 || log[i - 1].file != log[i].file;
    const int64_t want = first ? 1 : log[i - 1].sequence_number + 1;
    if (log[i].sequence_number != want) return absl::StrCat("txn ", i, ": bad sequence_number");
    if (log[i].last_committed < 0 || log[i].last_committed >= log[i].sequence_number) {
      return absl::StrCat("txn ", i, ": last_committed out of range");
    }
  }
  std::vector<size_t> serial(log.size());
  for (size_t i = 0; i < log.size(); ++i) serial[i] = i;
  State expect = initial;
  std::string e = ApplyInOrder(tables, log, serial, &expect);
  if (!e.empty()) return absl::StrCat("log order fails: ", e);
  expect = Canonical(expect);
  std::mt19937_64 rng(seed);
  for (int s = 0; s < schedules; ++s) {
    State got = initial;
    e = ApplyInOrder(tables, log, RandomSchedule(log, &rng), &got);
    if (!e.empty()) return absl::StrCat("schedule ", s, ": ", e);
    if (Canonical(got) != expect) {
      return absl::StrCat("schedule ", s, ": final state differs from log order");
    }
  }
  return "";
}

// How many transactions a replica with unlimited workers applies together
// on average: the log applied in rounds, each round taking every
// transaction the clocks allow at its start (unit time each); transactions
// divided by rounds. A file starts a new round.
double AverageParallelism(const Log& log) {
  if (log.empty()) return 0;
  int64_t rounds = 0;
  size_t begin = 0;
  while (begin < log.size()) {
    size_t end = begin;
    while (end < log.size() && log[end].file == log[begin].file) ++end;
    // round[k]: the round in which seq k + 1 is applied. A transaction runs
    // in the round after every transaction up to its last_committed.
    std::vector<int64_t> round(end - begin, 0);
    int64_t prefix_max = 0;  // latest round among seq 1..k
    std::vector<int64_t> upto(end - begin + 1, 0);  // upto[k]: max round of seq <= k
    for (size_t i = begin; i < end; ++i) {
      const size_t k = static_cast<size_t>(log[i].sequence_number - 1);
      round[k] = upto[static_cast<size_t>(log[i].last_committed)] + 1;
      prefix_max = std::max(prefix_max, round[k]);
      upto[k + 1] = prefix_max;
    }
    rounds += prefix_max;
    begin = end;
  }
  return static_cast<double>(log.size()) / static_cast<double>(rounds);
}

// ---------------------------------------------------------------------------
// The source: a random workload written through RowsWriter, clocks from
// WritesetHistory.

struct WorkloadParams {
  size_t history_size = kDefaultWritesetHistorySize;
  int64_t id_space = 1000;  // primary-key values (small: hot keys)
  int64_t u_space = 1000;   // unique-key values
  int txns = 400;
  int rotate_every = 150;   // a new file after about this many (0: never)
  int statement_per_mille = 15;  // isolated statements touching all rows
  int nopk_per_cent = 15;        // ops on the table without a primary key
  int max_concurrency = 64;      // how far back commit order may reach
};

// Tables: 0 "kv" (id INT PRIMARY KEY, u INT NULL UNIQUE, v INT), 1 "heap"
// (a INT, b INT, no key).
std::vector<TableModel> Models() {
  return {TableModel{{0}, {{1}}}, TableModel{{}, {}}};
}

class Source {
 public:
  Source(const WorkloadParams& p, uint64_t seed)
      : p_(p), rng_(seed), w_(*RowsWriter::Create(RowsWriterOptions())),
        history_(*WritesetHistory::Create(p.history_size)), txn_(false) {
    TableDef kv;
    kv.table_id = 1;
    kv.schema = "db";
    kv.table = "kv";
    kv.columns = {Col(false), Col(true), Col(false)};
    kv.primary_key = {0};
    kv.unique_keys = {KeyDef{{1}, {}}};
    TableDef heap;
    heap.table_id = 2;
    heap.schema = "db";
    heap.table = "heap";
    heap.columns = {Col(false), Col(false)};
    kv_ = *w_.DescribeTable(kv);
    heap_ = *w_.DescribeTable(heap);
    both_[0] = kv_;
    both_[1] = heap_;
    state_.resize(2);
    history_.StartFile();
  }

  Log Run() {
    Log log;
    for (int n = 0; n < p_.txns; ++n) {
      if (p_.rotate_every > 0 && seq_ > 0 && Rand(p_.rotate_every) == 0) {
        ++file_;
        seq_ = 0;
        last_.clear();
        history_.StartFile();
        last_isolated_ = 0;
        last_any_kv_ = 0;
        last_statement_ = 0;
      }
      log.push_back(OneTxn());
    }
    return log;
  }

  // The writeset clock against the commit-order one, summed over the log.
  int64_t writeset_distance() const { return ws_distance_; }
  int64_t commit_order_distance() const { return co_distance_; }
  // Transactions whose writeset clock was below their conflict floor: must
  // stay 0 (checked directly, besides the replay).
  int violations() const { return violations_; }

 private:
  static ColumnDef Col(bool nullable) {
    ColumnDef c;
    c.type = kColLong;
    c.nullable = nullable;
    return c;
  }
  int64_t Rand(int64_t n) { return static_cast<int64_t>(rng_() % static_cast<uint64_t>(n)); }
  static std::vector<Value> Values(const Row& r) {
    std::vector<Value> v;
    for (int64_t x : r) v.push_back(x == kNull ? Value::Null() : Value::Int(x));
    return v;
  }

  // Conflict items: what a locking engine would lock.
  using Item = std::tuple<int, int64_t, int64_t>;
  void Touch(const Op& op, std::set<Item>* items, bool* kv) const {
    if (op.kind == OpKind::kAddToColumn) {
      *kv = true;
      return;
    }
    for (const Row* r : {&op.before, &op.after}) {
      if (r->empty()) continue;
      if (op.table == 0) {
        *kv = true;
        items->insert(Item{0, (*r)[0], 0});
        if ((*r)[1] != kNull) items->insert(Item{1, (*r)[1], 0});
      } else {
        items->insert(Item{2, (*r)[0], (*r)[1]});
      }
    }
  }

  bool FreeId(int64_t id) const {
    for (const Row& r : state_[0]) {
      if (r[0] == id) return false;
    }
    return true;
  }
  bool FreeU(int64_t u) const {
    if (u == kNull) return true;
    for (const Row& r : state_[0]) {
      if (r[1] == u) return false;
    }
    return true;
  }
  int64_t PickU() {
    if (Rand(3) == 0) return kNull;
    for (int tries = 0; tries < 10; ++tries) {
      const int64_t u = Rand(p_.u_space);
      if (FreeU(u)) return u;
    }
    return kNull;
  }

  // One random row change valid on the source's state (applied to it).
  bool RandomOp(Op* op) {
    if (Rand(100) < p_.nopk_per_cent) {
      op->table = 1;
      std::vector<Row>& heap = state_[1];
      const int64_t k = heap.empty() ? 0 : Rand(3);
      Row fresh = {Rand(20), Rand(5)};
      if (k == 0) {
        op->kind = OpKind::kInsert;
        op->after = fresh;
      } else {
        const Row r = heap[static_cast<size_t>(Rand(static_cast<int64_t>(heap.size())))];
        op->before = r;
        if (k == 1) {
          op->kind = OpKind::kDelete;
        } else {
          op->kind = OpKind::kUpdate;
          op->after = fresh;
        }
      }
    } else {
      op->table = 0;
      std::vector<Row>& kv = state_[0];
      const int64_t k = kv.empty() ? 0 : Rand(4);
      if (k == 0) {
        const int64_t id = Rand(p_.id_space);
        if (!FreeId(id)) return false;
        op->kind = OpKind::kInsert;
        op->after = {id, PickU(), Rand(1000)};
      } else {
        const Row r = kv[static_cast<size_t>(Rand(static_cast<int64_t>(kv.size())))];
        op->before = r;
        if (k == 1) {
          op->kind = OpKind::kDelete;
        } else {
          op->kind = OpKind::kUpdate;
          Row a = r;
          a[2] = Rand(1000);
          if (Rand(5) == 0) {  // the primary key changes
            const int64_t id = Rand(p_.id_space);
            if (!FreeId(id)) return false;
            a[0] = id;
          }
          if (Rand(3) == 0) a[1] = PickU();  // the unique key changes
          if (a[1] != r[1] && !FreeU(a[1])) return false;
          op->after = a;
        }
      }
    }
    return ApplyOp(Models(), *op, &state_).empty();
  }

  LoggedTxn OneTxn() {
    LoggedTxn t;
    t.file = file_;
    t.sequence_number = ++seq_;
    txn_.Clear();
    const bool statement = Rand(1000) < p_.statement_per_mille;
    if (statement) {
      Op op;
      op.table = 0;
      op.kind = OpKind::kAddToColumn;
      op.column = 2;
      ApplyOp(Models(), op, &state_);
      t.ops.push_back(op);
      txn_.MarkWritesetUnusable();  // a statement: no writeset
    } else {
      EXPECT_TRUE(w_.BeginStatement(&txn_, 1, {}, both_).ok());
      const int n = 1 + static_cast<int>(Rand(4));
      for (int i = 0; i < n; ++i) {
        Op op;
        if (!RandomOp(&op)) continue;
        const auto table = op.table == 0 ? kv_ : heap_;
        absl::Status s;
        switch (op.kind) {
          case OpKind::kInsert: s = w_.Insert(table, Values(op.after)); break;
          case OpKind::kUpdate:
            s = w_.Update(table, Values(op.before), Values(op.after));
            break;
          case OpKind::kDelete: s = w_.Delete(table, Values(op.before)); break;
          default: break;
        }
        EXPECT_TRUE(s.ok()) << s;
        t.ops.push_back(op);
      }
      EXPECT_TRUE(w_.EndStatement().ok());
    }

    // The conflict floor: the newest transaction of this file this one
    // conflicts with (what a locking engine guarantees commit order
    // covers).
    std::set<Item> items;
    bool kv = false;
    for (const Op& op : t.ops) Touch(op, &items, &kv);
    int64_t floor = 0;
    for (const Item& it : items) {
      auto f = last_.find(it);
      if (f != last_.end()) floor = std::max(floor, f->second);
    }
    if (kv) floor = std::max(floor, last_statement_);
    if (statement) floor = std::max(floor, last_any_kv_);
    floor = std::max(floor, last_isolated_);

    // Commit order: anything from the floor to seq - 1, leaning to the
    // concurrency of a busy server; an isolated statement gets seq - 1.
    int64_t co;
    if (statement) {
      co = t.sequence_number - 1;
    } else {
      const int64_t low = std::max(floor, t.sequence_number - 1 - p_.max_concurrency);
      co = low + Rand(t.sequence_number - low);
    }
    t.last_committed =
        history_.Assign(txn_.writeset(), txn_.writeset_state(), t.sequence_number, co);
    if (t.last_committed < floor) ++violations_;
    ws_distance_ += t.sequence_number - t.last_committed;
    co_distance_ += t.sequence_number - co;

    for (const Item& it : items) last_[it] = t.sequence_number;
    if (kv) last_any_kv_ = t.sequence_number;
    if (statement) {
      last_statement_ = t.sequence_number;
      last_isolated_ = t.sequence_number;
    }
    return t;
  }

  WorkloadParams p_;
  std::mt19937_64 rng_;
  RowsWriter w_;
  RowsWriter::TableHandle kv_ = 0, heap_ = 0;
  RowsWriter::TableHandle both_[2] = {0, 0};
  WritesetHistory history_;
  TransactionBuffer txn_;
  State state_;
  int file_ = 0;
  int64_t seq_ = 0;
  std::map<Item, int64_t> last_;
  int64_t last_isolated_ = 0, last_any_kv_ = 0, last_statement_ = 0;
  int64_t ws_distance_ = 0, co_distance_ = 0;
  int violations_ = 0;
};

struct Case {
  const char* name;
  WorkloadParams p;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class WritesetPropertyTest : public ::testing::TestWithParam<Case> {};

TEST_P(WritesetPropertyTest, EveryAllowedOrderReachesTheLogOrderState) {
  const WorkloadParams& p = GetParam().p;
  int64_t ws = 0, co = 0, n = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    Source src(p, seed);
    const Log log = src.Run();
    ASSERT_EQ(src.violations(), 0) << "seed " << seed;
    const std::string e = CheckSchedules(Models(), log, State(2), 150, seed * 7919);
    ASSERT_EQ(e, "") << "seed " << seed;
    ws += src.writeset_distance();
    co += src.commit_order_distance();
    n += static_cast<int64_t>(log.size());
  }
  // Writeset only ever lowers last_committed.
  EXPECT_GE(ws, co);
  std::printf("%s: mean seq - last_committed: writeset %.1f, commit order %.1f\n",
              GetParam().name, static_cast<double>(ws) / n, static_cast<double>(co) / n);
}

INSTANTIATE_TEST_SUITE_P(
    Workloads, WritesetPropertyTest,
    ::testing::Values(
        Case{"uniform", WorkloadParams{}},
        Case{"hot_keys", [] {
               WorkloadParams p;
               p.id_space = 12;
               p.u_space = 6;
               return p;
             }()},
        Case{"history_overflow", [] {
               WorkloadParams p;
               p.history_size = 7;
               p.id_space = 60;
               return p;
             }()},
        Case{"tiny_history_hot", [] {
               WorkloadParams p;
               p.history_size = 1;
               p.id_space = 8;
               p.u_space = 4;
               return p;
             }()},
        Case{"many_rotations", [] {
               WorkloadParams p;
               p.rotate_every = 12;
               p.id_space = 30;
               return p;
             }()},
        Case{"statements_and_heap", [] {
               WorkloadParams p;
               p.statement_per_mille = 80;
               p.nopk_per_cent = 50;
               p.id_space = 40;
               return p;
             }()},
        Case{"serial_commit_order", [] {
               WorkloadParams p;
               p.max_concurrency = 0;  // commit order alone is serial
               p.id_space = 25;
               return p;
             }()}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

// The parallelism figure for a sysbench-like uniform update workload (one
// row of 100000 updated per transaction, its primary key unchanged) from
// 64 threads: commit order modelled as group commit of 64 (each group's
// last_committed is the previous group's last transaction) against
// writeset on top of it, history 25000, one file. Writeset may only add
// parallelism; the figure is printed.
TEST(WritesetParallelismTest, UniformUpdatesAt64Threads) {
  constexpr int kTxns = 200000;
  constexpr int kGroup = 64;
  std::mt19937_64 rng(42);
  WritesetHistory h = *WritesetHistory::Create();
  h.StartFile();
  const uint64_t seed = WritesetKeySeed("sbtest", "sbtest1", 0);
  Log co(kTxns), ws(kTxns);
  for (int i = 0; i < kTxns; ++i) {
    const int64_t seq = i + 1;
    const int64_t lc = (i / kGroup) * kGroup;  // previous group's last
    const uint64_t id = rng() % 100000;
    co[i].sequence_number = ws[i].sequence_number = seq;
    co[i].last_committed = lc;
    ws[i].last_committed = h.Assign(std::vector<uint64_t>{WritesetMix(seed, id)},
                                    WritesetState::kComplete, seq, lc);
  }
  const double p_co = AverageParallelism(co);
  const double p_ws = AverageParallelism(ws);
  EXPECT_NEAR(p_co, kGroup, 1.0);
  EXPECT_GE(p_ws, p_co);
  std::printf("uniform updates, 64 threads: transactions applied together: "
              "commit order %.1f, writeset %.1f\n", p_co, p_ws);
}

TEST(WritesetParallelismTest, SerialLogHasParallelismOne) {
  Log log(10);
  for (int i = 0; i < 10; ++i) {
    log[i].sequence_number = i + 1;
    log[i].last_committed = i;
  }
  EXPECT_DOUBLE_EQ(AverageParallelism(log), 1.0);
  for (int i = 0; i < 10; ++i) log[i].last_committed = 0;
  EXPECT_DOUBLE_EQ(AverageParallelism(log), 10.0);
}

// The check is sensitive: a clock that ignores conflicts is caught.
TEST(WritesetPropertyHarnessTest, CatchesAClockThatIgnoresConflicts) {
  WorkloadParams p;
  p.id_space = 10;
  p.u_space = 5;
  Source src(p, 3);
  Log log = src.Run();
  for (LoggedTxn& t : log) t.last_committed = 0;
  EXPECT_NE(CheckSchedules(Models(), log, State(2), 150, 1), "");
}

// A history that forgets an update's before image (only after images
// recorded) is caught too: key-changing updates need both.
TEST(WritesetPropertyHarnessTest, CatchesAHistoryWithoutBeforeImages) {
  std::vector<TableModel> tables = {TableModel{{0}, {}}};
  // seq 1 inserts 9 (unrelated); seq 2 moves row 1 to 2; seq 3 inserts 1
  // again: it must wait for seq 2.
  Log log(3);
  for (int i = 0; i < 3; ++i) log[i].sequence_number = i + 1;
  log[0].ops.push_back(Op{0, OpKind::kInsert, {}, {9, 0}, 0});
  log[1].ops.push_back(Op{0, OpKind::kUpdate, {1, 0}, {2, 0}, 0});
  log[2].ops.push_back(Op{0, OpKind::kInsert, {}, {1, 5}, 0});
  State initial(1);
  initial[0].push_back({1, 0});
  const uint64_t s = WritesetKeySeed("db", "t", 0);
  auto key = [&](int64_t id) { return WritesetMix(s, static_cast<uint64_t>(id)); };
  auto run = [&](bool before_images) {
    WritesetHistory h = *WritesetHistory::Create();
    h.StartFile();
    std::vector<std::vector<uint64_t>> ws = {{key(9)}, {key(2)}, {key(1)}};
    if (before_images) ws[1].push_back(key(1));
    for (int i = 0; i < 3; ++i) {
      log[i].last_committed = h.Assign(ws[i], WritesetState::kComplete, i + 1, i);
    }
  };
  run(false);
  EXPECT_EQ(log[2].last_committed, 1);
  EXPECT_NE(CheckSchedules(tables, log, initial, 50, 1), "");
  run(true);
  EXPECT_EQ(log[2].last_committed, 2);
  EXPECT_EQ(CheckSchedules(tables, log, initial, 50, 1), "");
}

}  // namespace
}  // namespace binlog
