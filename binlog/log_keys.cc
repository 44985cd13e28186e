// BinlogImpl: master keys of an encrypted log (Options::encryption) and
// their rotation. See binlog/log_impl.h.

#include "binlog/log_impl.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <ctime>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "binlog/checksum.h"
#include "binlog/encryption.h"
#include "binlog/event.h"
#include "binlog/event_builder.h"
#include "binlog/file_recovery.h"
#include "binlog/format.h"
#include "binlog/gtid.h"
#include "binlog/gtid_scan.h"
#include "binlog/index_file.h"
#include "binlog/log_options.h"
#include "binlog/payload.h"
#include "binlog/status_macros.h"
#include "binlog/transaction_boundary.h"
#include "binlog/transaction_spill.h"
#include "binlog/xid_collector.h"
#include "io/preallocator.h"
#include "io/zero_frontier.h"
#include "sync/group_commit.h"
#include "sync/mutex.h"

namespace binlog {
namespace internal {

absl::Status BinlogImpl::UseMasterKey(uint32_t seqno) {
  std::string id = MasterKeyId(options_.server_uuid.ToString(), seqno);
  // A key already there is one an interrupted rotation generated (or the
  // first Open's): use it.
  absl::Status g = options_.keyring->GenerateKey(id);
  if (!g.ok() && !absl::IsAlreadyExists(g)) {
    return absl::Status(g.code(), absl::StrCat("binlog encryption: generating key ",
                                               id, ": ", g.message()));
  }
  auto key = options_.keyring->FetchKey(id);
  if (!key.ok()) {
    return absl::Status(key.status().code(),
                        absl::StrCat("binlog encryption: fetching key ", id,
                                     ": ", key.status().message()));
  }
  if (key->size() != kMasterKeySize) {
    return absl::InvalidArgumentError(absl::StrCat(
        "binlog encryption key ", id, " has ", key->size(), " bytes, not 32"));
  }
  sync::MutexLock l(&key_mu_);
  master_key_id_ = id;
  master_key_ = std::move(*key);
  return absl::OkStatus();
}

absl::Status BinlogImpl::LoadMasterKey() {
  // The key of the newest encrypted file (what the last rotation left),
  // else the first key of this server.
  std::vector<uint64_t> files = live_->Files();
  for (auto it = files.rbegin(); it != files.rend(); ++it) {
    auto h = ReadEncryptionHeader(
        base_fs_, io::JoinPath(dir_, BinlogFileName(basename_, *it)));
    if (absl::IsNotFound(h.status())) continue;
    if (!h.ok()) return h.status();
    uint32_t seqno = MasterKeySeqno(h->key_id);
    if (seqno != 0 &&
        h->key_id == MasterKeyId(options_.server_uuid.ToString(), seqno)) {
      return UseMasterKey(seqno);
    }
    break;  // another server's key: start this server's own sequence
  }
  return UseMasterKey(1);
}

absl::Status BinlogImpl::RotateEncryptionKey() {
  if (!options_.encryption) {
    return absl::FailedPreconditionError(
        "RotateEncryptionKey: the log is not encrypted (Options::encryption)");
  }
  if (closed_.load(std::memory_order_acquire)) {
    return absl::FailedPreconditionError("RotateEncryptionKey after Close");
  }
  sync::MutexLock rl(&key_rotation_mu_);
  uint32_t seqno;
  {
    sync::MutexLock l(&key_mu_);
    seqno = MasterKeySeqno(master_key_id_);
  }
  BINLOG_RETURN_IF_ERROR(UseMasterKey(seqno + 1));
  // New files (from this rotation on) use the new key.
  BINLOG_RETURN_IF_ERROR(Rotate());
  std::string id, key;
  {
    sync::MutexLock l(&key_mu_);
    id = master_key_id_;
    key = master_key_;
  }
  // Then every older file's password is re-encrypted under it, one header
  // (one 512-byte write + fdatasync) at a time. Each file is readable with
  // its old key until its header is replaced, and with the new one after.
  // Under removal_mu_: no purge removes, and no Reset replaces, a file
  // between the read of its header and the write of the new one (a Reset
  // reuses file names: the header of its new file must not get an old
  // file's password).
  sync::MutexLock removal_lock(&removal_mu_);
  for (uint64_t n : live_->Files()) {
    std::string path = io::JoinPath(dir_, BinlogFileName(basename_, n));
    auto h = ReadEncryptionHeader(base_fs_, path);
    if (absl::IsNotFound(h.status())) continue;  // plain, or purged before
    if (!h.ok()) return h.status();
    if (h->key_id == id) continue;
    BINLOG_RETURN_IF_ERROR(
        RewrapFileHeader(base_fs_, path, options_.keyring, id, key));
  }
  return absl::OkStatus();
}

}  // namespace internal
}  // namespace binlog
