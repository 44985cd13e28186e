// Option checks and defaults of a Binlog. See binlog/log_options.h.

#include "binlog/log_options.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "binlog/event.h"
#include "binlog/format.h"
#include "binlog/payload.h"
#include "binlog/status_macros.h"
#include "binlog/transaction.h"

namespace binlog {
namespace internal {

const char* SyncPolicyName(SyncPolicy p) {
  switch (p) {
    case SyncPolicy::kEveryGroup:
      return "every_group";
    case SyncPolicy::kEveryNGroups:
      return "every_n_groups";
    case SyncPolicy::kNever:
      return "never";
  }
  return "unknown";
}

// A widest window below the narrowest is the narrowest (a caller that
// only raised reader_wake_coalesce_us keeps a fixed window).
sync::TailNotifierOptions WakeOptions(const Options& o) {
  sync::TailNotifierOptions w;
  w.min_window = absl::Microseconds(o.reader_wake_coalesce_us);
  w.max_window = absl::Microseconds(
      std::max(o.reader_wake_coalesce_us, o.reader_wake_coalesce_max_us));
  w.wakeups_per_second = o.reader_wakeups_per_second;
  return w;
}

absl::Status ValidateOptions(const std::string& basename, const Options& o) {
  if (basename.empty() || basename.find('/') != std::string::npos ||
      basename == "." || basename == "..") {
    return absl::InvalidArgumentError(absl::StrCat(
        "basename '", basename, "' must be a non-empty file name without '/'"));
  }
  constexpr uint64_t kMaxSize = kMaxFileOffset - (64ull << 20);
  if (o.max_file_size < 4096 || o.max_file_size > kMaxSize) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_file_size ", o.max_file_size, " outside [4096, ", kMaxSize, "]"));
  }
  if (o.transaction_memory_limit < 4096 || o.max_transaction_size > kMaxTransactionSize) {
    return absl::InvalidArgumentError(absl::StrCat(
        "transaction_memory_limit ", o.transaction_memory_limit,
        " must be >= 4096 and max_transaction_size ", o.max_transaction_size,
        " <= ", kMaxTransactionSize));
  }
  if (o.reader_wake_coalesce_us > 100000 ||
      o.reader_wake_coalesce_max_us > 100000) {
    return absl::InvalidArgumentError(absl::StrCat(
        "reader_wake_coalesce_us ", o.reader_wake_coalesce_us,
        " and reader_wake_coalesce_max_us ", o.reader_wake_coalesce_max_us,
        " must be <= 100000"));
  }
  if (o.reader_ring_bytes != 0 &&
      (o.reader_ring_bytes < (64 << 10) || o.reader_ring_bytes > (1ull << 30) ||
       (o.reader_ring_bytes & (o.reader_ring_bytes - 1)) != 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "reader_ring_bytes ", o.reader_ring_bytes,
        " must be 0 or a power of two in [65536, 1073741824]"));
  }
  if (o.sync_policy == SyncPolicy::kEveryNGroups && o.sync_every_n == 0) {
    return absl::InvalidArgumentError("sync_every_n must be >= 1");
  }
  if (o.max_group_bytes < (64 << 10) || o.max_group_bytes > (1ull << 30)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_group_bytes ", o.max_group_bytes, " outside [65536, 1073741824]"));
  }
  if (o.max_unsynced_bytes < o.max_group_bytes ||
      o.max_unsynced_bytes > (1ull << 30)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_unsynced_bytes ", o.max_unsynced_bytes,
        " outside [max_group_bytes (", o.max_group_bytes, "), 1073741824]"));
  }
  if (!ServerVersionHasChecksumAlg(o.server_version) ||
      o.server_version.size() >= kFdeServerVersionLen) {
    return absl::InvalidArgumentError(absl::StrCat(
        "server_version '", o.server_version,
        "' must parse as X.Y.Z >= 5.6.1 and be shorter than 50 bytes"));
  }
  if (o.writeset_history_size < 1 || o.writeset_history_size > kMaxWritesetHistorySize) {
    return absl::InvalidArgumentError(absl::StrCat(
        "writeset_history_size ", o.writeset_history_size, " outside [1, ",
        kMaxWritesetHistorySize, "]"));
  }
  BINLOG_RETURN_IF_ERROR(ValidatePayloadCompression(PayloadCompression{
      o.compression, o.compression_level, o.compression_threshold}));
  if (o.encryption && o.flavor == LogFlavor::kMariaDB) {
    return absl::InvalidArgumentError(
        "encryption is not available for a kMariaDB log: this library writes "
        "MySQL 8.0.14+'s encrypted binlog format, which MariaDB servers and "
        "mariadb-binlog cannot read (MariaDB has its own encrypt_binlog "
        "format)");
  }
  if (o.encryption && o.keyring == nullptr) {
    return absl::InvalidArgumentError("encryption needs Options::keyring");
  }
  if (o.flavor == LogFlavor::kMariaDB && o.compression != io::Codec::kNone) {
    return absl::InvalidArgumentError(
        "compression must be kNone for a kMariaDB log: MariaDB servers and "
        "mariadb-binlog cannot read Transaction_payload events");
  }
  return absl::OkStatus();
}

// Options::server_version when left empty.
std::string DefaultServerVersion(LogFlavor flavor, MySqlLayout layout) {
  if (flavor == LogFlavor::kMariaDB) return "10.11.19-MariaDB-log";
  return layout == MySqlLayout::k84 ? "8.4.6" : "8.0.36";
}

// "8.0.36-log" -> 80036, as MySQL writes immediate_server_version.
uint32_t ServerVersionId(absl::string_view v) {
  int parts[3];
  ParseServerVersion(v, parts);
  return static_cast<uint32_t>(parts[0] * 10000 + parts[1] * 100 + parts[2]);
}

// Options with the flavor's defaults filled in.
Options ResolvedOptions(const Options& options) {
  Options resolved = options;
  if (resolved.server_version.empty()) {
    resolved.server_version = DefaultServerVersion(resolved.flavor, resolved.mysql_layout);
  }
  if (resolved.dependency_tracking == Options::DependencyTracking::kDefault) {
    resolved.dependency_tracking =
        resolved.flavor == LogFlavor::kMySQL && resolved.mysql_layout == MySqlLayout::k84
            ? Options::DependencyTracking::kWriteset
            : Options::DependencyTracking::kCommitOrder;
  }
  return resolved;
}

}  // namespace internal
}  // namespace binlog
