#include "binlog/transaction_boundary.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "binlog/format.h"

namespace binlog {
namespace {

enum class Class {
  kGtid,
  kMariaGtid,
  kBegin,
  kEnd,
  kEndXa,
  kStatement,
  kPreStatement,
  kIncident,
  kPayload,
  kIgnore,
  kError,
};

Class ClassifyQuery(absl::string_view q) {
  if (q == "BEGIN" || absl::StartsWithIgnoreCase(q, "XA START")) {
    return Class::kBegin;
  }
  if (q == "COMMIT") return Class::kEnd;
  if (absl::StartsWithIgnoreCase(q, "ROLLBACK") &&
      !absl::StartsWithIgnoreCase(q, "ROLLBACK TO ")) {
    return Class::kEnd;
  }
  if (absl::StartsWithIgnoreCase(q, "XA ROLLBACK")) return Class::kEndXa;
  return Class::kStatement;
}

}  // namespace

const char* BoundaryResultName(TransactionBoundaryParser::Result r) {
  using R = TransactionBoundaryParser::Result;
  switch (r) {
    case R::kOutside: return "outside";
    case R::kStarted: return "started";
    case R::kInside: return "inside";
    case R::kEnded: return "ended";
    case R::kUnexpected: return "unexpected";
  }
  return "?";
}

TransactionBoundaryParser::Result TransactionBoundaryParser::Feed(
    const EventHeader& header, absl::string_view body) {
  Class c;
  switch (header.type) {
    case kGtidEvent:
    case kAnonymousGtidEvent:
    case kGtidTaggedEvent:
      c = Class::kGtid;
      break;
    case kMariaGtidEvent:
      c = Class::kMariaGtid;
      break;
    case kQueryEvent:
    case kMariaQueryCompressedEvent: {
      auto q = DecodeQuery(body, query_phl_);
      if (!q.ok()) {
        c = Class::kStatement;
      } else if (header.type == kMariaQueryCompressedEvent) {
        c = Class::kStatement;  // compressed text is never BEGIN/COMMIT
      } else {
        c = ClassifyQuery(q->query);
      }
      break;
    }
    case kXidEvent:
    case kXaPrepareEvent:
      c = Class::kEnd;
      break;
    case kIntvarEvent:
    case kRandEvent:
    case kUserVarEvent:
    case kMariaAnnotateRowsEvent:
      c = Class::kPreStatement;
      break;
    case kTableMapEvent:
    case kWriteRowsEventV1:
    case kUpdateRowsEventV1:
    case kDeleteRowsEventV1:
    case kWriteRowsEvent:
    case kUpdateRowsEvent:
    case kDeleteRowsEvent:
    case kPartialUpdateRowsEvent:
    case kRowsQueryEvent:
    case kExecuteLoadQueryEvent:
    case kAppendBlockEvent:
    case kBeginLoadQueryEvent:
    case kViewChangeEvent:
    case kMariaWriteRowsCompressedEventV1:
    case kMariaUpdateRowsCompressedEventV1:
    case kMariaDeleteRowsCompressedEventV1:
    case kMariaWriteRowsCompressedEvent:
    case kMariaUpdateRowsCompressedEvent:
    case kMariaDeleteRowsCompressedEvent:
      c = Class::kStatement;
      break;
    case kIncidentEvent:
      c = Class::kIncident;
      break;
    case kTransactionPayloadEvent:
      c = Class::kPayload;
      break;
    case kRotateEvent:
    case kFormatDescriptionEvent:
    case kHeartbeatEvent:
    case kHeartbeatEventV2:
    case kPreviousGtidsEvent:
    case kStopEvent:
    case kDeleteFileEvent:
    case kTransactionContextEvent:
    case kIgnorableEvent:
    case kMariaBinlogCheckpointEvent:
    case kMariaGtidListEvent:
    case kMariaStartEncryptionEvent:
      c = Class::kIgnore;
      break;
    default:
      c = (header.flags & kFlagIgnorable) ? Class::kIgnore : Class::kError;
      break;
  }

  switch (c) {
    case Class::kIgnore:
      return state_ == State::kNone ? Result::kOutside : Result::kInside;
    case Class::kError:
      Reset();
      return Result::kUnexpected;
    case Class::kGtid:
      if (state_ != State::kNone) {
        Reset();
        state_ = State::kGtid;
        return Result::kUnexpected;
      }
      state_ = State::kGtid;
      return Result::kStarted;
    case Class::kMariaGtid: {
      bool was_open = state_ != State::kNone;
      auto g = DecodeMariaGtid(body);
      // XA COMMIT / XA ROLLBACK groups (FL_COMPLETED_XA) are one statement
      // with no terminating event, like stand-alone groups.
      maria_standalone_ =
          g.ok() && (g->flags2 & (kMariaGtidStandalone | kMariaGtidCompletedXa));
      // A MariaDB group is open from its GTID: there is no separate BEGIN.
      state_ = maria_standalone_ ? State::kGtid : State::kDml;
      if (was_open) return Result::kUnexpected;
      return Result::kStarted;
    }
    case Class::kBegin:
      if (state_ == State::kNone) {
        state_ = State::kDml;
        return Result::kStarted;
      }
      if (state_ == State::kGtid) {
        state_ = State::kDml;
        return Result::kInside;
      }
      if (state_ == State::kDml && !maria_standalone_) {
        // MariaDB groups may carry an explicit BEGIN after the GTID.
        return Result::kInside;
      }
      Reset();
      return Result::kUnexpected;
    case Class::kEnd:
      if (state_ == State::kDml) {
        Reset();
        return Result::kEnded;
      }
      if (state_ == State::kNone && header.type == kQueryEvent) {
        // A COMMIT/ROLLBACK statement on its own: a statement transaction.
        return Result::kEnded;
      }
      if (state_ == State::kGtid || state_ == State::kDdl) {
        // MySQL: Gtid then XA_prepare/ROLLBACK query; treat as ending.
        Reset();
        return Result::kEnded;
      }
      Reset();
      return Result::kUnexpected;
    case Class::kEndXa:
      if (state_ == State::kDml || state_ == State::kGtid ||
          state_ == State::kDdl) {
        Reset();
        return Result::kEnded;
      }
      return Result::kEnded;  // stand-alone XA ROLLBACK without GTID
    case Class::kStatement:
      switch (state_) {
        case State::kNone:
          return Result::kEnded;  // a stand-alone statement (no GTIDs)
        case State::kGtid:
        case State::kDdl:
          Reset();
          return Result::kEnded;
        case State::kDml:
          return Result::kInside;
      }
      break;
    case Class::kPreStatement:
      if (state_ == State::kNone) {
        state_ = State::kDdl;
        return Result::kStarted;
      }
      if (state_ == State::kGtid) state_ = State::kDdl;
      return Result::kInside;
    case Class::kIncident:
      Reset();
      return Result::kEnded;
    case Class::kPayload:
      if (state_ == State::kGtid) {
        Reset();
        return Result::kEnded;
      }
      if (state_ == State::kNone) return Result::kEnded;
      Reset();
      return Result::kUnexpected;
  }
  return Result::kUnexpected;
}

}  // namespace binlog
