// File: server/protocol.h
//
// The MySQL client/server protocol as binlog_server speaks it: packet
// framing, the v10 handshake (the authentication plugins are auth.h's), OK / ERR / EOF
// packets, text result sets, and the replication commands
// (COM_REGISTER_SLAVE, COM_BINLOG_DUMP, COM_BINLOG_DUMP_GTID). This is the
// one home of the wire encoding; the binlog events themselves come from
// binlog/ (event_builder.h) and are only framed here.
//
// Everything is pure (no I/O): the session (server.cc) moves the bytes.
// Parsers take untrusted bytes and return InvalidArgument for anything
// malformed; they never read outside the given view.
//
// Thread safety: thread-safe (no shared state).

#ifndef BINLOG_SERVER_PROTOCOL_H_
#define BINLOG_SERVER_PROTOCOL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace binlog {
namespace server {

// Capability flags (the subset the server offers or reads).
inline constexpr uint32_t kClientLongPassword = 0x00000001;
inline constexpr uint32_t kClientFoundRows = 0x00000002;
inline constexpr uint32_t kClientLongFlag = 0x00000004;
inline constexpr uint32_t kClientConnectWithDb = 0x00000008;
inline constexpr uint32_t kClientProtocol41 = 0x00000200;
inline constexpr uint32_t kClientSsl = 0x00000800;
inline constexpr uint32_t kClientTransactions = 0x00002000;
inline constexpr uint32_t kClientSecureConnection = 0x00008000;
inline constexpr uint32_t kClientMultiStatements = 0x00010000;
inline constexpr uint32_t kClientMultiResults = 0x00020000;
inline constexpr uint32_t kClientPluginAuth = 0x00080000;
inline constexpr uint32_t kClientConnectAttrs = 0x00100000;
inline constexpr uint32_t kClientPluginAuthLenencData = 0x00200000;
inline constexpr uint32_t kClientDeprecateEof = 0x01000000;

// What the server offers: no compression; kClientSsl is added when TLS is
// configured (ServerOptions::ssl_cert).
inline constexpr uint32_t kServerCapabilities =
    kClientLongPassword | kClientFoundRows | kClientLongFlag |
    kClientConnectWithDb | kClientProtocol41 | kClientTransactions |
    kClientSecureConnection | kClientMultiStatements | kClientMultiResults |
    kClientPluginAuth | kClientConnectAttrs | kClientPluginAuthLenencData |
    kClientDeprecateEof;

inline constexpr uint16_t kStatusAutocommit = 0x0002;

// Commands (first byte of a command packet).
inline constexpr uint8_t kComQuit = 0x01;
inline constexpr uint8_t kComInitDb = 0x02;
inline constexpr uint8_t kComQuery = 0x03;
inline constexpr uint8_t kComPing = 0x0e;
inline constexpr uint8_t kComBinlogDump = 0x12;
inline constexpr uint8_t kComRegisterSlave = 0x15;
inline constexpr uint8_t kComBinlogDumpGtid = 0x1e;

// COM_BINLOG_DUMP(_GTID) flags.
inline constexpr uint16_t kDumpNonBlock = 0x01;
inline constexpr uint16_t kDumpThroughGtid = 0x04;

// Semi-sync: the byte after a dump packet's 0x00 status when the replica
// asked for semi-sync, then a flag byte (kSemiSyncNeedAck: reply with an
// ack); an ack packet is the same magic, the 8-byte position and the file
// name.
inline constexpr uint8_t kSemiSyncMagic = 0xef;
inline constexpr uint8_t kSemiSyncNeedAck = 0x01;

// Error codes the server sends (MySQL's numbering, which MariaDB shares).
inline constexpr uint16_t kErConCount = 1040;        // ER_CON_COUNT_ERROR
inline constexpr uint16_t kErOutOfResources = 1041;  // ER_OUT_OF_RESOURCES
inline constexpr uint16_t kErAccessDenied = 1045;
inline constexpr uint16_t kErNetPacketTooLarge = 1153;  // ER_NET_PACKET_TOO_LARGE
inline constexpr uint16_t kErUnknownCom = 1047;
inline constexpr uint16_t kErServerShutdown = 1053;
inline constexpr uint16_t kErParse = 1064;
inline constexpr uint16_t kErNotSupported = 1235;
inline constexpr uint16_t kErMasterFatalReadingBinlog = 1236;
inline constexpr uint16_t kErUnknownSystemVariable = 1193;
inline constexpr uint16_t kErMalformedPacket = 1835;
inline constexpr uint16_t kErMasterHasPurgedRequiredGtids = 1789;
inline constexpr uint16_t kErSlaveHasMoreGtidsThanMaster = 1885;
inline constexpr uint16_t kErHandshake = 1043;
inline constexpr uint16_t kErSecureTransportRequired = 3159;  // ER_SECURE_TRANSPORT_REQUIRED
// MariaDB's ER_SLAVE_SAME_ID: the dump a newer one with the same server id
// replaced (MySQL sends 1236 for it).
inline constexpr uint16_t kErSlaveSameId = 4052;

// Largest payload of one packet; longer payloads continue in the next.
inline constexpr size_t kMaxPacketPayload = 0xffffff;

// Length-encoded integers and strings.
void PutLenenc(std::string* out, uint64_t v);
void PutLenencString(std::string* out, absl::string_view s);

// Reads fields of a packet payload from the front; every read fails
// (returns false) rather than run past the end.
class WireReader {
 public:
  explicit WireReader(absl::string_view data) : data_(data) {}
  bool Int(size_t n, uint64_t* v);
  bool Lenenc(uint64_t* v);
  bool Bytes(size_t n, absl::string_view* v);
  bool NulString(absl::string_view* v);  // up to a NUL, which is consumed
  absl::string_view Rest();
  size_t remaining() const { return data_.size() - pos_; }

 private:
  absl::string_view data_;
  size_t pos_ = 0;
};

// Frames `payload` as packets starting at sequence id `*seq` (advanced past
// them), appending to `*out`. A payload of kMaxPacketPayload bytes or more
// is split, with an empty packet ending it when it is an exact multiple.
void FramePacket(absl::string_view payload, uint8_t* seq, std::string* out);

// The initial handshake packet (protocol v10).
struct Handshake {
  std::string server_version;
  uint32_t connection_id = 0;
  std::string scramble;  // 20 bytes, no NUL
  uint32_t capabilities = kServerCapabilities;
  uint8_t charset = 33;  // utf8_general_ci
  std::string auth_plugin = "mysql_native_password";
};
std::string EncodeHandshake(const Handshake& h);

// The client's Protocol::HandshakeResponse41.
struct HandshakeResponse {
  uint32_t capabilities = 0;
  uint32_t max_packet = 0;
  uint8_t charset = 0;
  std::string user;
  std::string auth_response;
  std::string database;
  std::string auth_plugin;  // empty when the client names none
};
// InvalidArgument for a pre-4.1 client, an SSL request (the server offers
// none), or a malformed packet.
absl::StatusOr<HandshakeResponse> ParseHandshakeResponse(absl::string_view p);

// The SSLRequest: a client's first reply when it wants TLS (the first 32
// bytes of a HandshakeResponse41 with CLIENT_SSL: capabilities, max
// packet, charset, 23 reserved bytes), after which the TLS handshake
// starts and the full response follows over TLS with the next sequence
// id. IsSslRequest: whether a client's first reply asks for TLS (its
// capabilities carry CLIENT_SSL).
bool IsSslRequest(absl::string_view first_reply);
std::string EncodeSslRequest(uint32_t capabilities);

// Auth switch request: 0xFE, plugin name, scramble + NUL (server/auth.h
// has the plugins).
std::string EncodeAuthSwitch(absl::string_view plugin, absl::string_view scramble);

// OK, ERR and EOF packets (CLIENT_PROTOCOL_41 layouts). EncodeOk with
// `eof_header` is the OK packet that ends a result set under
// CLIENT_DEPRECATE_EOF (header 0xFE).
std::string EncodeOk(uint64_t affected_rows = 0, bool eof_header = false);
std::string EncodeErr(uint16_t code, absl::string_view sql_state,
                      absl::string_view message);
std::string EncodeEof();

// A text result set whose columns are all strings, as its packet payloads
// (column count, column definitions, [EOF], rows, EOF or OK): the EOF after
// the definitions is left out and the end is an OK with header 0xFE when
// the client set CLIENT_DEPRECATE_EOF.
std::vector<std::string> EncodeResultSet(
    const std::vector<std::string>& columns,
    const std::vector<std::vector<std::optional<std::string>>>& rows,
    uint32_t client_capabilities);

// COM_REGISTER_SLAVE: the replica's server id, the host and port it
// announces (--report-host / --report-port), and the id of the source it
// replicates from (0: unknown; MySQL then shows its own id). The report
// user and password, and the rank, are skipped. The rank and source id
// are optional on parsing (older clients end after the port).
struct RegisterSlave {
  uint32_t server_id = 0;
  std::string host;
  uint16_t port = 0;
  uint32_t master_id = 0;
};
absl::StatusOr<RegisterSlave> ParseRegisterSlave(absl::string_view p);
std::string EncodeRegisterSlave(const RegisterSlave& r);

// COM_BINLOG_DUMP: position, flags, server id, file name (may be empty).
struct BinlogDump {
  uint32_t position = 0;
  uint16_t flags = 0;
  uint32_t server_id = 0;
  std::string file;
};
absl::StatusOr<BinlogDump> ParseBinlogDump(absl::string_view p);

// COM_BINLOG_DUMP_GTID: flags, server id, file name, position, and the
// replica's GTID set in the Previous_gtids encoding (binlog/gtid.h
// GtidSet::DecodePreviousGtidsBody decodes it): required with
// kDumpThroughGtid, read when present without it (as MySQL does).
struct BinlogDumpGtid {
  uint16_t flags = 0;
  uint32_t server_id = 0;
  std::string file;
  uint64_t position = 0;
  std::string gtid_data;
};
absl::StatusOr<BinlogDumpGtid> ParseBinlogDumpGtid(absl::string_view p);

// A semi-sync ack from a replica: the binlog position it has received.
struct SemiSyncAck {
  uint64_t position = 0;
  std::string file;
};
absl::StatusOr<SemiSyncAck> ParseSemiSyncAck(absl::string_view p);
std::string EncodeSemiSyncAck(uint64_t position, absl::string_view file);

}  // namespace server
}  // namespace binlog

#endif  // BINLOG_SERVER_PROTOCOL_H_
