#include "binlog/version.h"

namespace binlog {

LibraryVersion Version() {
  LibraryVersion v;
  v.major_version = BINLOG_VERSION_MAJOR;
  v.minor_version = BINLOG_VERSION_MINOR;
  v.patch_version = BINLOG_VERSION_PATCH;
  v.string = BINLOG_VERSION_STRING;
  return v;
}

}  // namespace binlog
