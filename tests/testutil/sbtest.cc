#include "tests/testutil/sbtest.h"

namespace binlog {
namespace testutil {

TableDef SbtestTable(uint64_t table_id) {
  TableDef t;
  t.table_id = table_id;
  t.schema = "sbtest";
  t.table = "sbtest1";
  t.metadata = RowMetadata::kMinimal;
  auto col = [](ColumnType type, uint32_t length) {
    ColumnDef c;
    c.type = type;
    c.length = length;
    c.nullable = false;
    c.collation = 255;  // utf8mb4_0900_ai_ci
    return c;
  };
  // CHAR(120) and CHAR(60) utf8mb4: 480 and 240 bytes at most.
  t.columns = {col(kColLong, 0), col(kColLong, 0), col(kColString, 480),
               col(kColString, 240)};
  t.primary_key = {0};
  return t;
}

}  // namespace testutil
}  // namespace binlog
