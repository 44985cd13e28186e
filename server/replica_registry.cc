// The downstream replicas a Server remembers. See server/replica_registry.h.

#include "server/replica_registry.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace binlog {
namespace server {

std::string ReplicaUuidKey(absl::string_view value) {
  bool plain = !value.empty() && value.size() <= 64 && value != "-";
  for (char c : value) {
    plain = plain && (absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-');
  }
  if (plain || value.empty()) return std::string(value);
  return absl::StrCat("x", absl::BytesToHexString(value.substr(0, 64)));
}

ReplicaRegistry::ReplicaRegistry(ReplicaRegistryOptions options) : o_(std::move(options)) {}

size_t ReplicaRegistry::UuidsOf(uint32_t server_id) const {
  size_t n = 0;
  for (auto it = replicas_.lower_bound(Key(server_id, std::string()));
       it != replicas_.end() && it->first.first == server_id && n < o_.max_uuids_per_server_id;
       ++it) {
    ++n;
  }
  return n;
}

absl::Status ReplicaRegistry::Room(uint32_t server_id,
                                   std::vector<RememberedReplica>* forgotten) {
  auto full = [&] { return replicas_.size() >= o_.max_replicas; };
  auto id_full = [&] { return UuidsOf(server_id) >= o_.max_uuids_per_server_id; };
  if (!full() && !id_full()) return absl::OkStatus();
  std::vector<RememberedReplica> gone = ForgetExpired();
  if (forgotten != nullptr) {
    forgotten->insert(forgotten->end(), std::make_move_iterator(gone.begin()),
                      std::make_move_iterator(gone.end()));
  }
  if (full()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        o_.max_replicas, " replicas (max_replicas) are remembered already"));
  }
  if (id_full()) {
    return absl::ResourceExhaustedError(
        absl::StrCat(o_.max_uuids_per_server_id, " replicas with server_id ", server_id,
                     " (max_replica_uuids_per_server_id) are remembered already"));
  }
  return absl::OkStatus();
}

absl::Status ReplicaRegistry::BeginDump(uint32_t session, uint32_t server_id,
                                        const std::string& uuid,
                                        std::vector<RememberedReplica>* forgotten) {
  Key k(server_id, uuid);
  auto it = replicas_.find(k);
  if (it == replicas_.end()) {
    absl::Status room = Room(server_id, forgotten);
    if (!room.ok()) return room;
    Entry e;
    e.r.server_id = server_id;
    e.r.uuid = uuid;
    it = replicas_.emplace(std::move(k), std::move(e)).first;
  } else if (!it->second.r.connected) {
    idle_.erase({it->second.r.last_active, it->first});
  }
  it->second.r.connected = true;
  it->second.session = session;
  return absl::OkStatus();
}

void ReplicaRegistry::NoteSent(uint32_t session, uint32_t server_id, const std::string& uuid,
                               const std::string& file, uint64_t position) {
  auto it = replicas_.find(Key(server_id, uuid));
  if (it == replicas_.end() || !it->second.r.connected || it->second.session != session) {
    return;  // another dump of the same replica took over
  }
  RememberedReplica& r = it->second.r;
  if (r.file != file) r.file = file;
  r.position = position;
}

void ReplicaRegistry::Disconnect(const Key& k, Entry* e, absl::Time at) {
  e->r.connected = false;
  e->session = 0;
  e->r.last_active = at;
  idle_.emplace(at, k);
}

void ReplicaRegistry::EndDump(uint32_t session, uint32_t server_id, const std::string& uuid) {
  auto it = replicas_.find(Key(server_id, uuid));
  if (it == replicas_.end() || !it->second.r.connected || it->second.session != session) {
    return;
  }
  if (it->second.r.file.empty()) {
    replicas_.erase(it);  // never got a position: nothing to remember
    return;
  }
  Disconnect(it->first, &it->second, Now());
}

bool ReplicaRegistry::Remember(const RememberedReplica& r,
                               std::vector<RememberedReplica>* forgotten) {
  if (r.file.empty()) return false;
  Key k(r.server_id, r.uuid);
  if (replicas_.count(k) != 0 || !Room(r.server_id, forgotten).ok()) return false;
  Entry e;
  e.r = r;
  e.r.connected = false;
  auto it = replicas_.emplace(k, std::move(e)).first;
  const absl::Time now = Now();
  Disconnect(it->first, &it->second,
             r.last_active == absl::InfinitePast() ? now : std::min(r.last_active, now));
  return true;
}

std::vector<RememberedReplica> ReplicaRegistry::ForgetExpired() {
  std::vector<RememberedReplica> out;
  if (o_.expire_after <= absl::ZeroDuration()) return out;
  const absl::Time now = Now();
  while (!idle_.empty() && idle_.begin()->first + o_.expire_after <= now) {
    auto it = replicas_.find(idle_.begin()->second);
    idle_.erase(idle_.begin());
    if (it == replicas_.end()) continue;
    out.push_back(std::move(it->second.r));
    replicas_.erase(it);
  }
  return out;
}

absl::StatusOr<RememberedReplica> ReplicaRegistry::Forget(uint32_t server_id,
                                                          const std::string& uuid) {
  auto it = replicas_.find(Key(server_id, uuid));
  if (it == replicas_.end()) {
    return absl::NotFoundError(absl::StrCat("no replica server_id ", server_id,
                                            uuid.empty() ? "" : " uuid ", uuid,
                                            " is remembered"));
  }
  if (it->second.r.connected) {
    return absl::FailedPreconditionError(absl::StrCat(
        "replica server_id ", server_id, uuid.empty() ? "" : " uuid ", uuid,
        " is dumping: it is forgotten only once disconnected"));
  }
  idle_.erase({it->second.r.last_active, it->first});
  RememberedReplica out = std::move(it->second.r);
  replicas_.erase(it);
  return out;
}

std::vector<RememberedReplica> ReplicaRegistry::List() const {
  std::vector<RememberedReplica> out;
  out.reserve(replicas_.size());
  for (const auto& [k, e] : replicas_) out.push_back(e.r);
  return out;
}

}  // namespace server
}  // namespace binlog
