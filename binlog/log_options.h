// File: binlog/log_options.h (internal)
//
// Option checks and defaults of a Binlog (binlog/options.h): what Open
// validates and fills in before anything touches the disk.

#ifndef BINLOG_BINLOG_LOG_OPTIONS_H_
#define BINLOG_BINLOG_LOG_OPTIONS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "binlog/options.h"
#include "sync/tail_notifier.h"

namespace binlog {
namespace internal {

// The name `<basename>.recovery` records for a sync policy.
const char* SyncPolicyName(SyncPolicy p);

// The readers' wake-up window (TailNotifier) from the options.
sync::TailNotifierOptions WakeOptions(const Options& o);

// InvalidArgument (naming the option) for options Open refuses.
absl::Status ValidateOptions(const std::string& basename, const Options& o);

// Options::server_version when left empty.
std::string DefaultServerVersion(LogFlavor flavor, MySqlLayout layout);

// "8.0.36-log" -> 80036, as MySQL writes immediate_server_version.
uint32_t ServerVersionId(absl::string_view v);

// Options with the flavor's defaults filled in.
Options ResolvedOptions(const Options& options);

}  // namespace internal
}  // namespace binlog

#endif  // BINLOG_BINLOG_LOG_OPTIONS_H_
