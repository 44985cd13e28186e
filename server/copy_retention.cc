// Retention of a relay's copy. See server/copy_retention.h.

#include "server/copy_retention.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "binlog/format.h"
#include "binlog/index_file.h"
#include "binlog/position_store.h"
#include "io/file_system.h"

namespace binlog {
namespace server {

namespace {

using Files = std::vector<MirrorLog::FileFacts>;

// The index of the first file a limit keeps: the files before it are
// older than `age`, or must go for the rest to hold at most `total`
// bytes. Never past the last file.
size_t FirstKept(const Files& files, absl::Time now, absl::Duration age, uint64_t total) {
  const size_t last = files.size() - 1;
  size_t keep = 0;
  if (age > absl::ZeroDuration()) {
    // Ends at a young file: ages run from the local close time (the last
    // file, never closed, never ages), not from the source's timestamps.
    while (keep < last && files[keep].closed_at + age <= now) {
      ++keep;
    }
  }
  if (total > 0) {
    uint64_t sum = 0;
    for (const auto& f : files) sum += f.size;
    size_t i = 0;
    while (i < last && sum > total) sum -= files[i++].size;
    keep = std::max(keep, i);
  }
  return keep;
}

// A consumer and the file it holds from (every file from it on stays).
struct Holder {
  size_t replica = 0;   // 1 + its index in the pass's replicas; 0: a named consumer
  std::string who;      // a named consumer: "consumer name at f"
  uint64_t number = 0;  // 0: holds every file
  size_t kept = 0;      // the index of the first file it keeps
};

// The most consumers a log line names (the rest are counted).
constexpr size_t kMaxNamesLogged = 20;

}  // namespace

absl::StatusOr<std::unique_ptr<CopyRetention>> CopyRetention::Create(
    MirrorLog* mirror, Server* server, CopyRetentionOptions options) {
  if (mirror == nullptr || options.basename.empty()) {
    return absl::InvalidArgumentError("CopyRetention needs the copy and its basename");
  }
  if (options.expire_after < absl::ZeroDuration() ||
      options.force_purge_after < absl::ZeroDuration() ||
      options.interval <= absl::ZeroDuration() ||
      options.startup_grace < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "CopyRetention: ages must be >= 0 and the interval > 0");
  }
  // A consumer whose store is missing is a mistake to report now (a
  // wrong path would hold every file for good); one that goes missing
  // later holds every file, and each pass says so.
  for (const auto& [name, path] : options.consumers) {
    absl::StatusOr<ReplicaPosition> p = PositionStore::ReadDurable(path, options.file_system);
    if (absl::IsNotFound(p.status())) {
      return absl::NotFoundError(absl::StrCat("consumer ", name, ": no position store at ", path,
                                              " (the consumer creates it; the relay only "
                                              "reads it)"));
    }
  }
  std::unique_ptr<CopyRetention> r(new CopyRetention(mirror, server, std::move(options)));
  r->created_ = r->o_.now ? r->o_.now() : absl::Now();
  if (!r->o_.replicas_file.empty()) {
    absl::Status s = r->LoadReplicas();
    if (!s.ok()) return s;
  }
  return r;
}

namespace {
constexpr char kReplicasHeaderV1[] = "binlog-relay-replicas 1";
constexpr char kReplicasHeader[] = "binlog-relay-replicas 2";
}  // namespace

absl::Status CopyRetention::LoadReplicas() {
  io::FileSystem* fs = io::FileSystem::Default();
  absl::StatusOr<std::string> text = ReadSmallFile(fs, o_.replicas_file, 16 << 20);
  if (absl::IsNotFound(text.status())) return absl::OkStatus();
  if (!text.ok()) return text.status();
  std::vector<absl::string_view> lines = absl::StrSplit(*text, '\n', absl::SkipEmpty());
  if (lines.empty() || (lines[0] != kReplicasHeader && lines[0] != kReplicasHeaderV1)) {
    return absl::DataLossError(absl::StrCat(o_.replicas_file, ": not a replicas file"));
  }
  const bool v1 = lines[0] == kReplicasHeaderV1;
  std::vector<Server::ReplicaPosition> restored;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<absl::string_view> f = absl::StrSplit(lines[i], ' ');
    Server::ReplicaPosition p;
    int64_t active = 0;
    bool ok = f.size() == (v1 ? 4u : 6u) && f[0] == "replica" &&
              absl::SimpleAtoi(f[1], &p.server_id);
    if (ok && v1) {
      p.file = std::string(f[2]);
      ok = absl::SimpleAtoi(f[3], &p.position);
    } else if (ok) {
      if (f[2] != "-") p.uuid = std::string(f[2]);
      p.file = std::string(f[3]);
      ok = absl::SimpleAtoi(f[4], &p.position) &&
           (f[5] == "-" || absl::SimpleAtoi(f[5], &active));
      // Connected when saved ("-"): active now.
      if (ok && f[5] != "-") p.last_active = absl::FromUnixSeconds(active);
    }
    if (!ok || p.file.empty()) {
      return absl::DataLossError(
          absl::StrCat(o_.replicas_file, ": bad line ", i + 1, ": '", lines[i], "'"));
    }
    restored.push_back(std::move(p));
  }
  // The caps (max_replicas, max_replica_uuids_per_server_id) may be lower
  // than when the file was saved: the replicas connected then, then the
  // most recently active, are restored first, so the caps drop the oldest.
  std::stable_sort(restored.begin(), restored.end(),
                   [](const Server::ReplicaPosition& a, const Server::ReplicaPosition& b) {
                     const bool ac = a.last_active == absl::InfinitePast();
                     const bool bc = b.last_active == absl::InfinitePast();
                     if (ac != bc) return ac;
                     return a.last_active > b.last_active;
                   });
  std::vector<std::string> refused;
  for (const Server::ReplicaPosition& p : restored) {
    if (server_ != nullptr && !server_->RememberReplica(p)) {
      refused.push_back(absl::StrCat(p.server_id));
    }
  }
  if (!refused.empty()) {
    Log(absl::StrCat("retention: ", o_.replicas_file, ": ", refused.size(),
                     " replica(s) not restored (known already, or past the server's "
                     "max_replicas or max_replica_uuids_per_server_id; the least "
                     "recently active go first): ", absl::StrJoin(refused, ", ")));
  }
  saved_ = *text;
  return absl::OkStatus();
}

absl::Status CopyRetention::SaveReplicas(const std::vector<Server::ReplicaPosition>& replicas) {
  std::string text = absl::StrCat(kReplicasHeader, "\n");
  for (const Server::ReplicaPosition& p : replicas) {
    if (p.file.empty()) continue;  // nothing to hold by name
    absl::StrAppend(&text, "replica ", p.server_id, " ", p.uuid.empty() ? "-" : p.uuid, " ",
                    p.file, " ", p.position, " ",
                    p.connected ? std::string("-")
                                : absl::StrCat(absl::ToUnixSeconds(p.last_active)),
                    "\n");
  }
  if (text == saved_) return absl::OkStatus();
  io::FileSystem* fs = io::FileSystem::Default();
  const std::string tmp = o_.replicas_file + ".tmp";
  auto f = fs->OpenWritable(tmp, io::OpenMode::kCreateOrTruncate);
  if (!f.ok()) return f.status();
  absl::Status s = (*f)->Write(0, text);
  if (s.ok()) s = (*f)->Sync();
  absl::Status cs = (*f)->Close();
  if (s.ok()) s = cs;
  if (s.ok()) s = fs->Rename(tmp, o_.replicas_file);
  if (s.ok()) {
    const size_t slash = o_.replicas_file.rfind('/');
    auto d = fs->OpenDirectory(slash == std::string::npos ? "."
                                                          : o_.replicas_file.substr(0, slash));
    s = d.ok() ? (*d)->Sync() : d.status();
  }
  if (s.ok()) saved_ = std::move(text);
  return s;
}

CopyRetention::~CopyRetention() { Stop(); }

absl::StatusOr<CopyRetention::PassResult> CopyRetention::RunOnce() {
  std::lock_guard<std::mutex> pass(pass_mu_);
  PassResult res;
  std::vector<Server::ReplicaPosition> replicas;
  const absl::Time now = o_.now ? o_.now() : absl::Now();
  if (server_ != nullptr) {
    // Replicas disconnected for the server's replica_expire_after hold
    // nothing from now on.
    std::vector<Server::ReplicaPosition> expired = server_->ForgetExpiredReplicas();
    if (!expired.empty()) {
      std::vector<std::string> names;
      for (size_t i = 0; i < expired.size() && i < kMaxNamesLogged; ++i) {
        names.push_back(absl::StrCat(expired[i].server_id, " at ", expired[i].file, ":",
                                     expired[i].position));
      }
      Log(absl::StrCat("retention: forgot ", expired.size(),
                       " replica(s) disconnected longer than the server's "
                       "replica_expire_after: ", absl::StrJoin(names, ", "),
                       expired.size() > names.size() ? ", ..." : ""));
    }
    replicas = server_->ReplicaPositions();
  }
  bool saved = true;
  if (!o_.replicas_file.empty()) {
    absl::Status s = SaveReplicas(replicas);
    if (!s.ok()) {
      saved = false;
      Log(absl::StrCat("retention: saving the replicas' positions to ", o_.replicas_file,
                       ": ", s.ToString(), "; no purge in this pass"));
    }
  }
  absl::StatusOr<Files> listed = mirror_->ListFileFacts();
  if (!listed.ok()) return listed.status();
  const Files& files = *listed;
  if (files.size() <= 1) return res;
  const size_t last = files.size() - 1;
  const size_t want = FirstKept(files, now, o_.expire_after, o_.max_total_bytes);
  const size_t force = FirstKept(files, now, o_.force_purge_after, o_.force_max_total_bytes);
  if (want == 0 && force == 0) return res;

  // The first file each holder keeps: the first numbered at or after its
  // file (a binary search); every file for a holder without one (number
  // 0); none (past the last one may go) for a holder in a file purged
  // already. Names are made only for the holders a line or the result
  // reports, so a pass is O(n log f) in n holders and f files.
  auto kept_by = [&](uint64_t number) -> size_t {
    if (number != 0 && number < files[0].number) return last;
    auto it = std::lower_bound(files.begin(), files.begin() + last, number,
                               [](const MirrorLog::FileFacts& f, uint64_t n) {
                                 return f.number < n;
                               });
    return static_cast<size_t>(it - files.begin());
  };
  std::vector<Holder> holders;
  if (server_ != nullptr) {
    holders.reserve(replicas.size() + o_.consumers.size());
    for (size_t i = 0; i < replicas.size(); ++i) {
      Holder h;
      // Without a position yet: holds nothing.
      if (!ParseBinlogFileName(o_.basename, replicas[i].file, &h.number)) continue;
      h.replica = i + 1;
      holders.push_back(std::move(h));
    }
  }
  for (const auto& [name, path] : o_.consumers) {
    Holder h;
    // Read only: the consumer's store is never opened for writing.
    auto store = PositionStore::ReadDurable(path, o_.file_system);
    if (!store.ok()) {
      h.who = absl::StrCat("consumer ", name, " (", path, " unreadable: ",
                           store.status().message(), ")");
    } else {
      const std::string& file = store->source_file;
      if (file.empty() || !ParseBinlogFileName(o_.basename, file, &h.number)) {
        h.number = 0;
        h.who = absl::StrCat("consumer ", name, " (no file of the copy: '", file, "')");
      } else {
        h.who = absl::StrCat("consumer ", name, " at ", file);
      }
    }
    holders.push_back(std::move(h));
  }
  auto who = [&](const Holder& h) {
    if (h.replica == 0) return h.who;
    const Server::ReplicaPosition& p = replicas[h.replica - 1];
    return absl::StrCat("replica ", p.server_id, p.uuid.empty() ? "" : " (", p.uuid,
                        p.uuid.empty() ? "" : ")", " at ", p.file, ":", p.position);
  };
  size_t target = want;
  const Holder* holding = nullptr;
  for (Holder& h : holders) {
    h.kept = kept_by(h.number);
    if (h.kept < target) {
      target = h.kept;
      holding = &h;
    }
  }
  if (target < want && holding != nullptr) {
    res.kept_file = files[target].name;
    res.kept_reason = who(*holding);
  } else if (want < last) {
    res.kept_file = files[want].name;
    res.kept_reason = "policy";
  }
  if (std::max(target, force) > 0 && (!saved || now < created_ + o_.startup_grace)) {
    // A replica's position is durable, and the replicas that knew the
    // relay before it restarted are back, before a file goes.
    res.kept_file = files[0].name;
    res.kept_reason = saved ? "startup grace" : "the replicas' positions are not saved";
    return res;
  }
  std::vector<std::string> passed;
  size_t passed_all = 0;
  if (force > target) {
    for (const Holder& h : holders) {
      if (h.kept >= force) continue;
      if (++passed_all <= kMaxNamesLogged) passed.push_back(who(h));
    }
    if (passed_all > passed.size()) {
      passed.push_back(absl::StrCat("and ", passed_all - passed.size(), " more"));
    }
    target = force;
    res.forced = true;
    res.kept_file = files[target].name;
    res.kept_reason = "operator limit";
    const std::string why = absl::StrCat(
        "binlog_server purged the binary logs before ", files[force].name,
        " past this replica (an operator limit of the relay's retention)");
    if (server_ != nullptr) res.dumps_ended = server_->EndDumpsBefore(files[force].number, why);
    Log(absl::StrCat("retention: an operator limit forces a purge up to ", files[force].name,
                     " past ", passed.empty() ? "no consumer" : absl::StrJoin(passed, ", "),
                     res.dumps_ended > 0 ? absl::StrCat("; ended ", res.dumps_ended, " dump(s)")
                                         : std::string()));
  }
  if (target == 0) {
    if (holding != nullptr && want > 0) {
      Log(absl::StrCat("retention: ", files[0].name, " and later kept for ", who(*holding)));
    }
    return res;
  }
  absl::StatusOr<MirrorLog::PurgeResult> r = mirror_->PurgeTo(files[target].name);
  if (!r.ok()) {
    Log(absl::StrCat("retention: purge to ", files[target].name, " failed: ",
                     r.status().ToString()));
    return r.status();
  }
  res.purged = r->purged;
  if (!r->kept_file.empty()) {
    res.kept_file = r->kept_file;
    res.kept_reason = r->kept_reason;
  }
  if (!res.purged.empty()) {
    Log(absl::StrCat("retention: purged ", res.purged.front(),
                     res.purged.size() > 1 ? absl::StrCat(" .. ", res.purged.back()) : "",
                     " (", res.purged.size(), " file(s)", res.forced ? ", forced" : "",
                     "); kept from ", res.kept_file, ": ", res.kept_reason));
  } else if (!res.kept_file.empty() && res.kept_reason != "policy") {
    Log(absl::StrCat("retention: ", res.kept_file, " and later kept: ", res.kept_reason));
  }
  return res;
}

void CopyRetention::Start() {
  std::lock_guard<std::mutex> l(mu_);
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> lk(mu_);
    while (!stop_) {
      lk.unlock();
      absl::StatusOr<PassResult> r = RunOnce();
      (void)r;  // errors are logged by the pass
      lk.lock();
      cv_.wait_for(lk, absl::ToChronoMilliseconds(o_.interval), [this] { return stop_; });
    }
  });
}

void CopyRetention::Stop() {
  std::thread t;
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
    t = std::move(thread_);
  }
  cv_.notify_all();
  if (t.joinable()) t.join();
}

}  // namespace server
}  // namespace binlog
