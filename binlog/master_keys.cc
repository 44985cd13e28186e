// Master keys of an encrypted log. See binlog/master_keys.h.

#include "binlog/master_keys.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "binlog/encryption.h"

namespace binlog {
namespace internal {

absl::Status MasterKeys::Use(uint32_t seqno) {
  std::string id = MasterKeyId(server_uuid_, seqno);
  // A key already there is one an interrupted rotation generated (or the
  // first Open's): use it.
  absl::Status g = keyring_->GenerateKey(id);
  if (!g.ok() && !absl::IsAlreadyExists(g)) {
    return absl::Status(g.code(), absl::StrCat("binlog encryption: generating key ",
                                               id, ": ", g.message()));
  }
  auto key = keyring_->FetchKey(id);
  if (!key.ok()) {
    return absl::Status(key.status().code(),
                        absl::StrCat("binlog encryption: fetching key ", id,
                                     ": ", key.status().message()));
  }
  if (key->size() != kMasterKeySize) {
    return absl::InvalidArgumentError(absl::StrCat(
        "binlog encryption key ", id, " has ", key->size(), " bytes, not 32"));
  }
  sync::MutexLock l(&mu_);
  id_ = id;
  key_ = std::move(*key);
  return absl::OkStatus();
}

absl::Status MasterKeys::LoadNewest(io::FileSystem* fs,
                                    const std::vector<std::string>& paths) {
  // The key of the newest encrypted file (what the last rotation left),
  // else the first key of this server.
  for (auto it = paths.rbegin(); it != paths.rend(); ++it) {
    auto h = ReadEncryptionHeader(fs, *it);
    if (absl::IsNotFound(h.status())) continue;
    if (!h.ok()) return h.status();
    uint32_t seqno = MasterKeySeqno(h->key_id);
    if (seqno != 0 && h->key_id == MasterKeyId(server_uuid_, seqno)) {
      return Use(seqno);
    }
    break;  // another server's key: start this server's own sequence
  }
  return Use(1);
}

uint32_t MasterKeys::seqno() const {
  sync::MutexLock l(&mu_);
  return MasterKeySeqno(id_);
}

void MasterKeys::Current(std::string* id, std::string* key) const {
  sync::MutexLock l(&mu_);
  *id = id_;
  *key = key_;
}

}  // namespace internal
}  // namespace binlog
