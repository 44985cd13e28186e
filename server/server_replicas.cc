// Server: the registered replicas and where their dumps got to (SHOW
// REPLICAS, the relay's retention). See server/server.h.

#include "server/server.h"

#include <iterator>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace binlog {
namespace server {

void Server::RegisterReplica(uint32_t session, const ReplicaFacts& r) {
  std::lock_guard<std::mutex> l(mu_);
  for (auto it = replicas_.begin(); it != replicas_.end();) {
    if (it->second.session == session) {
      positions_[it->first].connected = false;
      it = replicas_.erase(it);
    } else {
      it = std::next(it);
    }
  }
  replicas_[r.server_id] = Registered{session, r};
  // A replica seen before keeps its position until its new dump sends.
  ReplicaPosition& p = positions_[r.server_id];
  p.server_id = r.server_id;
  p.connected = true;
}

void Server::UnregisterReplica(uint32_t session) {
  std::lock_guard<std::mutex> l(mu_);
  for (auto it = replicas_.begin(); it != replicas_.end();) {
    if (it->second.session == session) {
      positions_[it->first].connected = false;
      it = replicas_.erase(it);
    } else {
      it = std::next(it);
    }
  }
  dump_files_.erase(session);
  ended_dumps_.erase(session);
}

void Server::NoteSentLocked(uint32_t session, std::optional<uint32_t> server_id,
                            uint64_t file_no, const std::string& file, uint64_t position) {
  dump_files_[session] = file_no;
  if (!server_id.has_value()) return;
  auto it = replicas_.find(*server_id);
  if (it == replicas_.end() || it->second.session != session) return;  // replaced
  it->second.facts.sent = true;
  if (it->second.facts.sent_file != file) it->second.facts.sent_file = file;
  it->second.facts.sent_position = position;
  ReplicaPosition& p = positions_[*server_id];
  if (p.file != file) p.file = file;
  p.position = position;
}

void Server::NoteDumpFile(uint32_t session, uint64_t file_no) {
  std::lock_guard<std::mutex> l(mu_);
  dump_files_[session] = file_no;
}

std::vector<Server::ReplicaPosition> Server::ReplicaPositions() const {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<ReplicaPosition> out;
  for (const auto& [id, p] : positions_) out.push_back(p);
  return out;
}

void Server::RememberReplica(uint32_t server_id, const std::string& file, uint64_t position) {
  std::lock_guard<std::mutex> l(mu_);
  if (positions_.count(server_id) != 0) return;
  ReplicaPosition& p = positions_[server_id];
  p.server_id = server_id;
  p.connected = false;
  p.file = file;
  p.position = position;
}

bool Server::ForgetReplica(uint32_t server_id) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = positions_.find(server_id);
  if (it == positions_.end() || it->second.connected) return false;
  positions_.erase(it);
  return true;
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
