// File: binlog/version.h
//
// The library's version: BINLOG_VERSION_MAJOR / _MINOR / _PATCH for the
// preprocessor (the headers a program was compiled with), and
// binlog::Version() for the library a program runs with (the shared
// library may be a later release of the same major version).
//
// Versions follow semantic versioning, with the shared library's SONAME
// (libbinlog.so.MAJOR) as the ABI promise:
//   - MAJOR changes when a program built against the previous release may
//     no longer compile or link against this one, or when an existing
//     on-disk file would be read differently. This applies before 1.0 too:
//     an incompatible 0.x release is 1.0, never 0.(x+1).
//   - MINOR changes when something is added (API, options, event types
//     read) and nothing is taken away.
//   - PATCH changes for fixes only.
// What is stable (the public headers, the on-disk format) is listed in
// README.md ("Versions and stability"); CHANGELOG.md lists each release.
//
// Thread safety: thread-safe (constants).
// Errors: none.

#ifndef BINLOG_BINLOG_VERSION_H_
#define BINLOG_BINLOG_VERSION_H_

#define BINLOG_VERSION_MAJOR 0
#define BINLOG_VERSION_MINOR 1
#define BINLOG_VERSION_PATCH 0

// "MAJOR.MINOR.PATCH" of the macros above.
#define BINLOG_VERSION_STRING_(a, b, c) #a "." #b "." #c
#define BINLOG_VERSION_STRING_X_(a, b, c) BINLOG_VERSION_STRING_(a, b, c)
#define BINLOG_VERSION_STRING                                      \
  BINLOG_VERSION_STRING_X_(BINLOG_VERSION_MAJOR, BINLOG_VERSION_MINOR, \
                           BINLOG_VERSION_PATCH)

namespace binlog {

// A library version. (The fields avoid the names major/minor, which
// glibc's <sys/sysmacros.h> defines as macros.)
struct LibraryVersion {
  int major_version = 0;
  int minor_version = 0;
  int patch_version = 0;
  // "MAJOR.MINOR.PATCH"; a string literal, valid for the whole program.
  const char* string = "";
};

// The version of the library linked into the program (compiled into the
// library, not the header: a program can compare it with
// BINLOG_VERSION_MAJOR etc. to detect a mismatched shared library).
LibraryVersion Version();

}  // namespace binlog

#endif  // BINLOG_BINLOG_VERSION_H_
