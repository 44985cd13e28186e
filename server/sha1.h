// File: server/sha1.h
//
// SHA-1 (FIPS 180-4), for mysql_native_password only: the scramble check of
// the replication protocol's handshake needs it and nothing else in the
// project does, so a small local routine is cheaper than a new library
// dependency (OpenSSL is not in the build). Not for anything security
// sensitive beyond what the protocol itself offers.
//
// Thread safety: thread-safe (no shared state).

#ifndef BINLOG_SERVER_SHA1_H_
#define BINLOG_SERVER_SHA1_H_

#include <array>
#include <cstdint>

#include "absl/strings/string_view.h"

namespace binlog {
namespace server {

using Sha1Digest = std::array<uint8_t, 20>;

// The SHA-1 digest of `data`.
Sha1Digest Sha1(absl::string_view data);

}  // namespace server
}  // namespace binlog

#endif  // BINLOG_SERVER_SHA1_H_
