#include "io/types.h"

namespace binlog {
namespace io {

const char* PreallocModeName(PreallocMode m) {
  switch (m) {
    case PreallocMode::kNone: return "none";
    case PreallocMode::kFallocate: return "fallocate";
    case PreallocMode::kZeroFill: return "zerofill";
  }
  return "none";
}

const char* CodecName(Codec codec) {
  switch (codec) {
    case Codec::kNone: return "none";
    case Codec::kZstd: return "zstd";
    case Codec::kLz4: return "lz4";
  }
  return "unknown";
}

bool ParseCodec(absl::string_view name, Codec* codec) {
  for (Codec c : {Codec::kNone, Codec::kZstd, Codec::kLz4}) {
    if (name == CodecName(c)) {
      *codec = c;
      return true;
    }
  }
  return false;
}

}  // namespace io
}  // namespace binlog
