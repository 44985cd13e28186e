// File: tools/commands.h
//
// binlogtool's commands. Each Run* function takes the parsed command line
// and returns the process exit status (tools/cli.h); output goes through
// Out()/Err(). Usage texts and the flags each command accepts are in
// usage.cc, the commands in cmd_*.cc, main() in binlogtool.cc.

#ifndef BINLOG_TOOLS_COMMANDS_H_
#define BINLOG_TOOLS_COMMANDS_H_

#include <vector>

#include "absl/strings/string_view.h"
#include "io/file_system.h"
#include "tools/cli.h"

namespace binlog {
namespace tools {

extern const char kMainUsage[];

// The --help text of `command`, or nullptr for an unknown command.
const char* CommandUsage(absl::string_view command);
// The flags `command` accepts.
std::vector<FlagSpec> CommandFlags(absl::string_view command);
// Prints "binlogtool: MESSAGE" and the command's usage on stderr; returns
// kExitUsage.
int UsageError(absl::string_view command, absl::string_view message);

int RunList(io::FileSystem* fs, const Args& args);
int RunDump(io::FileSystem* fs, const Args& args);
int RunVerify(io::FileSystem* fs, const Args& args);
int RunStats(io::FileSystem* fs, const Args& args);
int RunFollow(io::FileSystem* fs, const Args& args);
int RunFind(io::FileSystem* fs, const Args& args);

// binlogtool's main, callable in-process (tests, fuzzers).
int BinlogtoolMain(int argc, char** argv);

}  // namespace tools
}  // namespace binlog

#endif  // BINLOG_TOOLS_COMMANDS_H_
