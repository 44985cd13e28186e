// libFuzzer target: binlogtool's dump path, in process. Exec'ing the binary per input would be far too slow, and the
// dump code (event details, the text and JSON printers) lives in
// tools/binlogtool.cc, not in a library; build_fuzzers.sh compiles that
// file with -Dmain=binlogtool_main so its real main runs here, on a file
// holding the input: `dump --format=jsonl` and `dump --format=text`. That
// covers the Reader in binlogtool's settings (checksums reported, payloads
// decoded), FileWalker, the library's event and row decoders, the
// printers and tools/output's escaping.
//
// stdout and stderr (the FILE* streams binlogtool writes with) go to
// /dev/null; sanitizer and libFuzzer reports use file descriptor 2 directly
// (libFuzzer took its own FILE* before this runs), so they still show.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/fuzz/fuzz_util.h"

int binlogtool_main(int argc, char** argv);

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  FILE* null_out = std::fopen("/dev/null", "w");
  if (null_out == nullptr) std::abort();
  stdout = null_out;
  if (std::getenv("BINLOG_FUZZ_SHOW_STDERR") == nullptr) stderr = null_out;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path =
      binlog::fuzz::ScratchDir() + "/dump.000001";
  binlog::fuzz::WriteWholeFile(path, data, size);
  const char* commands[][3] = {
      {"dump", "--format=jsonl", nullptr},
      {"dump", "--format=text", nullptr},
  };
  for (auto& c : commands) {
    std::string args[4] = {"binlogtool"};
    int argc = 1;
    for (const char* a : c) {
      if (a != nullptr) args[argc++] = a;
    }
    args[argc++] = path;
    char* argv[5];
    for (int i = 0; i < argc; ++i) argv[i] = args[i].data();
    argv[argc] = nullptr;
    int rc = binlogtool_main(argc, argv);
    // The exit statuses dump documents (tools/cli.h): 0 OK, 1 damaged
    // input, 2 usage or I/O error, 4 a format the library does not read
    // (e.g. a Start_v3 file). 3 belongs to find; anything else is a defect.
    if (rc != 0 && rc != 1 && rc != 2 && rc != 4) std::abort();
  }
  return 0;
}
