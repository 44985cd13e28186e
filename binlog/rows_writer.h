// File: binlog/rows_writer.h
//
// RowsWriter: the row events of a server's row-based logging, written in
// place into a TransactionBuffer at about the cost of a memcpy.
//
// A caller describes each table once (DescribeTable); the writer encodes
// its Table_map body then and keeps it for every later transaction. For
// each statement it then emits, at the statement's first row:
//   - the statement text, when given (MariaDB: Annotate_rows 160; MySQL:
//     Rows_query 29, as binlog_annotate_row_events /
//     binlog_rows_query_log_events would);
//   - the Table_map of every table the statement names (appliers forget
//     table maps at the end of each statement, so every statement that
//     touches a table maps it again: one memcpy of the prepared bytes);
// and appends each row image to the current Rows event in place (MySQL:
// Rows v2, 30-32; MariaDB: v1, 23-25). A new Rows event starts when the
// table, the kind of change or the column bitmaps change, or when the
// row would take the event past `max_event_size` (MySQL's
// binlog_row_event_max_size: an event holds at least one row, however
// large). EndStatement sets STMT_END_F on the statement's last Rows event.
//
// Row images (binlog_row_image): kFull logs every column in both images.
// kMinimal logs the primary key in before images (every column if the
// table has none) and, for an UPDATE, only the changed columns in the
// after image. kNoBlob logs every column but BLOB/TEXT/JSON ones, except
// the primary key's and, in an UPDATE's after image, changed ones. An
// INSERT logs every column in all three modes.
//
// Rows arrive in one of two forms, which give byte-identical events and
// identical writesets for the same rows:
//   - Values (Insert, Update, Delete): one binlog::Value (binlog/rows.h)
//     per column of the table in column order, whatever the image: the
//     writer checks and packs those the image holds and ignores the rest.
//     For tools, tests and callers that do not hold server records.
//   - Server records (InsertRecord, UpdateRecord, DeleteRecord): the
//     table->record[0] a server holds, for tables described with a
//     RecordLayout (binlog/rows_record.h: where each column sits, the
//     supported types and the record forms). DescribeTable compiles a plan
//     per image: adjacent NOT NULL fixed-size columns (integers, DECIMAL,
//     temporal, YEAR, ENUM/SET, BIT, FLOAT/DOUBLE, whose record bytes are
//     their row-image bytes) are one memcpy; only VARCHAR (used length),
//     CHAR (padding trimmed, length added), BLOB/TEXT/JSON/GEOMETRY
//     (pointer followed) and the NULL flags take a step of their own. The
//     key hashes below are read from the same record. An after image with
//     `changed` columns (kMinimal, kNoBlob) compiles its plan per row, into
//     reserved memory.
//
// Writeset (WRITESET dependency tracking, binlog/writeset.h; option
// `writeset`): for each row image it packs (an INSERT's row, an UPDATE's
// before and after images, a DELETE's row) the writer adds to the
// transaction buffer one hash per unique key of the table (the primary key,
// key number 0, then TableDef::unique_keys[i], key number i + 1) whose
// columns are all non-NULL (NULLs never conflict), as MySQL's server does.
// An UPDATE whose after image has the same key value as its before image
// adds that hash once. A row of a table without a primary key marks the
// writeset kMissingKeys (MySQL hashes no key of such a table); a row of a
// TableDef::foreign_key_parent table marks it unusable. The values of
// every key column must therefore be real in every image, whatever the
// row image (for other columns kMinimal may pass anything).
//
// A key hash is WritesetKeySeed(schema, table, key number) mixed
// (WritesetMix) with each key column's canonical value, in key order:
//   integers, ENUM, SET: the stored value (its packed bytes as an integer)
//   FLOAT, DOUBLE: a constant for zero (0 = -0), else the packed bytes
//   DECIMAL: a constant for zero (0 = -0.00), else the packed bytes
//   temporal, YEAR, BIT: the packed bytes
//   strings with the binary collation (63): VARBINARY and BLOB exact,
//     BINARY without trailing 0x00 and spaces; strings with a _bin
//     collation (utf8mb4_bin 46, latin1_bin 47, ascii_bin 65,
//     utf8mb3_bin 83, utf8mb4_0900_bin 309): without trailing spaces;
//     a prefix key takes the first `prefix` bytes first
//   strings with any other collation (case- or accent-insensitive ones,
//     and 0, unknown), JSON, GEOMETRY: a constant. The writer cannot know
//     which strings such a collation calls equal ('a' = 'A ' = 'á' in
//     utf8mb4_0900_ai_ci), so every value of that column is treated as
//     equal: writers of the key's rows are ordered among themselves.
// The canonical forms are never finer than the key's own equality (equal
// keys hash equally); where they are coarser, the replica only loses
// parallelism. A caller writing its own row events adds its own hashes
// (TransactionBuffer::AddWritesetHash), built the same way to agree with
// this writer's.
//
// Thread safety: thread-compatible; one writer per session thread. The
// writer keeps a pointer to the TransactionBuffer of the current statement
// (BeginStatement) until EndStatement.
// Errors: a row that does not fit its table (value count, a value's kind,
// range or length, NULL in a NOT NULL column; a record shorter than its
// layout, a VARCHAR length over the column's, a BLOB length without a
// pointer) is InvalidArgument and leaves the buffer and the writeset as
// they were before the row. A record's fixed-size bytes and its NULL
// flags of NOT NULL columns are not looked at: they are the server's.
// Calls out of order are FailedPrecondition.
// Allocation: none in steady state (the buffer and the writer's scratch
// keep their memory across transactions).

#ifndef BINLOG_BINLOG_ROWS_WRITER_H_
#define BINLOG_BINLOG_ROWS_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "binlog/flavor.h"
#include "binlog/rows.h"
#include "binlog/rows_record.h"
#include "binlog/transaction.h"
#include "binlog/writeset.h"

namespace binlog {

enum class RowImage { kFull, kMinimal, kNoBlob };

struct RowsWriterOptions {
  // The log's flavor (Options::flavor): which Rows and annotation events.
  LogFlavor flavor = LogFlavor::kMySQL;
  uint32_t server_id = 1;
  // binlog_row_event_max_size: the largest Rows event (header, body and
  // footer) the writer grows before starting the next; 256..2^30.
  size_t max_event_size = 8192;
  RowImage row_image = RowImage::kFull;
  // Add each row's key hashes to the transaction's writeset (see above).
  // false: the writer declares nothing (the log falls back to commit
  // order for the transaction unless the caller declares a writeset).
  bool writeset = true;
};

class RowsWriter {
 public:
  // A described table.
  using TableHandle = uint32_t;

  // InvalidArgument from Create for options out of range.
  static absl::StatusOr<RowsWriter> Create(const RowsWriterOptions& options);
  RowsWriter(RowsWriter&&) = default;
  RowsWriter& operator=(RowsWriter&&) = default;

  // Describes a table (its Table_map is encoded now, once). The handle
  // stays valid for the writer's life. InvalidArgument if the description
  // cannot be encoded.
  absl::StatusOr<TableHandle> DescribeTable(const TableDef& def);
  // Describes a table whose rows may also arrive as server records
  // (InsertRecord, UpdateRecord, DeleteRecord): where each column sits in
  // the record (binlog/rows_record.h). The per-image packing plans are
  // compiled now. InvalidArgument if the layout does not fit the table or
  // names a type the record path does not support (rows_record.h).
  absl::StatusOr<TableHandle> DescribeTable(const TableDef& def,
                                            const RecordLayout& layout);
  const TableDef& table(TableHandle t) const { return tables_[t].def; }
  // The prepared Table_map body of `t` (what each statement copies).
  absl::string_view table_map_body(TableHandle t) const {
    return absl::string_view(tables_[t].table_map).substr(kTableMapHead);
  }

  // Starts a statement whose events go to `txn` with header `timestamp`.
  // `query`: the statement text to annotate the rows with (empty: none).
  // `tables`: every table the statement may change; their maps are all
  // written before its first Rows event, as servers do. A table not named
  // here is mapped at its first row if no Rows event of the statement has
  // been written yet, else the row is refused (FailedPrecondition).
  // FailedPrecondition if a statement is open.
  absl::Status BeginStatement(TransactionBuffer* txn, uint32_t timestamp,
                              absl::string_view query = {},
                              absl::Span<const TableHandle> tables = {});

  // One changed row. `changed` (UPDATE, kMinimal/kNoBlob): the columns the
  // statement set, as a bitmap (bit i % 8 of byte i / 8); empty: all.
  absl::Status Insert(TableHandle t, absl::Span<const Value> row);
  absl::Status Update(TableHandle t, absl::Span<const Value> before,
                      absl::Span<const Value> after,
                      absl::Span<const uint8_t> changed = {});
  absl::Status Delete(TableHandle t, absl::Span<const Value> row);

  // The same rows as server records (`record`: at least the layout's
  // record_length bytes; an UPDATE's before image is the server's
  // record[1], its after image record[0]). Same images, events, writeset
  // and errors as the Value calls for the same rows; the bytes of
  // fixed-size columns are taken as they are (unchecked), the lengths of
  // variable ones are checked (InvalidArgument). InvalidArgument if the
  // table was described without a layout. The record, and the bytes its
  // BLOB pointers reach, must not change during the call: the row is
  // sized from them, then copied from them.
  absl::Status InsertRecord(TableHandle t, absl::Span<const uint8_t> record);
  absl::Status UpdateRecord(TableHandle t, absl::Span<const uint8_t> before,
                            absl::Span<const uint8_t> after,
                            absl::Span<const uint8_t> changed = {});
  absl::Status DeleteRecord(TableHandle t, absl::Span<const uint8_t> record);

  // Ends the statement: its last Rows event gets STMT_END_F. A statement
  // without rows writes nothing. FailedPrecondition if no statement is
  // open, or if another event was appended to the buffer after the
  // statement's last Rows event.
  absl::Status EndStatement();

  // Forgets an open statement (for example after the caller discarded the
  // transaction buffer). Descriptions are kept.
  void AbandonStatement() { txn_ = nullptr; }

  const RowsWriterOptions& options() const { return o_; }

 private:
  // How one key column's value enters its key's hash (see the file
  // comment).
  struct KeyPart {
    enum Mode : uint8_t {
      kInteger,      // the stored value masked to its size
      kPacked,       // the packed bytes
      kReal,         // FLOAT/DOUBLE: zero as a constant, else packed
      kDecimal,      // zero as a constant, else packed
      kBytes,        // exact bytes
      kBytesPadded,  // without trailing spaces
      kBytesBinary,  // BINARY: without trailing spaces and 0x00
      kAny,          // a constant
    };
    uint32_t column = 0;
    Mode mode = kAny;
    uint32_t prefix = 0;  // strings: leading bytes hashed (0: all)
    uint64_t mask = 0;    // kInteger
  };
  struct Key {
    uint64_t seed = 0;  // WritesetKeySeed(schema, table, key number)
    std::vector<KeyPart> parts;
  };

  // The event header before a prepared event's body.
  static constexpr size_t kTableMapHead = 19;
  struct Table {
    TableDef def;
    // The Table_map event's header and body, as each statement copies
    // them (TransactionBuffer::AppendPreparedEvent).
    std::string table_map;
    // The head of a Rows event of each kind (RowsKind's order) with the
    // default images' bitmaps: header, post-header, column count and
    // bitmaps, up to the first row.
    std::string rows_head[3];
    std::vector<ColumnCodec> codecs;
    // Columns of each image by default, as bitmaps and index lists.
    std::string all_bits, before_bits;
    std::vector<uint32_t> all_cols, before_cols;
    uint64_t mapped_in = 0;  // statement serial that wrote its Table_map
    // Writeset: the keys to hash, the primary key first.
    std::vector<Key> keys;
    bool has_primary_key = false;
    // The record path (DescribeTable with a layout): each column's record
    // form and the plans of the default images.
    bool has_record = false;
    uint32_t record_length = 0;
    std::vector<record_internal::RecordColumn> rec_cols;
    record_internal::RecordImagePlan all_plan, before_plan;
  };
  struct Image {
    const std::string* bits;
    const std::vector<uint32_t>* cols;
    absl::Span<const Value> values;
  };

  explicit RowsWriter(const RowsWriterOptions& o) : o_(o) {}
  absl::Status Row(TableHandle t, RowsKind kind, const Image& first,
                   const Image& second);
  // True if a row of table `t`, `kind` and these bitmaps belongs in the
  // current Rows event (size aside).
  bool Continues(TableHandle t, RowsKind kind, const std::string* bits1,
                 const std::string* bits2) const;
  // Where a row of `row_size` bytes goes: the end of the current Rows
  // event when it fits there, else (StartRowsEvent) a new one.
  // FailedPrecondition (null) if the table is not mapped in the statement
  // and cannot be now.
  char* RowSpace(TableHandle t, RowsKind kind, const std::string* bits1,
                 const std::string* bits2, size_t row_size);
  // The row's first Rows event (and, at a statement's first row, its
  // annotation and Table_maps); returns where the row goes. Out of line:
  // the common row appends to the current event.
  __attribute__((noinline)) char* StartRowsEvent(TableHandle t, RowsKind kind,
                                                 const std::string* bits1,
                                                 const std::string* bits2,
                                                 size_t row_size);
  __attribute__((noinline)) absl::Status UnmappedError(const Table& tab) const;
  absl::Status RecordRow(TableHandle t, RowsKind kind,
                         absl::Span<const uint8_t> first,
                         absl::Span<const uint8_t> second,
                         absl::Span<const uint8_t> changed);
  __attribute__((noinline)) absl::Status RecordError(const Table& tab,
                                                     uint32_t bad) const;
  __attribute__((noinline)) absl::Status CountError(const Table& tab,
                                                    const Image& first,
                                                    const Image& second,
                                                    bool update) const;
  __attribute__((noinline)) absl::Status ValueError(const Table& tab,
                                                    const Image& im,
                                                    size_t bad) const;
  // Size of one image, or -1 with `*bad` the offending column.
  int64_t ImageSize(const Table& tab, const Image& im, size_t* bad) const;
  char* PackImage(const Table& tab, const Image& im, char* p) const;
  void MapTable(Table* tab);
  uint8_t RowsType(RowsKind kind) const;
  void AfterImage(const Table& tab, absl::Span<const uint8_t> changed,
                  Image* im);
  // Writeset: the hashes of a row's images into txn_.
  void AddWriteset(const Table& tab, absl::Span<const Value> first,
                   absl::Span<const Value> second);
  static absl::Status MakeKeys(const TableDef& def,
                               const std::vector<ColumnCodec>& codecs,
                               std::vector<Key>* keys);

 public:
  // The hash of key `key` (0: the primary key, i + 1: unique_keys[i]) of
  // described table `t` for a row of values (one per column), as the writer
  // adds it; false if a key column is NULL (no hash). For callers that mix
  // their own row events with this writer's, and for tests.
  // REQUIRES: the row was accepted by the writer (its values fit).
  bool KeyHash(TableHandle t, size_t key, absl::Span<const Value> row,
               uint64_t* hash) const {
    return KeyHashOf(tables_[t], tables_[t].keys[key], row, hash);
  }
  size_t key_count(TableHandle t) const { return tables_[t].keys.size(); }
  // The same from a record. REQUIRES: `t` was described with a layout and
  // the record was accepted by the writer.
  bool KeyHashRecord(TableHandle t, size_t key, absl::Span<const uint8_t> record,
                     uint64_t* hash) const {
    return KeyHashOfRecord(tables_[t], tables_[t].keys[key], record.data(), hash);
  }

 private:
  static bool KeyHashOf(const Table& tab, const Key& key,
                        absl::Span<const Value> row, uint64_t* hash);
  static bool KeyHashOfRecord(const Table& tab, const Key& key,
                              const uint8_t* rec, uint64_t* hash);
  void AddWritesetRecord(const Table& tab, const uint8_t* first,
                         const uint8_t* second);

  RowsWriterOptions o_;
  std::vector<Table> tables_;

  // The open statement.
  TransactionBuffer* txn_ = nullptr;
  uint32_t timestamp_ = 0;
  uint64_t statement_ = 0;    // serial of the open statement
  bool annotated_ = false;    // its annotation (if any) is written
  bool rows_written_ = false;  // a Rows event of it exists
  std::string query_;
  std::vector<TableHandle> stmt_tables_;
  // The current Rows event: its index in the buffer, table, kind and the
  // bitmaps it was started with.
  size_t cur_event_ = 0;
  bool cur_open_ = false;
  TableHandle cur_table_ = 0;
  RowsKind cur_kind_ = RowsKind::kWrite;
  std::string cur_bits_[2];
  // The table's own bitmap each was copied from (nullptr: from scratch):
  // the same pointer means the same bits, without comparing them.
  // DescribeTable resets them (tables_ may move).
  const std::string* cur_bits_src_[2] = {nullptr, nullptr};
  bool SameBits(int i, const std::string* bits) const {
    return bits == cur_bits_src_[i] || cur_bits_[i] == *bits;
  }
  // Scratch for an UPDATE's after image with `changed` columns.
  std::string scratch_bits_;
  std::vector<uint32_t> scratch_cols_;
  // The record path: the plan of an after image with `changed` columns.
  record_internal::RecordImagePlan scratch_plan_;
};

}  // namespace binlog

#endif  // BINLOG_BINLOG_ROWS_WRITER_H_
