#include "tests/tools/served_log.h"

#include <stdlib.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "binlog/event_builder.h"
#include "binlog/gtid.h"
#include "tests/testutil/external_tools.h"

namespace binlog {
namespace server {

Options ServedLogOptions(io::Codec codec) {
  Options o;
  o.max_file_size = 8192;
  o.server_uuid = *Uuid::Parse(kServedUuid);
  o.sync_policy = SyncPolicy::kNever;
  o.compression = codec;
  o.compression_threshold = 0;
  return o;
}

void ServedLogTest::StartServedLog(const char* prefix, int transactions,
                                   uint64_t xid_base) {
  std::string tmpl = absl::StrCat("/tmp/", prefix, "XXXXXX");
  ASSERT_NE(::mkdtemp(&tmpl[0]), nullptr);
  dir_ = tmpl;
  auto log = Binlog::Open(dir_, "binlog", ServedLogOptions(GetParam()));
  ASSERT_TRUE(log.ok()) << log.status();
  log_ = std::move(*log);
  TransactionBuffer txn;
  for (int i = 1; i <= transactions; ++i) {
    txn.Clear();
    txn.AppendCommitGtid(kServedTs, 1, CommitGtid());
    AppendQuery(&txn, kServedTs, 1, 5, "db", "BEGIN");
    AppendQuery(&txn, kServedTs, 1, 5, "db",
                absl::StrCat("INSERT INTO t VALUES (", i, ", '",
                             std::string(300, 'a' + i % 26), "')"));
    AppendXid(&txn, kServedTs, 1, xid_base + i);
    ASSERT_TRUE(log_->Commit(&txn).ok());
  }
  ServerOptions so;
  so.dir = dir_;
  so.users = {{"repl", {AuthPlugin::kNativePassword, NativePasswordHash("pw")}},
              {"sha2", {AuthPlugin::kCachingSha2Password,
                        CachingSha2PasswordHash("pw2", "saltsaltsaltsaltsalt")}},
              {"sha2sock", {AuthPlugin::kCachingSha2Password,
                            CachingSha2PasswordHash("pw3", "SALTsaltSALTsaltSALT")}}};
  if (!pki_dir_.empty()) {
    so.ssl_cert = pki_.server_cert;
    so.ssl_key = pki_.server_key;
    so.ssl_ca = pki_.ca;
    so.require_secure_transport = require_secure_transport_;
  }
  auto s = Server::Create(so);
  ASSERT_TRUE(s.ok()) << s.status();
  server_ = std::move(*s);
  auto l = io::Socket::ListenLoopback(0);
  ASSERT_TRUE(l.ok());
  listener_ = std::move(*l);
  port_ = listener_.port();
  runner_ = std::thread([this] { server_->Run(&listener_); });
  socket_path_ = dir_ + "/s.sock";
  auto u = io::Socket::ListenUnix(socket_path_);
  ASSERT_TRUE(u.ok()) << u.status();
  unix_listener_ = std::move(*u);
  unix_runner_ = std::thread([this] { server_->Run(&unix_listener_); });
}

void ServedLogTest::EnableTls(bool require_secure_transport) {
  std::string tmpl = "/tmp/binlog_pki_XXXXXX";
  ASSERT_NE(::mkdtemp(&tmpl[0]), nullptr);
  pki_dir_ = tmpl;
  auto pki = testing_util::MakeTestPki(pki_dir_);
  ASSERT_TRUE(pki.ok()) << pki.status();
  pki_ = *pki;
  require_secure_transport_ = require_secure_transport;
}

void ServedLogTest::TearDown() {
  if (server_) {
    server_->Shutdown();
    runner_.join();
    if (unix_runner_.joinable()) unix_runner_.join();
    server_.reset();
  }
  log_.reset();
  for (const std::string& d : {dir_, pki_dir_}) {
    if (d.empty()) continue;
    std::string out;
    testing_util::RunCommand("rm -rf '" + d + "'", &out);
  }
}

}  // namespace server
}  // namespace binlog
