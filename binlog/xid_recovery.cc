#include "binlog/xid_recovery.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "binlog/format.h"
#include "binlog/payload.h"
#include "binlog/statement_events.h"
#include "binlog/status_macros.h"
#include "binlog/xid_collector.h"

namespace binlog {

std::string XaId::ToString() const {
  return absl::StrCat("X'", absl::BytesToHexString(gtrid), "',X'",
                      absl::BytesToHexString(bqual), "',", format_id);
}

namespace {

constexpr size_t kMaxXaPart = 64;

absl::Status BadXid(absl::string_view text) {
  return absl::InvalidArgumentError(
      absl::StrCat("not an XA transaction identifier: \"", text, "\""));
}

// One part: X'hex' or 'text'. Advances *s past it.
bool ParsePart(absl::string_view* s, std::string* out) {
  absl::string_view t = absl::StripLeadingAsciiWhitespace(*s);
  bool hex = false;
  if (!t.empty() && (t[0] == 'X' || t[0] == 'x')) {
    hex = true;
    t.remove_prefix(1);
  }
  if (t.empty() || t[0] != '\'') return false;
  t.remove_prefix(1);
  size_t end = t.find('\'');
  if (end == absl::string_view::npos) return false;
  absl::string_view raw = t.substr(0, end);
  if (hex) {
    if (raw.size() % 2 != 0) return false;
    for (char c : raw) {
      if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return false;
    }
    *out = absl::HexStringToBytes(raw);
  } else {
    *out = std::string(raw);
  }
  if (out->size() > kMaxXaPart) return false;
  *s = t.substr(end + 1);
  return true;
}

bool ConsumeComma(absl::string_view* s) {
  absl::string_view t = absl::StripLeadingAsciiWhitespace(*s);
  if (t.empty() || t[0] != ',') return false;
  *s = t.substr(1);
  return true;
}

// Parses an XID at the start of *s; leaves the rest in *s.
bool ParseXidPrefix(absl::string_view* s, XaId* xid) {
  XaId x;
  x.format_id = 1;
  if (!ParsePart(s, &x.gtrid)) return false;
  absl::string_view rest = *s;
  if (ConsumeComma(&rest)) {
    if (!ParsePart(&rest, &x.bqual)) return false;
    *s = rest;
    absl::string_view r2 = rest;
    if (ConsumeComma(&r2)) {
      r2 = absl::StripLeadingAsciiWhitespace(r2);
      size_t n = 0;
      while (n < r2.size() && absl::ascii_isdigit(static_cast<unsigned char>(r2[n]))) ++n;
      uint32_t f;
      if (n == 0 || !absl::SimpleAtoi(r2.substr(0, n), &f)) return false;
      x.format_id = f;
      *s = r2.substr(n);
    }
  }
  *xid = std::move(x);
  return true;
}

bool ConsumeWord(absl::string_view* s, absl::string_view word) {
  absl::string_view t = absl::StripLeadingAsciiWhitespace(*s);
  if (t.size() < word.size() ||
      !absl::EqualsIgnoreCase(t.substr(0, word.size()), word)) {
    return false;
  }
  t.remove_prefix(word.size());
  if (!t.empty() && (absl::ascii_isalnum(static_cast<unsigned char>(t[0])) || t[0] == '_')) {
    return false;
  }
  *s = t;
  return true;
}

}  // namespace

absl::StatusOr<XaId> ParseXaId(absl::string_view text) {
  absl::string_view s = text;
  XaId xid;
  if (!ParseXidPrefix(&s, &xid)) return BadXid(text);
  if (!absl::StripAsciiWhitespace(s).empty()) return BadXid(text);
  return xid;
}

bool ParseXaCompletion(absl::string_view query, XaId* xid, bool* commit) {
  absl::string_view s = query;
  if (!ConsumeWord(&s, "XA")) return false;
  bool c;
  if (ConsumeWord(&s, "COMMIT")) {
    c = true;
  } else if (ConsumeWord(&s, "ROLLBACK")) {
    c = false;
  } else {
    return false;
  }
  XaId x;
  if (!ParseXidPrefix(&s, &x)) return false;
  if (c) {
    absl::string_view t = s;
    if (ConsumeWord(&t, "ONE") && ConsumeWord(&t, "PHASE")) s = t;
  }
  if (!absl::StripAsciiWhitespace(s).empty()) return false;
  *xid = std::move(x);
  *commit = c;
  return true;
}

const XaRecord* XidRecoveryScan::FindXa(const XaId& xid) const {
  for (const XaRecord& r : xa) {
    if (r.xid == xid) return &r;
  }
  return nullptr;
}

namespace internal {

absl::Status XidCollector::Add(const EventHeader& header, absl::string_view body) {
  if (header.type != kTransactionPayloadEvent) return AddOne(header, body);
  // A compressed transaction: its Xid (or DDL query) is inside.
  PayloadHeader ph;
  size_t n = 0;
  absl::Status s = DecodePayload(body, kMaxPayloadSize, &ph, &payload_, &n);
  if (!s.ok()) {
    return absl::DataLossError(
        absl::StrCat("Transaction_payload cannot be expanded: ", s.message()));
  }
  // Inner events carry no checksum footer (reference 6.13); DecodePayload
  // validated each event_size.
  absl::string_view inner = payload_.view();
  while (inner.size() >= kHeaderSize) {
    EventHeader h = DecodeHeader(inner);
    if (h.event_size < kHeaderSize || h.event_size > inner.size()) break;
    BINLOG_RETURN_IF_ERROR(
        AddOne(h, inner.substr(kHeaderSize, h.event_size - kHeaderSize)));
    inner.remove_prefix(h.event_size);
  }
  return absl::OkStatus();
}

absl::Status XidCollector::AddOne(const EventHeader& header,
                                  absl::string_view body) {
  switch (header.type) {
    case kGtidEvent:
    case kGtidTaggedEvent: {
      absl::StatusOr<MySqlGtidEvent> g = DecodeAnyMySqlGtidEvent(header.type, body);
      if (!g.ok()) return g.status();
      has_gtid_ = true;
      tsid_ = g->tsid();
      gno_ = g->gno;
      return absl::OkStatus();
    }
    case kMariaGtidEvent: {
      absl::StatusOr<MariaGtid> g = DecodeMariaGtid(body);
      if (!g.ok()) return g.status();
      has_maria_gtid_ = true;
      maria_.domain_id = g->domain_id;
      maria_.server_id = header.server_id;
      maria_.seq_no = g->seq_no;
      if (g->has_xid) {
        XaId x;
        x.format_id = g->xid_format_id;
        x.gtrid = g->xid_gtrid;
        x.bqual = g->xid_bqual;
        if ((g->flags2 & MariaGtid::kFlagCompletedXa) != 0) {
          maria_completed_xa_ = true;
          maria_xid_ = x;
        } else if ((g->flags2 & MariaGtid::kFlagPreparedXa) != 0) {
          xa_.push_back({std::move(x), XaState::kPrepared});
        }
      }
      return absl::OkStatus();
    }
    case kXidEvent: {
      absl::StatusOr<uint64_t> x = DecodeXid(body);
      if (!x.ok()) return x.status();
      xids_.push_back(*x);
      return absl::OkStatus();
    }
    case kXaPrepareEvent: {
      absl::StatusOr<XaPrepareInfo> p = DecodeXaPrepare(body);
      if (!p.ok()) return p.status();
      XaId x;
      x.format_id = p->format_id;
      x.gtrid = std::string(p->gtrid);
      x.bqual = std::string(p->bqual);
      xa_.push_back({std::move(x),
                     p->one_phase ? XaState::kCommitted : XaState::kPrepared});
      return absl::OkStatus();
    }
    case kQueryEvent:
    case kMariaQueryCompressedEvent: {
      // Query_compressed (165): the fixed part and status variables as a
      // Query event's, the statement compressed.
      absl::StatusOr<QueryInfo> q = DecodeQuery(body, query_post_header_len_);
      if (!q.ok()) return q.status();
      absl::StatusOr<QueryStatusVars> vars = DecodeQueryStatusVars(q->status_vars);
      if (!vars.ok()) return vars.status();
      uint64_t xid;
      if (vars->xid(&xid)) xids_.push_back(xid);
      absl::string_view text = q->query;
      if (header.type == kMariaQueryCompressedEvent) {
        absl::StatusOr<CompressedQueryInfo> cq =
            DecodeMariaCompressedQuery(body, query_post_header_len_);
        if (!cq.ok()) return cq.status();
        query_text_ = std::move(cq->query);
        text = query_text_;
      }
      XaId x;
      bool commit;
      if (ParseXaCompletion(text, &x, &commit)) {
        xa_.push_back({std::move(x),
                       commit ? XaState::kCommitted : XaState::kRolledBack});
        maria_completed_xa_ = false;  // the query named it
      }
      return absl::OkStatus();
    }
    default:
      return absl::OkStatus();
  }
}

absl::Status XidCollector::Commit() {
  if (maria_completed_xa_) {
    // FL_COMPLETED_XA, but no statement said XA COMMIT or XA ROLLBACK:
    // guessing could commit what the client rolled back.
    std::string what = maria_xid_.ToString();
    Drop();
    return absl::DataLossError(absl::StrCat(
        "the XA completion of ", what,
        " (a Gtid event flagged FL_COMPLETED_XA) has no XA COMMIT or XA "
        "ROLLBACK statement"));
  }
  for (uint64_t x : xids_) out_->xids.insert(x);
  for (PendingXa& p : xa_) {
    // Records another collector added to the same scan (the files a
    // checkpoint names, then the last file) join the index first.
    for (; indexed_ < out_->xa.size(); ++indexed_) {
      xa_index_.emplace(out_->xa[indexed_].xid, indexed_);
    }
    auto it = xa_index_.find(p.xid);
    if (it != xa_index_.end()) {
      out_->xa[it->second].state = p.state;
    } else {
      xa_index_.emplace(p.xid, out_->xa.size());
      out_->xa.push_back({std::move(p.xid), p.state});
      indexed_ = out_->xa.size();
    }
  }
  if (has_gtid_ && !tsid_.uuid.IsZero() && gno_ > 0) out_->gtids.Add(tsid_, gno_);
  if (has_maria_gtid_) out_->mariadb_gtids.push_back(maria_);
  Drop();
  return absl::OkStatus();
}

void XidCollector::Drop() {
  xids_.clear();
  xa_.clear();
  has_gtid_ = false;
  has_maria_gtid_ = false;
  maria_completed_xa_ = false;
}

}  // namespace internal
}  // namespace binlog
