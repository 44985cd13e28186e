// binlogtool: the operator's inspection tool for MySQL/MariaDB binlog v4
// files (ours and any server's).
//
//   binlogtool list   DIR|FILE...   one line per file: size, events,
//                                   transactions, times, compressed share,
//                                   status
//   binlogtool dump   FILE...|DIR   events as text or JSON lines, with
//                                   decoded fields and, optionally, rows
//   binlogtool verify DIR|FILE...   checksums, structure, transactions,
//                                   torn tails, index; exit 1 on problems
//   binlogtool stats  DIR|FILE...   event types, transactions per second,
//                                   transaction sizes, tables, compression
//   binlogtool follow DIR           tail -f for a binlog directory
//   binlogtool find   DIR|FILE...   where a time or a GTID is
//
// Everything is read through binlog::Reader, which validates each event
// (bounds, log_pos, CRC32) before handing it out, so hostile files reach the
// tool only as DataLoss errors or as events whose checksum is "bad". Event
// bodies are decoded by the library's bounds-checked decoders; tools/ only
// formats what they return.
//
// Exit status: 0 success; 1 damaged data (a DataLoss error, or problems
// found by verify); 2 usage error or I/O error; 3 find found nothing. See
// tools/README.md.

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "binlog/index_file.h"
#include "binlog/keyring.h"
#include "binlog/maria_encryption.h"
#include "binlog/version.h"
#include "tools/commands.h"

namespace binlog {
namespace tools {

int BinlogtoolMain(int argc, char** argv) {
  if (argc < 2) return UsageError("", "missing command");
  absl::string_view command = argv[1];
  if (command == "--version" || command == "version") {
    // The version of the library binlogtool is linked with (the tool is
    // released with the library and has no version of its own).
    Out(absl::StrCat("binlogtool ", Version().string, "\n"));
    return OutFlush() ? kExitOk : kExitUsage;
  }
  if (command == "--help" || command == "-h" || command == "help") {
    if (argc > 2) {
      const char* usage = CommandUsage(argv[2]);
      if (usage == nullptr) {
        return UsageError("", absl::StrCat("unknown command '", argv[2], "'"));
      }
      Out(usage);
    } else {
      Out(kMainUsage);
    }
    return OutFlush() ? kExitOk : kExitUsage;
  }
  if (CommandUsage(command) == nullptr) {
    return UsageError("", absl::StrCat("unknown command '", command, "'"));
  }
  Args args;
  args.command = std::string(command);
  std::string error;
  if (!ParseCommandArgs(argc, argv, CommandFlags(command), &args, &error)) {
    return UsageError(command, error);
  }
  if (args.help) {
    Out(CommandUsage(command));
    return OutFlush() ? kExitOk : kExitUsage;
  }
  io::FileSystem* fs = io::FileSystem::Default();
  // Encrypted files: read through the library's decrypting file system.
  std::unique_ptr<MemoryKeyring> keyring;
  std::unique_ptr<io::FileSystem> decrypting;
  if (args.Has("--keyring_file")) {
    auto k = LoadKeyringFile(fs, args.Get("--keyring_file"));
    if (!k.ok()) {
      Err(absl::StrCat("binlogtool: --keyring_file: ",
                       Printable(k.status().message()), "\n"));
      return kExitUsage;
    }
    keyring = std::move(*k);
    decrypting = NewDecryptingFileSystem(fs, keyring.get());
    fs = decrypting.get();
  }
  if (args.Has("--mariadb_key_file")) {
    // MariaDB-encrypted binlogs: the file_key_management key file.
    auto text = ReadSmallFile(fs, args.Get("--mariadb_key_file"));
    auto keys = text.ok() ? ParseMariaKeyFile(*text)
                          : absl::StatusOr<std::map<uint32_t, std::string>>(
                                text.status());
    if (!keys.ok()) {
      Err(absl::StrCat("binlogtool: --mariadb_key_file: ",
                       Printable(keys.status().message()), "\n"));
      return kExitUsage;
    }
    SetMariaDbKeys(std::move(*keys));
  }
  int rc;
  if (command == "list") {
    rc = RunList(fs, args);
  } else if (command == "dump") {
    rc = RunDump(fs, args);
  } else if (command == "verify") {
    rc = RunVerify(fs, args);
  } else if (command == "stats") {
    rc = RunStats(fs, args);
  } else if (command == "follow") {
    rc = RunFollow(fs, args);
  } else {
    rc = RunFind(fs, args);
  }
  if (!OutFlush()) {
    std::fputs("binlogtool: error writing to stdout\n", stderr);
    return kExitUsage;
  }
  return rc;
}

}  // namespace tools
}  // namespace binlog

int main(int argc, char** argv) {
  return binlog::tools::BinlogtoolMain(argc, argv);
}
