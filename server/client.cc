#include "server/client.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "server/auth.h"
#include "server/protocol.h"

namespace binlog {
namespace server {
namespace {


ClientReply ParseErr(const std::string& p) {
  ClientReply r;
  r.kind = ClientReply::kError;
  WireReader w(p);
  uint64_t v;
  w.Int(1, &v);
  w.Int(2, &v);
  r.error_code = static_cast<uint16_t>(v);
  absl::string_view rest = w.Rest();
  // '#' and the 5-byte SQL state; a shorter packet keeps its bytes.
  if (rest.size() >= 6 && rest[0] == '#') rest.remove_prefix(6);
  r.message = std::string(rest);
  return r;
}

}  // namespace

absl::Status ReplicationClient::ReadFull(char* out, size_t n, absl::Time deadline) {
  while (n > 0) {
    if (buf_pos_ == buf_.size()) {
      buf_.resize(256 << 10);
      buf_pos_ = 0;
      auto got = sock_.ReadSome(buf_.data(), buf_.size(), deadline);
      if (!got.ok()) {
        buf_.clear();
        return got.status();
      }
      buf_.resize(*got);
    }
    size_t k = std::min(n, buf_.size() - buf_pos_);
    std::memcpy(out, buf_.data() + buf_pos_, k);
    buf_pos_ += k;
    out += k;
    n -= k;
  }
  return absl::OkStatus();
}

absl::Status ReplicationClient::ReadPacket(std::string* out, absl::Time deadline) {
  out->clear();
  while (true) {
    char h[4];
    absl::Status s = ReadFull(h, 4, deadline);
    if (!s.ok()) return s;
    size_t len = static_cast<uint8_t>(h[0]) | (static_cast<uint8_t>(h[1]) << 8) |
                 (static_cast<size_t>(static_cast<uint8_t>(h[2])) << 16);
    seq_ = static_cast<uint8_t>(h[3]) + 1;
    size_t at = out->size();
    if (at + len > max_packet_) {
      return absl::ResourceExhaustedError(
          absl::StrCat("a packet of over ", max_packet_, " bytes"));
    }
    out->resize(at + len);
    s = ReadFull(out->data() + at, len, deadline);
    if (!s.ok()) return s;
    if (len < kMaxPacketPayload) return absl::OkStatus();
  }
}

absl::Status ReplicationClient::WritePacket(const std::string& payload) {
  std::string wire;
  FramePacket(payload, &seq_, &wire);
  return sock_.WriteAll(wire, absl::Now() + timeout_);
}

absl::StatusOr<ReplicationClient> ReplicationClient::Connect(
    io::Socket sock, const std::string& user, const std::string& password,
    const std::string& plugin, bool secure, const ClientTls* tls, bool public_key_request,
    absl::Duration timeout) {
  ReplicationClient c(std::move(sock));
  c.timeout_ = timeout;
  std::string p;
  absl::Status s = c.ReadPacket(&p, absl::Now() + c.timeout_);
  if (!s.ok()) return s;
  if (!p.empty() && static_cast<uint8_t>(p[0]) == 0xff) {
    return absl::UnavailableError(ParseErr(p).message);
  }
  // The scramble: 8 bytes after version + id, 12 more after the reserved bytes.
  WireReader r(p);
  absl::string_view version, part1, part2;
  uint64_t v, server_caps = 0;
  if (!r.Int(1, &v) || !r.NulString(&version) || !r.Int(4, &v) || !r.Bytes(8, &part1) ||
      !r.Int(1, &v) || !r.Int(2, &server_caps) || !r.Int(1, &v) || !r.Int(2, &v) ||
      !r.Int(2, &v) ||
      !r.Int(1, &v) || !r.Bytes(10, &part2) || !r.Bytes(12, &part2)) {
    return absl::DataLossError("malformed handshake");
  }
  const std::string scramble = absl::StrCat(part1, part2);
  c.caps_ = kClientProtocol41 | kClientSecureConnection | kClientPluginAuth |
            kClientLongPassword | kClientTransactions | kClientDeprecateEof;
  if (tls != nullptr) {
    if ((server_caps & kClientSsl) == 0) {
      return absl::FailedPreconditionError("the server does not offer TLS");
    }
    c.caps_ |= kClientSsl;
    s = c.WritePacket(EncodeSslRequest(c.caps_));
    if (!s.ok()) return s;
    s = c.sock_.StartTls(tls->context, absl::Now() + c.timeout_, tls->verify_host);
    if (!s.ok()) return s;
    secure = true;
  }
  std::string resp;
  for (int i = 0; i < 4; ++i) resp.push_back(static_cast<char>(c.caps_ >> (8 * i)));
  resp.append("\x00\x00\x00\x01", 4);
  resp.push_back(33);
  resp.append(23, '\0');
  resp.append(user);
  resp.push_back('\0');
  auto token_for = [&password](absl::string_view name, absl::string_view nonce) {
    if (name == kNativePasswordPlugin) return NativePasswordToken(password, nonce);
    if (name == kCachingSha2Plugin) return CachingSha2Token(password, nonce);
    return std::string(32, 'x');  // what another plugin would send
  };
  std::string token = token_for(plugin, scramble);
  resp.push_back(static_cast<char>(token.size()));
  resp.append(token);
  resp.append(plugin);
  resp.push_back('\0');
  s = c.WritePacket(resp);
  if (!s.ok()) return s;
  s = c.ReadPacket(&p, absl::Now() + c.timeout_);
  if (!s.ok()) return s;
  std::string nonce = scramble;
  if (!p.empty() && static_cast<uint8_t>(p[0]) == 0xfe) {
    // Auth switch: plugin name, scramble.
    WireReader w(p);
    absl::string_view name, salt;
    w.Int(1, &v);
    if (!w.NulString(&name)) return absl::DataLossError("malformed auth switch");
    salt = w.Rest();
    if (!salt.empty() && salt.back() == '\0') salt.remove_suffix(1);
    nonce = std::string(salt);
    s = c.WritePacket(token_for(name, salt));
    if (!s.ok()) return s;
    s = c.ReadPacket(&p, absl::Now() + c.timeout_);
    if (!s.ok()) return s;
  }
  // caching_sha2_password: fast_auth_success, then the OK; or
  // perform_full_authentication: the password, in clear over a secure
  // transport, else RSA-encrypted with the public key the server sends.
  if (p.size() == 2 && static_cast<uint8_t>(p[0]) == kAuthMoreData) {
    if (static_cast<uint8_t>(p[1]) == kPerformFullAuthentication) {
      const std::string with_nul = password + std::string(1, '\0');
      if (secure) {
        s = c.WritePacket(with_nul);
      } else if (!public_key_request) {
        return absl::PermissionDeniedError(
            "caching_sha2_password full authentication over plaintext TCP needs TLS "
            "(or the server's public key requested, which nothing verifies)");
      } else {
        s = c.WritePacket(std::string(1, static_cast<char>(kRequestPublicKey)));
        if (!s.ok()) return s;
        s = c.ReadPacket(&p, absl::Now() + c.timeout_);
        if (!s.ok()) return s;
        if (p.empty() || static_cast<uint8_t>(p[0]) != kAuthMoreData) {
          return absl::DataLossError("no public key from the server");
        }
        auto cipher = RsaKeyPair::Encrypt(absl::string_view(p).substr(1),
                                          XorWithScramble(with_nul, nonce));
        if (!cipher.ok()) return cipher.status();
        s = c.WritePacket(*cipher);
      }
      if (!s.ok()) return s;
    }
    s = c.ReadPacket(&p, absl::Now() + c.timeout_);
    if (!s.ok()) return s;
  }
  if (p.empty() || static_cast<uint8_t>(p[0]) != 0) {
    ClientReply e = ParseErr(p);
    return absl::PermissionDeniedError(absl::StrCat(e.error_code, ": ", e.message));
  }
  return c;
}

absl::Status ReplicationClient::SendCommand(const std::string& payload) {
  seq_ = 0;
  return WritePacket(payload);
}

absl::Status ReplicationClient::Register(uint32_t server_id, const std::string& host,
                                         uint16_t port, uint32_t source_id) {
  RegisterSlave r;
  r.server_id = server_id;
  r.host = host;
  r.port = port;
  r.master_id = source_id;
  absl::Status s = SendCommand(EncodeRegisterSlave(r));
  if (!s.ok()) return s;
  std::string p;
  s = ReadPacket(&p, absl::Now() + timeout_);
  if (!s.ok()) return s;
  if (p.empty() || static_cast<uint8_t>(p[0]) != 0) {
    ClientReply e = ParseErr(p);
    return absl::FailedPreconditionError(absl::StrCat(e.error_code, ": ", e.message));
  }
  return absl::OkStatus();
}

absl::StatusOr<ClientReply> ReplicationClient::Query(const std::string& sql) {
  absl::Status s = SendCommand(std::string(1, static_cast<char>(kComQuery)) + sql);
  if (!s.ok()) return s;
  std::string p;
  s = ReadPacket(&p, absl::Now() + timeout_);
  if (!s.ok()) return s;
  ClientReply r;
  if (p.empty()) return absl::DataLossError("empty reply");
  const uint8_t first = static_cast<uint8_t>(p[0]);
  if (first == 0xff) return ParseErr(p);
  if (first == 0x00) {
    r.kind = ClientReply::kOk;
    return r;
  }
  r.kind = ClientReply::kResultSet;
  WireReader w(p);
  uint64_t cols = 0;
  w.Lenenc(&cols);
  for (uint64_t i = 0; i < cols; ++i) {
    s = ReadPacket(&p, absl::Now() + timeout_);
    if (!s.ok()) return s;
  }
  while (true) {
    s = ReadPacket(&p, absl::Now() + timeout_);
    if (!s.ok()) return s;
    if (!p.empty() && static_cast<uint8_t>(p[0]) == 0xfe && p.size() < 0xffffff) break;
    WireReader row(p);
    std::vector<std::optional<std::string>> values;
    for (uint64_t i = 0; i < cols; ++i) {
      if (row.remaining() > 0 && static_cast<uint8_t>(p[p.size() - row.remaining()]) == 0xfb) {
        uint64_t skip;
        row.Int(1, &skip);
        values.push_back(std::nullopt);
        continue;
      }
      uint64_t len;
      absl::string_view val;
      if (!row.Lenenc(&len) || !row.Bytes(len, &val)) return absl::DataLossError("bad row");
      values.push_back(std::string(val));
    }
    if (r.rows.size() < ClientReply::kMaxRows) r.rows.push_back(std::move(values));
  }
  return r;
}

absl::Status ReplicationClient::Dump(const std::string& file, uint32_t position,
                                     uint16_t flags, uint32_t server_id) {
  std::string p(1, static_cast<char>(kComBinlogDump));
  for (int i = 0; i < 4; ++i) p.push_back(static_cast<char>(position >> (8 * i)));
  for (int i = 0; i < 2; ++i) p.push_back(static_cast<char>(flags >> (8 * i)));
  for (int i = 0; i < 4; ++i) p.push_back(static_cast<char>(server_id >> (8 * i)));
  p.append(file);
  return SendCommand(p);
}

absl::Status ReplicationClient::DumpGtid(const std::string& gtid_data, uint16_t flags,
                                         uint32_t server_id) {
  flags |= kDumpThroughGtid;
  std::string p(1, static_cast<char>(kComBinlogDumpGtid));
  for (int i = 0; i < 2; ++i) p.push_back(static_cast<char>(flags >> (8 * i)));
  for (int i = 0; i < 4; ++i) p.push_back(static_cast<char>(server_id >> (8 * i)));
  p.append(4, '\0');  // no file name
  p.append(8, '\0');  // position
  for (int i = 0; i < 4; ++i) p.push_back(static_cast<char>(gtid_data.size() >> (8 * i)));
  p.append(gtid_data);
  return SendCommand(p);
}

absl::StatusOr<ClientReply> ReplicationClient::Read(absl::Time deadline) {
  std::string p;
  absl::Status s = ReadPacket(&p, deadline);
  if (!s.ok()) return s;
  ClientReply r;
  if (p.empty()) return r;
  const uint8_t first = static_cast<uint8_t>(p[0]);
  if (first == 0xff) return ParseErr(p);
  if (first == 0xfe && p.size() < 9) {
    r.kind = ClientReply::kEof;
    return r;
  }
  if (first == 0x00) {
    r.kind = ClientReply::kEvent;
    // A source that knows semi-sync adds the header to every event packet
    // once the replica asked for it (@rpl_semi_sync_slave), whether its
    // own semi-sync is on or not; servers' replicas refuse a packet
    // without it. Telling by the magic byte would be ambiguous: it is an
    // event's first byte (its timestamp's lowest) when the header is absent.
    if (semisync_) {
      if (p.size() < 3 || static_cast<uint8_t>(p[1]) != kSemiSyncMagic) {
        return absl::DataLossError("event packet without the semi-sync header");
      }
      r.need_ack = (static_cast<uint8_t>(p[2]) & kSemiSyncNeedAck) != 0;
      p.erase(0, 3);
    } else {
      p.erase(0, 1);
    }
    r.event = std::move(p);  // no second copy of a large event
  }
  return r;
}

absl::Status ReplicationClient::SendAck(uint64_t position, const std::string& file) {
  return SendCommand(EncodeSemiSyncAck(position, file));
}

}  // namespace server
}  // namespace binlog
