// File: binlog/keyring.h
//
// Keys for binlog encryption at rest (Options::encryption; the file format
// is MySQL 8.0.14+'s, see binlog/FORMAT.md "Encrypted files").
//
// Defines:
//   Keyring               what the server provides: fetch a master key by
//                         id, generate and store a new one
//   MemoryKeyring         a Keyring held in memory (tests, tools)
//   LoadKeyringFile       a MemoryKeyring from a text key file
//   WriteKeyringFile      ... and back, owner-only and synced
//   NewDecryptingFileSystem
//                         a FileSystem through which Reader::OpenFiles and
//                         Reader::OpenDirectory read encrypted binlog files
//
// Master keys are 32 bytes (AES-256). Their ids are MySQL's:
// "MySQLReplicationKey_<server_uuid>_<seqno>", seqno counting from 1; a new
// key is generated at the first encrypted file of a log and at every
// Binlog::RotateEncryptionKey().

#ifndef BINLOG_BINLOG_KEYRING_H_
#define BINLOG_BINLOG_KEYRING_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "io/file_system.h"

namespace binlog {

// Keyring: the server's key store (a keyring component in MySQL terms).
//
// Thread safety: implementations must be thread-safe: the log calls
// FetchKey from committing threads (rotation), readers' threads (opening a
// file) and Open; GenerateKey from Open and RotateEncryptionKey.
// Errors: FetchKey returns NotFound for an id that holds no key, and any
// other error for a keyring that cannot answer (the log passes it on:
// Open fails, a rotation poisons the log, a reader's Next fails). A key of
// another length than 32 bytes is refused by the log (InvalidArgument).
// Lifetime: must outlive the Binlog, its readers and any FileSystem from
// NewDecryptingFileSystem.
class Keyring {
 public:
  virtual ~Keyring() = default;

  // The 32 key bytes stored under `key_id`.
  virtual absl::StatusOr<std::string> FetchKey(const std::string& key_id) = 0;

  // Generates 32 random bytes, stores them under `key_id` and makes them
  // durable in the keyring before returning. AlreadyExists if `key_id`
  // already holds a key (the log then fetches and uses that key: it is
  // what an interrupted key rotation left).
  virtual absl::Status GenerateKey(const std::string& key_id) = 0;
};

// MemoryKeyring: keys in a map. Thread-safe. GenerateKey draws from
// OpenSSL's RAND_bytes. Nothing is persisted: a server needs a real keyring.
class MemoryKeyring : public Keyring {
 public:
  absl::StatusOr<std::string> FetchKey(const std::string& key_id) override;
  absl::Status GenerateKey(const std::string& key_id) override;
  // Stores `key` (32 bytes, else InvalidArgument) under `key_id`,
  // replacing any key there.
  absl::Status AddKey(const std::string& key_id, const std::string& key);
  // Removes the key; NotFound if there is none.
  absl::Status RemoveKey(const std::string& key_id);
  // Every key, for writing a key file ("key_id hexkey" lines).
  std::map<std::string, std::string> keys() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::string> keys_;
};

// Reads a key file: one key per line, "<key_id> <64 hex digits>", blank
// lines and lines starting with '#' ignored. Errors: the file system's
// (NotFound for a missing file); FailedPrecondition for a file other users
// may read or write (any of the mode bits 0007: its keys decrypt the
// log); InvalidArgument naming the line for a malformed one or a
// repeated id.
absl::StatusOr<std::unique_ptr<MemoryKeyring>> LoadKeyringFile(
    io::FileSystem* fs, const std::string& path);

// The key file text of `keyring` (the format LoadKeyringFile reads).
std::string KeyringFileText(const MemoryKeyring& keyring);

// Writes KeyringFileText(keyring) to `path` (fs nullptr: POSIX) as a new
// file readable and writable by its owner alone (0600, before the umask),
// replacing any file there: a temporary "<path>.tmp", fdatasync, rename,
// directory fsync, so on return the keys are durable and a crash leaves
// the old file or the new one. Errors: the file system's.
absl::Status WriteKeyringFile(io::FileSystem* fs, const std::string& path,
                              const MemoryKeyring& keyring);

// A FileSystem that forwards to `base` and makes encrypted binlog files
// (names ending in ".NNNNNN", starting with the encrypted-binlog magic
// fd 62 69 6e) read as their plain form: offsets and sizes exclude the
// 512-byte encryption header, the bytes are decrypted as read, and the
// raw zeros of preallocated space read as zeros, as in a plain file.
// Plain files read as they are. Opening an encrypted file whose key the
// keyring lacks fails with the keyring's error (NotFound names the key
// id). Writes to encrypted files are encrypted at their stream offset.
// The GTID index files of an encrypted file (`<file>.gidx*`, FORMAT.md
// "GTID index files") are refused (FailedPrecondition on open): the GTID
// readers at rest neither build, load nor write one for it (its GTID
// states would be in clear); plain files keep theirs.
// Thread-safe. `base` and `keyring` must outlive it.
std::unique_ptr<io::FileSystem> NewDecryptingFileSystem(io::FileSystem* base,
                                                        Keyring* keyring);

}  // namespace binlog

#endif  // BINLOG_BINLOG_KEYRING_H_
