#include "binlog/format.h"

#include <string>

namespace binlog {

const char* EventTypeName(uint8_t type) {
  switch (type) {
    case 0: return "UNKNOWN_EVENT";
    case 1: return "START_EVENT_V3";
    case 2: return "QUERY_EVENT";
    case 3: return "STOP_EVENT";
    case 4: return "ROTATE_EVENT";
    case 5: return "INTVAR_EVENT";
    case 6: return "LOAD_EVENT";
    case 7: return "SLAVE_EVENT";
    case 8: return "CREATE_FILE_EVENT";
    case 9: return "APPEND_BLOCK_EVENT";
    case 10: return "EXEC_LOAD_EVENT";
    case 11: return "DELETE_FILE_EVENT";
    case 12: return "NEW_LOAD_EVENT";
    case 13: return "RAND_EVENT";
    case 14: return "USER_VAR_EVENT";
    case 15: return "FORMAT_DESCRIPTION_EVENT";
    case 16: return "XID_EVENT";
    case 17: return "BEGIN_LOAD_QUERY_EVENT";
    case 18: return "EXECUTE_LOAD_QUERY_EVENT";
    case 19: return "TABLE_MAP_EVENT";
    case 20: return "PRE_GA_WRITE_ROWS_EVENT";
    case 21: return "PRE_GA_UPDATE_ROWS_EVENT";
    case 22: return "PRE_GA_DELETE_ROWS_EVENT";
    case 23: return "WRITE_ROWS_EVENT_V1";
    case 24: return "UPDATE_ROWS_EVENT_V1";
    case 25: return "DELETE_ROWS_EVENT_V1";
    case 26: return "INCIDENT_EVENT";
    case 27: return "HEARTBEAT_LOG_EVENT";
    case 28: return "IGNORABLE_LOG_EVENT";
    case 29: return "ROWS_QUERY_LOG_EVENT";
    case 30: return "WRITE_ROWS_EVENT";
    case 31: return "UPDATE_ROWS_EVENT";
    case 32: return "DELETE_ROWS_EVENT";
    case 33: return "GTID_LOG_EVENT";
    case 34: return "ANONYMOUS_GTID_LOG_EVENT";
    case 35: return "PREVIOUS_GTIDS_LOG_EVENT";
    case 36: return "TRANSACTION_CONTEXT_EVENT";
    case 37: return "VIEW_CHANGE_EVENT";
    case 38: return "XA_PREPARE_LOG_EVENT";
    case 39: return "PARTIAL_UPDATE_ROWS_EVENT";
    case 40: return "TRANSACTION_PAYLOAD_EVENT";
    case 41: return "HEARTBEAT_LOG_EVENT_V2";
    case 42: return "GTID_TAGGED_LOG_EVENT";
    case 160: return "ANNOTATE_ROWS_EVENT";
    case 161: return "BINLOG_CHECKPOINT_EVENT";
    case 162: return "GTID_EVENT";
    case 163: return "GTID_LIST_EVENT";
    case 164: return "START_ENCRYPTION_EVENT";
    case 165: return "QUERY_COMPRESSED_EVENT";
    case 166: return "WRITE_ROWS_COMPRESSED_EVENT_V1";
    case 167: return "UPDATE_ROWS_COMPRESSED_EVENT_V1";
    case 168: return "DELETE_ROWS_COMPRESSED_EVENT_V1";
    case 169: return "WRITE_ROWS_COMPRESSED_EVENT";
    case 170: return "UPDATE_ROWS_COMPRESSED_EVENT";
    case 171: return "DELETE_ROWS_COMPRESSED_EVENT";
    default: {
      // "UNKNOWN_EVENT_<n>", built once for all codes.
      static const std::string* names = [] {
        auto* t = new std::string[256];
        for (int i = 0; i < 256; ++i) t[i] = "UNKNOWN_EVENT_" + std::to_string(i);
        return t;
      }();
      return names[type].c_str();
    }
  }
}

size_t PackedIntSize(uint64_t v) {
  if (v < 251) return 1;
  if (v < (1ull << 16)) return 3;
  if (v < (1ull << 24)) return 4;
  return 9;
}

char* StorePackedInt(char* p, uint64_t v) {
  if (v < 251) {
    *p = static_cast<char>(v);
    return p + 1;
  }
  if (v < (1ull << 16)) {
    *p = static_cast<char>(0xfc);
    StoreLeN(p + 1, v, 2);
    return p + 3;
  }
  if (v < (1ull << 24)) {
    *p = static_cast<char>(0xfd);
    StoreLeN(p + 1, v, 3);
    return p + 4;
  }
  *p = static_cast<char>(0xfe);
  StoreLe64(p + 1, v);
  return p + 9;
}

size_t VarlenSize(uint64_t v) {
  int bits = 0;
  for (uint64_t x = v; x != 0; x >>= 1) ++bits;
  if (bits <= 7) return 1;
  if (bits > 56) return 9;
  return static_cast<size_t>((bits + 6) / 7);
}

char* StoreVarlen(char* p, uint64_t v) {
  const size_t k = VarlenSize(v);
  if (k == 9) {
    *p = static_cast<char>(0xff);
    StoreLe64(p + 1, v);
    return p + 9;
  }
  StoreLeN(p, (v << k) | ((uint64_t{1} << (k - 1)) - 1), k);
  return p + k;
}

}  // namespace binlog
