// File: server/replica_registry.h
//
// ReplicaRegistry: the downstream replicas a Server remembers and where
// each one's dumps got to (Server::ReplicaPositions), which a retention
// policy of the log follows (server/copy_retention.h): a file a remembered
// replica has not read past is not purged.
//
// Who is remembered, and for how long (what a replication account can and
// cannot make the server hold):
//   - A replica is remembered from its first dump (COM_BINLOG_DUMP or
//     COM_BINLOG_DUMP_GTID, BeginDump), never from COM_REGISTER_SLAVE
//     alone: registering ids costs the server nothing.
//   - A replica is a server id AND the UUID it set in @replica_uuid /
//     @slave_uuid before its dump ("" when it set none, as MariaDB
//     replicas: then the server id alone). A dump under another UUID with
//     the same server id is another replica: it never moves the first
//     one's remembered position, which holds its files until it expires.
//   - Its position is the end of the last event its dump sent (NoteSent);
//     a replica without one yet holds nothing, and one whose dump ends
//     before it got one is forgotten at once.
//   - A replica that is not dumping (disconnected) is forgotten, and holds
//     nothing, once `expire_after` has passed since its last activity (the
//     end of its last dump, or when it was restored), on the local clock
//     `now` (ForgetExpired; also done when a new replica needs room).
//   - At most `max_replicas` are remembered, and at most
//     `max_uuids_per_server_id` of them with one server id (so a
//     replication account dumping under one server id with a new
//     @replica_uuid each time holds at most that many). A new replica
//     beyond either cap is refused (BeginDump: ResourceExhausted) rather
//     than a remembered one forgotten to make room: a replica with a
//     position is dropped only by expiry or by an operator (Forget).
// Costs: every operation is O(log n) in the replicas remembered (an
// ordered map by (server id, UUID), and an ordered set of the
// disconnected ones by last activity), ForgetExpired O(log n) per replica
// forgotten, List O(n).
//
// Thread safety: not thread-safe; the Server calls it under its mutex.

#ifndef BINLOG_SERVER_REPLICA_REGISTRY_H_
#define BINLOG_SERVER_REPLICA_REGISTRY_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace binlog {
namespace server {

struct ReplicaRegistryOptions {
  // How many replicas are remembered at most (>= 1).
  size_t max_replicas = 1000;
  // How many replicas with the same server id (and different UUIDs) are
  // remembered at most (>= 1).
  size_t max_uuids_per_server_id = 4;
  // A disconnected replica is forgotten this long after its last
  // activity. Zero: never.
  absl::Duration expire_after = absl::Hours(7 * 24);
  // The clock activity is measured with; nullptr: absl::Now().
  std::function<absl::Time()> now;
};

// One remembered replica.
struct RememberedReplica {
  uint32_t server_id = 0;
  std::string uuid;        // @replica_uuid / @slave_uuid; "" when not set
  bool connected = false;  // a dump of it is in progress
  // The end of the last event its dump sent; "" before the first.
  std::string file;
  uint64_t position = 0;
  // Disconnected: when its last dump ended (or when it was restored).
  absl::Time last_active = absl::InfinitePast();
};

// The UUID a replica is remembered by, from what it set in
// @replica_uuid / @slave_uuid (any bytes a session chose): the value
// itself if it is 1 to 64 letters, digits and '-' (a UUID's text; not "-"
// alone), else "x" and the hex of its first 64 bytes. So it is one token
// of printable characters wherever it is written (the replicas file, log
// lines), and the same value gives the same key.
std::string ReplicaUuidKey(absl::string_view value);

class ReplicaRegistry {
 public:
  explicit ReplicaRegistry(ReplicaRegistryOptions options);

  // A dump of `session` begins for the replica (server_id, uuid): it is
  // remembered, as connected, and `session` is the one whose NoteSent
  // moves its position (a dump of another session for the same replica
  // stops counting). A replica not remembered yet needs room: expired
  // replicas are forgotten first (appended to *forgotten if not null);
  // ResourceExhausted if max_replicas are still remembered, or
  // max_uuids_per_server_id with its server id (nothing else changes).
  absl::Status BeginDump(uint32_t session, uint32_t server_id, const std::string& uuid,
                         std::vector<RememberedReplica>* forgotten = nullptr);
  // The dump of `session` sent up to file:position. Ignored unless
  // `session` is the replica's current dump.
  void NoteSent(uint32_t session, uint32_t server_id, const std::string& uuid,
                const std::string& file, uint64_t position);
  // The dump of `session` ended: the replica is disconnected from now on
  // (its expiry counts from now), or forgotten if it has no position.
  // Ignored unless `session` is the replica's current dump.
  void EndDump(uint32_t session, uint32_t server_id, const std::string& uuid);

  // Remembers a disconnected replica (a retention policy restoring what it
  // saved before a restart), active at r.last_active (at most now;
  // InfinitePast: now). false
  // (nothing changes) for a replica already remembered, one without a
  // position, or no room (after forgetting the expired ones, appended to
  // *forgotten if not null; both caps apply).
  bool Remember(const RememberedReplica& r,
                std::vector<RememberedReplica>* forgotten = nullptr);

  // Forgets the replica (server_id, uuid) at once (an operator's choice:
  // it holds nothing from now on); returns what was remembered of it.
  // NotFound if it is not remembered; FailedPrecondition while a dump of
  // it is in progress (its files stay held while it reads them).
  absl::StatusOr<RememberedReplica> Forget(uint32_t server_id, const std::string& uuid);

  // Forgets the disconnected replicas inactive for expire_after or more;
  // returns them (oldest activity first).
  std::vector<RememberedReplica> ForgetExpired();

  // Every remembered replica, by server id, then UUID.
  std::vector<RememberedReplica> List() const;
  size_t size() const { return replicas_.size(); }
  const ReplicaRegistryOptions& options() const { return o_; }

 private:
  using Key = std::pair<uint32_t, std::string>;  // server id, UUID
  struct Entry {
    RememberedReplica r;
    uint32_t session = 0;  // the current dump's session (connected)
  };
  absl::Time Now() const { return o_.now ? o_.now() : absl::Now(); }
  // Makes room for one more with `server_id`: forgets expired replicas
  // (appended to *forgotten if not null); ResourceExhausted if full.
  absl::Status Room(uint32_t server_id, std::vector<RememberedReplica>* forgotten);
  // How many replicas with `server_id` are remembered, counting up to
  // max_uuids_per_server_id at most.
  size_t UuidsOf(uint32_t server_id) const;
  void Disconnect(const Key& k, Entry* e, absl::Time at);

  const ReplicaRegistryOptions o_;
  std::map<Key, Entry> replicas_;
  // The disconnected replicas, by last activity (expiry order).
  std::set<std::pair<absl::Time, Key>> idle_;
};

}  // namespace server
}  // namespace binlog

#endif  // BINLOG_SERVER_REPLICA_REGISTRY_H_
