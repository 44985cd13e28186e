// Server: what the connect-time queries report (Facts), the scans of the
// log's state that statements share (StateFacts), the server's counters
// (stats) and its open sockets (Register, Unregister). See server/server.h.

#include <mutex>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/auth.h"
#include "server/log_view.h"
#include "server/server.h"

namespace binlog {
namespace server {

ServerFacts Server::Facts(bool with_state) {
  ServerFacts f;
  f.flavor = flavor_;
  f.server_id = server_id_;
  f.checksums = checksums_;
  f.semisync = options_.acks != nullptr;
  f.version = version_;
  f.port = port_;
  {
    std::lock_guard<std::mutex> l(mu_);
    for (const auto& [id, reg] : replicas_) f.replicas.push_back(reg.facts);
  }
  absl::StatusOr<LogViewState> st = absl::UnavailableError("not read");
  if (with_state) {
    {
      std::lock_guard<std::mutex> l(mu_);
      ++stats_.state_scans;
    }
    if (options_.on_state_scan) options_.on_state_scan();
    st = view_->State(flavor_);
  }
  if (st.ok()) {
    f.gtid_executed = st->executed.ToString();
    f.gtid_purged = st->purged.ToString();
    f.maria_binlog_pos = st->maria_state.ToString();
    f.maria_binlog_state = st->maria_state.StateToString();
    std::vector<Uuid> u = st->executed.Uuids();
    if (u.size() == 1) f.server_uuid = u[0].ToString();
    f.files = std::move(st->files);
    f.current_file = std::move(st->current_file);
    f.current_position = st->current_position;
  }
  if (f.server_uuid.empty()) {
    // A stable made-up UUID derived from the server id.
    f.server_uuid = absl::StrCat("00000000-0000-0000-0000-", absl::Hex(server_id_, absl::kZeroPad12));
  }
  return f;
}

ServerFacts Server::StateFacts() {
  std::unique_lock<std::mutex> l(facts_mu_);
  const uint64_t ticket = ++facts_tickets_;
  bool waited = false;
  while (facts_scanning_ && facts_served_ < ticket) {
    if (!waited) {
      waited = true;
      std::lock_guard<std::mutex> l2(mu_);
      ++stats_.state_waits;
    }
    facts_cv_.wait(l);
  }
  if (facts_served_ >= ticket) return facts_;
  // This scan begins after every statement that has asked so far.
  facts_scanning_ = true;
  const uint64_t covers = facts_tickets_;
  l.unlock();
  ServerFacts f = Facts(true);
  l.lock();
  facts_ = f;
  facts_served_ = covers;
  facts_scanning_ = false;
  facts_cv_.notify_all();
  return f;
}

void Server::Register(io::Socket* s) {
  std::lock_guard<std::mutex> l(mu_);
  open_.insert(s);
  if (shutdown_.load()) s->ShutdownRead();  // Shutdown() ran before: wake now
}

void Server::Unregister(io::Socket* s) {
  std::lock_guard<std::mutex> l(mu_);
  open_.erase(s);
}

ServerStats Server::stats() const {
  ServerStats st;
  {
    std::lock_guard<std::mutex> l(mu_);
    st = stats_;
  }
  st.auth = auth_->stats();
  return st;
}

}  // namespace server
}  // namespace binlog
