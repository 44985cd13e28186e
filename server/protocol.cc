#include "server/protocol.h"

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace binlog {
namespace server {
namespace {

void PutInt(std::string* out, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

absl::Status Malformed(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("malformed ", what, " packet"));
}

}  // namespace

void PutLenenc(std::string* out, uint64_t v) {
  if (v < 251) {
    out->push_back(static_cast<char>(v));
  } else if (v < (1u << 16)) {
    out->push_back(static_cast<char>(0xfc));
    PutInt(out, v, 2);
  } else if (v < (1u << 24)) {
    out->push_back(static_cast<char>(0xfd));
    PutInt(out, v, 3);
  } else {
    out->push_back(static_cast<char>(0xfe));
    PutInt(out, v, 8);
  }
}

void PutLenencString(std::string* out, absl::string_view s) {
  PutLenenc(out, s.size());
  out->append(s.data(), s.size());
}

bool WireReader::Int(size_t n, uint64_t* v) {
  if (remaining() < n) return false;
  uint64_t r = 0;
  for (size_t i = 0; i < n; ++i) {
    r |= uint64_t{static_cast<uint8_t>(data_[pos_ + i])} << (8 * i);
  }
  pos_ += n;
  *v = r;
  return true;
}

bool WireReader::Lenenc(uint64_t* v) {
  uint64_t first;
  if (!Int(1, &first)) return false;
  if (first < 251) {
    *v = first;
    return true;
  }
  if (first == 0xfc) return Int(2, v);
  if (first == 0xfd) return Int(3, v);
  if (first == 0xfe) return Int(8, v);
  return false;  // 0xfb (NULL) and 0xff are not lengths
}

bool WireReader::Bytes(size_t n, absl::string_view* v) {
  if (remaining() < n) return false;
  *v = data_.substr(pos_, n);
  pos_ += n;
  return true;
}

bool WireReader::NulString(absl::string_view* v) {
  size_t nul = data_.find('\0', pos_);
  if (nul == absl::string_view::npos) return false;
  *v = data_.substr(pos_, nul - pos_);
  pos_ = nul + 1;
  return true;
}

absl::string_view WireReader::Rest() {
  absl::string_view r = data_.substr(pos_);
  pos_ = data_.size();
  return r;
}

void FramePacket(absl::string_view payload, uint8_t* seq, std::string* out) {
  size_t off = 0;
  while (true) {
    size_t n = std::min(payload.size() - off, kMaxPacketPayload);
    PutInt(out, n, 3);
    out->push_back(static_cast<char>((*seq)++));
    out->append(payload.data() + off, n);
    off += n;
    if (n < kMaxPacketPayload) break;
  }
}

std::string EncodeHandshake(const Handshake& h) {
  std::string p;
  p.push_back(10);
  p.append(h.server_version);
  p.push_back('\0');
  PutInt(&p, h.connection_id, 4);
  p.append(h.scramble.substr(0, 8));
  p.push_back('\0');
  PutInt(&p, h.capabilities & 0xffff, 2);
  p.push_back(static_cast<char>(h.charset));
  PutInt(&p, kStatusAutocommit, 2);
  PutInt(&p, h.capabilities >> 16, 2);
  p.push_back(static_cast<char>(h.scramble.size() + 1));
  p.append(10, '\0');
  p.append(h.scramble.substr(8));
  p.push_back('\0');
  p.append(h.auth_plugin);
  p.push_back('\0');
  return p;
}

bool IsSslRequest(absl::string_view first_reply) {
  WireReader r(first_reply);
  uint64_t caps = 0;
  return r.Int(4, &caps) && (caps & kClientSsl) != 0;
}

std::string EncodeSslRequest(uint32_t capabilities) {
  std::string p;
  PutInt(&p, capabilities | kClientSsl, 4);
  PutInt(&p, 1 << 24, 4);  // max packet
  p.push_back(33);         // utf8_general_ci
  p.append(23, '\0');
  return p;
}

absl::StatusOr<HandshakeResponse> ParseHandshakeResponse(absl::string_view p) {
  HandshakeResponse out;
  uint64_t v;
  {
    WireReader r(p);
    if (!r.Int(2, &v)) return Malformed("handshake response");
    if ((v & kClientProtocol41) == 0) {
      return absl::InvalidArgumentError("client does not speak protocol 4.1");
    }
  }
  WireReader r2(p);
  if (!r2.Int(4, &v)) return Malformed("handshake response");
  out.capabilities = static_cast<uint32_t>(v);
  if (!r2.Int(4, &v)) return Malformed("handshake response");
  out.max_packet = static_cast<uint32_t>(v);
  if (!r2.Int(1, &v)) return Malformed("handshake response");
  out.charset = static_cast<uint8_t>(v);
  absl::string_view s;
  if (!r2.Bytes(23, &s)) {
    if (out.capabilities & kClientSsl) {
      return absl::InvalidArgumentError("client asks for SSL, which is not offered");
    }
    return Malformed("handshake response");
  }
  if (r2.remaining() == 0 && (out.capabilities & kClientSsl)) {
    return absl::InvalidArgumentError("client asks for SSL, which is not offered");
  }
  if (!r2.NulString(&s)) return Malformed("handshake response");
  out.user = std::string(s);
  if (out.capabilities & kClientPluginAuthLenencData) {
    if (!r2.Lenenc(&v) || !r2.Bytes(v, &s)) return Malformed("handshake response");
  } else if (out.capabilities & kClientSecureConnection) {
    if (!r2.Int(1, &v) || !r2.Bytes(v, &s)) return Malformed("handshake response");
  } else {
    if (!r2.NulString(&s)) return Malformed("handshake response");
  }
  out.auth_response = std::string(s);
  if ((out.capabilities & kClientConnectWithDb) && r2.remaining() > 0) {
    if (!r2.NulString(&s)) return Malformed("handshake response");
    out.database = std::string(s);
  }
  if ((out.capabilities & kClientPluginAuth) && r2.remaining() > 0) {
    // Some clients leave out the final NUL.
    if (!r2.NulString(&s)) s = r2.Rest();
    out.auth_plugin = std::string(s);
  }
  // Connection attributes, if any, are not needed.
  return out;
}

std::string EncodeAuthSwitch(absl::string_view plugin, absl::string_view scramble) {
  std::string p;
  p.push_back(static_cast<char>(0xfe));
  p.append(plugin.data(), plugin.size());
  p.push_back('\0');
  p.append(scramble.data(), scramble.size());
  p.push_back('\0');
  return p;
}

std::string EncodeOk(uint64_t affected_rows, bool eof_header) {
  std::string p;
  p.push_back(eof_header ? static_cast<char>(0xfe) : '\0');
  PutLenenc(&p, affected_rows);
  PutLenenc(&p, 0);  // last insert id
  PutInt(&p, kStatusAutocommit, 2);
  PutInt(&p, 0, 2);  // warnings
  return p;
}

std::string EncodeErr(uint16_t code, absl::string_view sql_state,
                      absl::string_view message) {
  std::string p;
  p.push_back(static_cast<char>(0xff));
  PutInt(&p, code, 2);
  p.push_back('#');
  std::string state(sql_state.substr(0, 5));
  state.resize(5, '0');
  p.append(state);
  p.append(message.data(), std::min<size_t>(message.size(), 512));
  return p;
}

std::string EncodeEof() {
  std::string p;
  p.push_back(static_cast<char>(0xfe));
  PutInt(&p, 0, 2);
  PutInt(&p, kStatusAutocommit, 2);
  return p;
}

std::vector<std::string> EncodeResultSet(
    const std::vector<std::string>& columns,
    const std::vector<std::vector<std::optional<std::string>>>& rows,
    uint32_t client_capabilities) {
  const bool deprecate_eof = (client_capabilities & kClientDeprecateEof) != 0;
  std::vector<std::string> out;
  std::string p;
  PutLenenc(&p, columns.size());
  out.push_back(std::move(p));
  for (const std::string& name : columns) {
    std::string c;
    PutLenencString(&c, "def");
    PutLenencString(&c, "");  // schema
    PutLenencString(&c, "");  // table
    PutLenencString(&c, "");  // org_table
    PutLenencString(&c, name);
    PutLenencString(&c, name);
    PutLenenc(&c, 0x0c);
    PutInt(&c, 33, 2);     // utf8_general_ci
    PutInt(&c, 1024, 4);   // column length
    c.push_back(static_cast<char>(0xfd));  // MYSQL_TYPE_VAR_STRING
    PutInt(&c, 0, 2);      // flags
    c.push_back('\0');     // decimals
    PutInt(&c, 0, 2);
    out.push_back(std::move(c));
  }
  if (!deprecate_eof) out.push_back(EncodeEof());
  for (const auto& row : rows) {
    std::string r;
    for (const auto& v : row) {
      if (v.has_value()) {
        PutLenencString(&r, *v);
      } else {
        r.push_back(static_cast<char>(0xfb));
      }
    }
    out.push_back(std::move(r));
  }
  out.push_back(deprecate_eof ? EncodeOk(0, /*eof_header=*/true) : EncodeEof());
  return out;
}

absl::StatusOr<RegisterSlave> ParseRegisterSlave(absl::string_view p) {
  WireReader r(p);
  RegisterSlave out;
  uint64_t v, len;
  absl::string_view s;
  if (!r.Int(1, &v) || v != kComRegisterSlave) return Malformed("COM_REGISTER_SLAVE");
  if (!r.Int(4, &v)) return Malformed("COM_REGISTER_SLAVE");
  out.server_id = static_cast<uint32_t>(v);
  if (!r.Int(1, &len) || !r.Bytes(len, &s)) return Malformed("COM_REGISTER_SLAVE");
  out.host = std::string(s);
  if (!r.Int(1, &len) || !r.Bytes(len, &s)) return Malformed("COM_REGISTER_SLAVE");
  if (!r.Int(1, &len) || !r.Bytes(len, &s)) return Malformed("COM_REGISTER_SLAVE");
  if (!r.Int(2, &v)) return Malformed("COM_REGISTER_SLAVE");
  out.port = static_cast<uint16_t>(v);
  // The rank (unused), then the source id.
  if (r.Int(4, &v) && r.Int(4, &v)) out.master_id = static_cast<uint32_t>(v);
  return out;
}

std::string EncodeRegisterSlave(const RegisterSlave& r) {
  std::string p(1, static_cast<char>(kComRegisterSlave));
  PutInt(&p, r.server_id, 4);
  const absl::string_view host = absl::string_view(r.host).substr(0, 255);
  p.push_back(static_cast<char>(host.size()));
  p.append(host.data(), host.size());
  p.append(2, '\0');  // no report user, no report password
  PutInt(&p, r.port, 2);
  PutInt(&p, 0, 4);  // rank
  PutInt(&p, r.master_id, 4);
  return p;
}

absl::StatusOr<BinlogDump> ParseBinlogDump(absl::string_view p) {
  WireReader r(p);
  BinlogDump out;
  uint64_t v;
  if (!r.Int(1, &v) || v != kComBinlogDump) return Malformed("COM_BINLOG_DUMP");
  if (!r.Int(4, &v)) return Malformed("COM_BINLOG_DUMP");
  out.position = static_cast<uint32_t>(v);
  if (!r.Int(2, &v)) return Malformed("COM_BINLOG_DUMP");
  out.flags = static_cast<uint16_t>(v);
  if (!r.Int(4, &v)) return Malformed("COM_BINLOG_DUMP");
  out.server_id = static_cast<uint32_t>(v);
  absl::string_view file = r.Rest();
  // Some clients end the name with a NUL.
  if (!file.empty() && file.back() == '\0') file.remove_suffix(1);
  if (file.find('\0') != absl::string_view::npos) return Malformed("COM_BINLOG_DUMP");
  out.file = std::string(file);
  return out;
}

absl::StatusOr<BinlogDumpGtid> ParseBinlogDumpGtid(absl::string_view p) {
  WireReader r(p);
  BinlogDumpGtid out;
  uint64_t v, len;
  absl::string_view s;
  if (!r.Int(1, &v) || v != kComBinlogDumpGtid) return Malformed("COM_BINLOG_DUMP_GTID");
  if (!r.Int(2, &v)) return Malformed("COM_BINLOG_DUMP_GTID");
  out.flags = static_cast<uint16_t>(v);
  if (!r.Int(4, &v)) return Malformed("COM_BINLOG_DUMP_GTID");
  out.server_id = static_cast<uint32_t>(v);
  if (!r.Int(4, &len) || !r.Bytes(len, &s)) return Malformed("COM_BINLOG_DUMP_GTID");
  if (!s.empty() && s.back() == '\0') s.remove_suffix(1);
  out.file = std::string(s);
  if (!r.Int(8, &v)) return Malformed("COM_BINLOG_DUMP_GTID");
  out.position = v;
  // MySQL reads the GTID set whether or not the replica sets
  // kDumpThroughGtid (go-mysql sends it with flags 0); it is required only
  // with the flag.
  if ((out.flags & kDumpThroughGtid) || r.remaining() > 0) {
    if (!r.Int(4, &len) || !r.Bytes(len, &s)) return Malformed("COM_BINLOG_DUMP_GTID");
    out.gtid_data = std::string(s);
  }
  return out;
}

absl::StatusOr<SemiSyncAck> ParseSemiSyncAck(absl::string_view p) {
  WireReader r(p);
  uint64_t v;
  SemiSyncAck out;
  if (!r.Int(1, &v) || v != kSemiSyncMagic) return Malformed("semi-sync ack");
  if (!r.Int(8, &out.position)) return Malformed("semi-sync ack");
  absl::string_view file = r.Rest();
  if (!file.empty() && file.back() == '\0') file.remove_suffix(1);
  out.file = std::string(file);
  return out;
}

std::string EncodeSemiSyncAck(uint64_t position, absl::string_view file) {
  std::string p(1, static_cast<char>(kSemiSyncMagic));
  PutInt(&p, position, 8);
  p.append(file.data(), file.size());
  return p;
}

}  // namespace server
}  // namespace binlog
