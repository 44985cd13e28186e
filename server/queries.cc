#include "server/queries.h"

#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "server/protocol.h"

namespace binlog {
namespace server {
namespace {

QueryResult Error(uint16_t code, absl::string_view state, std::string msg) {
  QueryResult r;
  r.kind = QueryResult::kError;
  r.error_code = code;
  r.sql_state = std::string(state);
  r.message = std::move(msg);
  return r;
}

QueryResult NotSupported(absl::string_view sql) {
  return Error(kErNotSupported, "42000",
               absl::StrCat("binlog_server answers only the statements replicas "
                            "send at connect; not supported: ",
                            sql.substr(0, 200)));
}

// Splits at top-level commas (outside quotes and parentheses).
std::vector<std::string> SplitList(absl::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  char quote = 0;
  int depth = 0;
  for (char c : s) {
    if (quote) {
      cur.push_back(c);
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '\'' || c == '"' || c == '`') quote = c;
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(std::string(absl::StripAsciiWhitespace(cur)));
      cur.clear();
      continue;
    }
    cur.push_back(c);
  }
  out.push_back(std::string(absl::StripAsciiWhitespace(cur)));
  return out;
}

bool IsQuoted(absl::string_view s) {
  return s.size() >= 2 && (s.front() == '\'' || s.front() == '"') && s.back() == s.front();
}

std::string Unquote(absl::string_view s) {
  std::string out;
  for (size_t i = 1; i + 1 < s.size(); ++i) {
    if (s[i] == '\\' && i + 2 < s.size()) {
      out.push_back(s[++i]);
    } else if (s[i] == s.front() && i + 2 < s.size() && s[i + 1] == s.front()) {
      out.push_back(s[++i]);
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

// SQL LIKE, case-insensitive: '%' matches any run of characters, '_' one.
// Iterative, with the classic backtrack to the last '%' seen: on a
// mismatch, that '%' absorbs one more character and matching resumes
// after it. Earlier '%'s never need revisiting (the last one can absorb
// whatever they would have), so the time is O(|s| * |p|) at worst and the
// stack does not grow with the pattern.
bool Like(absl::string_view s, absl::string_view p) {
  constexpr size_t kNone = absl::string_view::npos;
  size_t i = 0, j = 0;
  size_t after_star = kNone;  // pattern index just past the last '%'
  size_t star_from = 0;       // where in `s` that '%' started absorbing
  while (i < s.size()) {
    if (j < p.size() && p[j] == '%') {
      while (j < p.size() && p[j] == '%') ++j;  // a run of '%' is one '%'
      after_star = j;
      star_from = i;
    } else if (j < p.size() &&
               (p[j] == '_' || absl::ascii_tolower(p[j]) == absl::ascii_tolower(s[i]))) {
      ++i;
      ++j;
    } else if (after_star != kNone) {
      j = after_star;
      i = ++star_from;
    } else {
      return false;
    }
  }
  while (j < p.size() && p[j] == '%') ++j;
  return j == p.size();
}

std::optional<std::string> SysVar(const ServerFacts& f, absl::string_view name) {
  for (const auto& [k, v] : SystemVariables(f)) {
    if (absl::EqualsIgnoreCase(k, name)) return v;
  }
  return std::nullopt;
}

// Evaluates a SELECT or SET expression. false: unknown system variable
// (`*err` set) or unsupported expression.
bool Eval(absl::string_view e, const ServerFacts& f, const SessionVars& vars,
          absl::Time now, std::optional<std::string>* out, QueryResult* err) {
  std::string lower = absl::AsciiStrToLower(e);
  if (lower == "unix_timestamp()") {
    *out = absl::StrCat(absl::ToUnixSeconds(now));
    return true;
  }
  if (lower == "version()") {
    *out = f.version;
    return true;
  }
  if (lower == "null") {
    *out = std::nullopt;
    return true;
  }
  if (absl::StartsWith(lower, "@@")) {
    absl::string_view n = absl::string_view(lower).substr(2);
    absl::ConsumePrefix(&n, "global.");
    absl::ConsumePrefix(&n, "session.");
    absl::ConsumePrefix(&n, "local.");
    std::optional<std::string> v = SysVar(f, n);
    if (!v.has_value()) {
      *err = Error(kErUnknownSystemVariable, "HY000",
                   absl::StrCat("Unknown system variable '", n, "'"));
      return false;
    }
    *out = v;
    return true;
  }
  if (absl::StartsWith(lower, "@")) {
    auto it = vars.find(lower.substr(1));
    *out = it == vars.end() ? std::nullopt : it->second;
    return true;
  }
  if (IsQuoted(e)) {
    *out = Unquote(e);
    return true;
  }
  double d;
  if (!e.empty() && absl::SimpleAtod(e, &d)) {
    *out = std::string(e);
    return true;
  }
  *err = Error(kErNotSupported, "42000",
               absl::StrCat("binlog_server cannot evaluate: ", e.substr(0, 200)));
  return false;
}

QueryResult Set(absl::string_view rest, const ServerFacts& f, SessionVars* vars,
                absl::Time now, const QueryLimits& limits) {
  // Applied to a copy: a SET past a limit changes nothing.
  SessionVars next = *vars;
  for (const std::string& item : SplitList(rest)) {
    absl::string_view a = item;
    if (absl::StartsWithIgnoreCase(a, "names ") ||
        absl::StartsWithIgnoreCase(a, "character set ")) {
      continue;
    }
    size_t eq = a.find('=');
    if (eq == absl::string_view::npos) return NotSupported(absl::StrCat("SET ", rest));
    std::string name = absl::AsciiStrToLower(absl::StripAsciiWhitespace(a.substr(0, eq)));
    absl::string_view expr = absl::StripAsciiWhitespace(a.substr(eq + 1));
    if (!expr.empty() && expr[0] == '=') expr.remove_prefix(1);  // ':='
    if (!name.empty() && name.back() == ':') name.pop_back();
    name = std::string(absl::StripAsciiWhitespace(name));
    if (name.empty()) return NotSupported(absl::StrCat("SET ", rest));
    if (absl::StartsWith(name, "@@") || name[0] != '@') continue;  // session settings: ignored
    std::optional<std::string> v;
    QueryResult err;
    if (!Eval(expr, f, next, now, &v, &err)) return err;
    next[name.substr(1)] = v;
  }
  if (next.size() > limits.max_variables) {
    return Error(kErOutOfResources, "HY000",
                 absl::StrCat("more than max_session_variables (", limits.max_variables,
                              ") user variables in this session"));
  }
  size_t bytes = 0;
  for (const auto& [k, v] : next) bytes += k.size() + (v.has_value() ? v->size() : 0);
  if (bytes > limits.max_variable_bytes) {
    return Error(kErOutOfResources, "HY000",
                 absl::StrCat("user variables of this session would take ", bytes,
                              " bytes, more than max_session_variable_bytes (",
                              limits.max_variable_bytes, ")"));
  }
  *vars = std::move(next);
  return QueryResult();
}

QueryResult Select(absl::string_view rest, const ServerFacts& f,
                   const SessionVars& vars, absl::Time now, const QueryLimits& limits) {
  std::string lower = absl::AsciiStrToLower(rest);
  size_t limit = lower.rfind(" limit ");
  if (limit != std::string::npos) rest = rest.substr(0, limit);
  QueryResult r;
  r.kind = QueryResult::kResultSet;
  r.rows.emplace_back();
  size_t bytes = 0;
  for (const std::string& item : SplitList(rest)) {
    absl::string_view e = item;
    std::string name(e);
    // "expr AS alias"
    std::string li = absl::AsciiStrToLower(item);
    size_t as = li.rfind(" as ");
    if (as != std::string::npos) {
      name = std::string(absl::StripAsciiWhitespace(e.substr(as + 4)));
      if (name.size() >= 2 && name.front() == '`') name = name.substr(1, name.size() - 2);
      e = absl::StripAsciiWhitespace(e.substr(0, as));
    }
    std::optional<std::string> v;
    QueryResult err;
    if (!Eval(e, f, vars, now, &v, &err)) return err;
    bytes += name.size() + (v.has_value() ? v->size() : 0);
    if (bytes > limits.max_result_bytes) {
      return Error(kErNetPacketTooLarge, "08S01",
                   absl::StrCat("The answer to this SELECT is larger than max_packet (",
                                limits.max_result_bytes, " bytes)"));
    }
    r.columns.push_back(name);
    r.rows.back().push_back(v);
  }
  return r;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> SystemVariables(
    const ServerFacts& f) {
  const bool maria = f.flavor == LogFlavor::kMariaDB;
  std::vector<std::pair<std::string, std::string>> v = {
      {"server_id", absl::StrCat(f.server_id)},
      {"server_uuid", f.server_uuid},
      {"binlog_checksum", f.checksums ? "CRC32" : "NONE"},
      {"log_bin", "ON"},
      {"binlog_format", "ROW"},
      {"binlog_row_image", "FULL"},
      {"binlog_row_metadata", "FULL"},
      {"version", f.version},
      {"version_comment", "binlog_server (binlog storage library)"},
      {"max_allowed_packet", "1073741824"},
      {"port", absl::StrCat(f.port)},
      {"hostname", "localhost"},
      {"lower_case_table_names", "0"},
      {"character_set_server", "utf8mb4"},
      {"collation_server", "utf8mb4_general_ci"},
      {"time_zone", "SYSTEM"},
      {"system_time_zone", "UTC"},
      {"rpl_semi_sync_master_enabled", f.semisync ? "ON" : "OFF"},
      {"rpl_semi_sync_source_enabled", f.semisync ? "ON" : "OFF"},
  };
  if (maria) {
    v.push_back({"gtid_domain_id", "0"});
    v.push_back({"gtid_binlog_pos", f.maria_binlog_pos});
    v.push_back({"gtid_current_pos", f.maria_binlog_pos});
    v.push_back({"gtid_binlog_state", f.maria_binlog_state});
    v.push_back({"gtid_strict_mode", "OFF"});
  } else {
    v.push_back({"gtid_mode", f.gtid_executed.empty() ? "OFF" : "ON"});
    v.push_back({"enforce_gtid_consistency", f.gtid_executed.empty() ? "OFF" : "ON"});
    v.push_back({"gtid_executed", f.gtid_executed});
    v.push_back({"gtid_purged", f.gtid_purged});
  }
  return v;
}

QueryResult AnswerQuery(absl::string_view sql, const ServerFacts& f,
                        SessionVars* vars, absl::Time now, const QueryLimits& limits) {
  absl::string_view s = absl::StripAsciiWhitespace(sql);
  // Leading comments (/* ... */), as client libraries add.
  while (absl::StartsWith(s, "/*")) {
    size_t end = s.find("*/");
    if (end == absl::string_view::npos) break;
    s = absl::StripAsciiWhitespace(s.substr(end + 2));
  }
  while (!s.empty() && (s.back() == ';' || absl::ascii_isspace(s.back()))) {
    s.remove_suffix(1);
  }
  if (s.empty()) return Error(kErParse, "42000", "Query was empty");
  std::string lower = absl::AsciiStrToLower(s);
  // Collapse runs of spaces for the keyword matches.
  std::string norm;
  for (char c : lower) {
    if (absl::ascii_isspace(c)) {
      if (!norm.empty() && norm.back() != ' ') norm.push_back(' ');
    } else {
      norm.push_back(c);
    }
  }
  if (absl::StartsWith(norm, "set ")) {
    return Set(absl::StripAsciiWhitespace(s.substr(4)), f, vars, now, limits);
  }
  if (absl::StartsWith(norm, "select ")) {
    return Select(absl::StripAsciiWhitespace(s.substr(7)), f, *vars, now, limits);
  }
  if (absl::StartsWith(norm, "show ")) {
    absl::string_view rest = absl::string_view(norm).substr(5);
    absl::ConsumePrefix(&rest, "global ");
    absl::ConsumePrefix(&rest, "session ");
    if (absl::ConsumePrefix(&rest, "variables")) {
      std::string pattern = "%";
      rest = absl::StripAsciiWhitespace(rest);
      if (absl::ConsumePrefix(&rest, "like ")) {
        // The pattern as written (case matters not for LIKE here).
        size_t at = lower.find(" like ");
        absl::string_view p = absl::StripAsciiWhitespace(s.substr(at + 6));
        if (!IsQuoted(p)) return NotSupported(s);
        pattern = Unquote(p);
      } else if (!rest.empty()) {
        return NotSupported(s);
      }
      QueryResult r;
      r.kind = QueryResult::kResultSet;
      r.columns = {"Variable_name", "Value"};
      for (const auto& [k, v] : SystemVariables(f)) {
        if (Like(k, pattern)) r.rows.push_back({k, v});
      }
      return r;
    }
    if (rest == "master status" || rest == "binary log status") {
      QueryResult r;
      r.kind = QueryResult::kResultSet;
      r.columns = {"File", "Position", "Binlog_Do_DB", "Binlog_Ignore_DB"};
      std::vector<std::optional<std::string>> row = {
          f.current_file, absl::StrCat(f.current_position), "", ""};
      if (f.flavor == LogFlavor::kMySQL) {
        r.columns.push_back("Executed_Gtid_Set");
        row.push_back(f.gtid_executed);
      }
      r.rows.push_back(std::move(row));
      return r;
    }
    if (rest == "replicas" || rest == "slave hosts" || rest == "replica hosts") {
      QueryResult r;
      r.kind = QueryResult::kResultSet;
      const bool maria = f.flavor == LogFlavor::kMariaDB && rest != "replicas";
      if (rest == "replicas") {
        r.columns = {"Server_Id", "Host", "Port", "Source_Id", "Replica_UUID"};
      } else if (maria) {
        r.columns = {"Server_id", "Host", "Port", "Master_id"};
      } else {
        r.columns = {"Server_Id", "Host", "Port", "Master_Id", "Slave_UUID"};
      }
      r.columns.push_back("Semi_Sync_Acked_File");
      r.columns.push_back("Semi_Sync_Acked_Position");
      r.columns.push_back("Sent_File");
      r.columns.push_back("Sent_Position");
      for (const ReplicaFacts& rep : f.replicas) {
        std::vector<std::optional<std::string>> row = {
            absl::StrCat(rep.server_id), rep.host, absl::StrCat(rep.port),
            absl::StrCat(rep.source_id)};
        if (!maria) row.push_back(rep.uuid);
        if (rep.acked) {
          row.push_back(rep.acked_file);
          row.push_back(absl::StrCat(rep.acked_position));
        } else {
          row.push_back(std::nullopt);
          row.push_back(std::nullopt);
        }
        if (rep.sent) {
          row.push_back(rep.sent_file);
          row.push_back(absl::StrCat(rep.sent_position));
        } else {
          row.push_back(std::nullopt);
          row.push_back(std::nullopt);
        }
        r.rows.push_back(std::move(row));
      }
      return r;
    }
    if (rest == "binary logs" || rest == "master logs") {
      QueryResult r;
      r.kind = QueryResult::kResultSet;
      r.columns = {"Log_name", "File_size"};
      for (const auto& [name, size] : f.files) r.rows.push_back({name, absl::StrCat(size)});
      return r;
    }
  }
  return NotSupported(s);
}

}  // namespace server
}  // namespace binlog
