// Server: the registered replicas and where their dumps got to (SHOW
// REPLICAS, the relay's retention; server/replica_registry.h). See
// server/server.h.

#include "server/server.h"

#include <algorithm>
#include <iterator>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace binlog {
namespace server {

namespace {

ReplicaRegistryOptions RegistryOptions(const ServerOptions& o) {
  ReplicaRegistryOptions r;
  r.max_replicas = std::max<size_t>(1, o.max_replicas);
  r.max_uuids_per_server_id = std::max<size_t>(1, o.max_replica_uuids_per_server_id);
  r.expire_after = o.replica_expire_after;
  r.now = o.now;
  return r;
}

// The log line for replicas forgotten (expired) to make room for a new
// one; "" for none.
std::string ForgottenLine(const std::vector<Server::ReplicaPosition>& gone) {
  if (gone.empty()) return std::string();
  constexpr size_t kMaxNames = 10;
  std::string line = absl::StrCat("forgot ", gone.size(),
                                  " replica(s) disconnected longer than replica_expire_after, "
                                  "to make room for a new one:");
  for (size_t i = 0; i < gone.size() && i < kMaxNames; ++i) {
    absl::StrAppend(&line, i == 0 ? " " : ", ", gone[i].server_id,
                    gone[i].uuid.empty() ? "" : " (", gone[i].uuid,
                    gone[i].uuid.empty() ? "" : ")", " at ", gone[i].file, ":",
                    gone[i].position);
  }
  if (gone.size() > kMaxNames) absl::StrAppend(&line, ", ...");
  return line;
}

}  // namespace

Server::Server(const ServerOptions& o) : options_(o), registry_(RegistryOptions(o)) {}

void Server::RegisterReplica(uint32_t session, const ReplicaFacts& r) {
  std::lock_guard<std::mutex> l(mu_);
  for (auto it = replicas_.begin(); it != replicas_.end();) {
    it = it->second.session == session ? replicas_.erase(it) : std::next(it);
  }
  // SHOW REPLICAS only: a registration alone is not remembered (a
  // replica is, from its first dump: BeginReplicaDump).
  replicas_[r.server_id] = Registered{session, r};
}

void Server::UnregisterReplica(uint32_t session) {
  std::lock_guard<std::mutex> l(mu_);
  for (auto it = replicas_.begin(); it != replicas_.end();) {
    it = it->second.session == session ? replicas_.erase(it) : std::next(it);
  }
  dump_files_.erase(session);
  ended_dumps_.erase(session);
}

absl::Status Server::BeginReplicaDump(uint32_t session, uint32_t server_id,
                                      const std::string& uuid, bool remember) {
  std::string line;
  std::vector<ReplicaPosition> forgotten;
  absl::Status s;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (remember) s = registry_.BeginDump(session, server_id, uuid, &forgotten);
    if (s.ok()) {
      // As MySQL's and MariaDB's kill_zombie_dump_threads: the replica
      // reconnected (its old connection may not be known dead yet), or
      // another one uses its server id; mysqlbinlog's id 0 ends nothing.
      if (server_id != 0) {
        for (const auto& [other, id] : dump_ids_) {
          if (id == server_id && other != session) superseded_dumps_.insert(other);
        }
      }
      dump_ids_[session] = server_id;
    } else {
      const absl::Time now = options_.now ? options_.now() : absl::Now();
      if (now - refusal_logged_ >= absl::Minutes(1)) {
        line = absl::StrCat("refused a dump of replica server_id ", server_id,
                            uuid.empty() ? std::string() : absl::StrCat(" (", uuid, ")"), ": ",
                            s.message(), "; remembered replicas are forgotten ",
                            absl::FormatDuration(options_.replica_expire_after),
                            " after their last dump (replica_expire_after)");
        if (refusals_unlogged_ > 0) {
          absl::StrAppend(&line, "; ", refusals_unlogged_, " more refused since the last report");
        }
        refusal_logged_ = now;
        refusals_unlogged_ = 0;
      } else {
        ++refusals_unlogged_;
      }
    }
  }
  if (options_.log) {
    if (!forgotten.empty()) options_.log(ForgottenLine(forgotten));
    if (!line.empty()) options_.log(line);
  }
  return s;
}

void Server::EndReplicaDump(uint32_t session, uint32_t server_id, const std::string& uuid,
                            bool remembered) {
  std::lock_guard<std::mutex> l(mu_);
  if (remembered) registry_.EndDump(session, server_id, uuid);
  dump_ids_.erase(session);
  superseded_dumps_.erase(session);
  // The session is back in its command loop: a forced purge no longer
  // counts it, and its next dump starts afresh.
  dump_files_.erase(session);
  ended_dumps_.erase(session);
}

void Server::NoteSentLocked(uint32_t session, std::optional<uint32_t> registered_id,
                            const std::optional<std::pair<uint32_t, std::string>>& remembered,
                            uint64_t file_no, const std::string& file, uint64_t position) {
  dump_files_[session] = file_no;
  if (remembered.has_value()) {
    registry_.NoteSent(session, remembered->first, remembered->second, file, position);
  }
  if (!registered_id.has_value()) return;
  auto it = replicas_.find(*registered_id);
  if (it == replicas_.end() || it->second.session != session) return;  // replaced
  it->second.facts.sent = true;
  if (it->second.facts.sent_file != file) it->second.facts.sent_file = file;
  it->second.facts.sent_position = position;
}

void Server::NoteDumpFile(uint32_t session, uint64_t file_no) {
  std::lock_guard<std::mutex> l(mu_);
  dump_files_[session] = file_no;
}

std::vector<Server::ReplicaPosition> Server::ReplicaPositions() const {
  std::lock_guard<std::mutex> l(mu_);
  return registry_.List();
}

bool Server::RememberReplica(const ReplicaPosition& r) {
  std::vector<ReplicaPosition> forgotten;
  bool ok;
  {
    std::lock_guard<std::mutex> l(mu_);
    ok = registry_.Remember(r, &forgotten);
  }
  if (!forgotten.empty() && options_.log) options_.log(ForgottenLine(forgotten));
  return ok;
}

absl::Status Server::ForgetReplica(uint32_t server_id, const std::string& uuid) {
  absl::StatusOr<ReplicaPosition> gone;
  {
    std::lock_guard<std::mutex> l(mu_);
    gone = registry_.Forget(server_id, uuid);
  }
  if (!gone.ok()) return gone.status();
  if (options_.log) {
    options_.log(absl::StrCat("forgot replica server_id ", server_id,
                              uuid.empty() ? "" : " (", uuid, uuid.empty() ? "" : ")", " at ",
                              gone->file, ":", gone->position, " (ForgetReplica)"));
  }
  return absl::OkStatus();
}

std::vector<Server::ReplicaPosition> Server::ForgetExpiredReplicas() {
  std::lock_guard<std::mutex> l(mu_);
  return registry_.ForgetExpired();
}

int Server::EndDumpsBefore(uint64_t file_number, const std::string& why) {
  std::lock_guard<std::mutex> l(mu_);
  int n = 0;
  for (const auto& [session, file] : dump_files_) {
    if (file < file_number && ended_dumps_.count(session) == 0) {
      ended_dumps_[session] = why;
      ++n;
    }
  }
  return n;
}

void Server::ReplicaAcked(uint32_t session, uint32_t server_id, const std::string& file,
                          uint64_t position) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = replicas_.find(server_id);
  if (it == replicas_.end() || it->second.session != session) return;  // replaced
  it->second.facts.acked = true;
  it->second.facts.acked_file = file;
  it->second.facts.acked_position = position;
}

}  // namespace server
}  // namespace binlog
