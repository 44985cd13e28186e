#!/usr/bin/env python3
"""End-to-end tests of binlogtool's decoding and scanning commands.

  GoldenTest        dump/list/verify/stats/find output on the MariaDB corpus
                    equals tests/tools/golden/ (update_goldens.sh regenerates)
  CorpusRowsTest    decoded row images equal the values the corpus
                    generator (tools/workload.py, seed 1101) inserted,
                    updated and deleted, as quoted by the Annotate_rows
                    events that precede them
  GeneratedTest     binlogs written by //tools:binlog_gen (every common
                    column type, MySQL GTIDs): rows, find, stats, ranges
  EncryptedTest     an encrypted log (binlog_gen --encrypt-keyring-file)
                    reads with --keyring_file as the plain one does
  FollowTest        follow sees appends and rotations while binlog_gen writes
  FindCorpusTest    find --gtid / --datetime against the corpus manifests
  VerifyCorruptionTest  each kind of damage is found
  ProgressTest      the progress indicator appears on a terminal only
  HelpTest          --help for every command, with examples
  HostileTest       random damage never crashes any command

Started by binlogtool_features_test.sh (an sh_test, so python3 comes from
PATH).
"""

import datetime
import decimal
import json
import os
import pty
import random
import re
import select
import shutil
import signal
import struct
import subprocess
import tempfile
import time
import unittest

SRCDIR = os.environ["TEST_SRCDIR"]
TOOL = os.path.join(SRCDIR, "binlog_storage", "tools", "binlogtool")
GEN = os.path.join(SRCDIR, "binlog_storage", "tools", "binlog_gen")
CORPUS = os.path.join(SRCDIR, "binlog_storage", "tests", "data", "mariadb")
WORKLOAD = os.path.join(CORPUS, "tools", "workload.py")
GOLDEN = os.path.join(SRCDIR, "binlog_storage", "tests", "tools", "golden")
UUID = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
STATUSES = ["new", "paid", "shipped", "void"]


def run(*args, cwd=None, env=None, timeout=120):
    r = subprocess.run([TOOL] + list(args), capture_output=True,
                       timeout=timeout, cwd=cwd, env=env)
    if r.returncode < 0:
        raise AssertionError(f"binlogtool {args} died with signal "
                             f"{-r.returncode}: {r.stderr[-2000:]!r}")
    return r.returncode, r.stdout.decode("utf-8"), r.stderr.decode(
        "utf-8", errors="replace")


def parse_jsonl(text):
    out = []
    # Split at "\n" only (not str.splitlines, which also splits at U+2028
    # and friends): every record ends with "\n".
    if not text:
        return out
    assert text.endswith("\n"), text[-200:]
    for i, line in enumerate(text[:-1].split("\n")):
        obj = json.loads(line)
        assert isinstance(obj, dict), f"line {i + 1}: {line[:200]}"
        out.append(obj)
    return out


def tmpdir():
    return tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))


def gen(directory, *args, manifest=True):
    cmd = [GEN, f"--dir={directory}"] + list(args)
    path = None
    if manifest:
        path = directory + ".manifest"
        cmd.append(f"--manifest={path}")
    subprocess.run(cmd, check=True, timeout=300)
    if not manifest:
        return None
    with open(path) as f:
        return [json.loads(l) for l in f]


def corpus_dir(scenario):
    return os.path.join(CORPUS, scenario, "binlogs")


def manifest(scenario):
    with open(os.path.join(CORPUS, scenario, "manifest.json")) as f:
        return json.load(f)


# The tool's rule for column values: bytes that are valid UTF-8 are a JSON
# string, any other bytes {"hex": "..."} (tools/README.md), so the exact
# bytes always come back.
def as_tool_value(data):
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return {"hex": data.hex()}


def tool_value_bytes(v):
    return v.encode("utf-8") if isinstance(v, str) else bytes.fromhex(v["hex"])


def utc(seconds):
    return datetime.datetime.fromtimestamp(
        seconds, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


# ---------------------------------------------------------------------------
# Golden files


class GoldenTest(unittest.TestCase):

    def test_outputs_equal_the_goldens(self):
        entries = []
        with open(os.path.join(GOLDEN, "GOLDENS")) as f:
            for line in f:
                line = line.strip()
                if line and not line.startswith("#"):
                    name, rc, *args = line.split()
                    entries.append((name, int(rc), args))
        self.assertGreaterEqual(len(entries), 10)
        for name, want_rc, args in entries:
            with self.subTest(golden=name):
                rc, out, err = run(*args, cwd=CORPUS)
                self.assertEqual(rc, want_rc, err)
                with open(os.path.join(GOLDEN, name), encoding="utf-8") as f:
                    want = f.read()
                if out != want:
                    got, exp = out.splitlines(), want.splitlines()
                    for i, (a, b) in enumerate(zip(got, exp)):
                        if a != b:
                            self.fail(f"{name}: line {i + 1} differs:\n"
                                      f"  got:  {a[:300]}\n  want: {b[:300]}\n"
                                      "regenerate with "
                                      "tests/tools/update_goldens.sh if the "
                                      "change is intended")
                    self.fail(f"{name}: {len(got)} lines, golden has "
                              f"{len(exp)}")
                if name.endswith(".jsonl"):
                    parse_jsonl(out)


# ---------------------------------------------------------------------------
# Row decoding against the corpus generator's values


def sql_values(stmt):
    """The tuples of an INSERT ... VALUES (...), (...) statement as Python
    values: int, decimal.Decimal, str ('...'), bytes (X'...'), None."""
    i = stmt.index(" VALUES") + len(" VALUES")
    rows, row, n = [], None, len(stmt)
    while i < n:
        c = stmt[i]
        if c in " \n,;":
            i += 1
        elif c == "(":
            row = []
            i += 1
        elif c == ")":
            rows.append(row)
            row = None
            i += 1
        elif c == "'":
            j, buf = i + 1, []
            while True:
                if stmt[j] == "\\":
                    buf.append(stmt[j + 1])
                    j += 2
                elif stmt[j] == "'" and j + 1 < n and stmt[j + 1] == "'":
                    buf.append("'")
                    j += 2
                elif stmt[j] == "'":
                    break
                else:
                    buf.append(stmt[j])
                    j += 1
            row.append("".join(buf))
            i = j + 1
        elif stmt.startswith("X'", i):
            j = stmt.index("'", i + 2)
            row.append(bytes.fromhex(stmt[i + 2:j]))
            i = j + 1
        elif stmt.startswith("NULL", i):
            row.append(None)
            i += 4
        else:
            m = re.match(r"-?\d+(\.\d+)?", stmt[i:])
            text = m.group(0)
            row.append(decimal.Decimal(text) if "." in text else int(text))
            i += len(text)
    return rows


class CorpusRowsTest(unittest.TestCase):
    """s1-row-crc32 was written by `workload.py row --seed 1101 ...`; every
    Rows event follows the Annotate_rows event quoting its statement."""

    @classmethod
    def setUpClass(cls):
        rc, out, err = run("dump", "--format=jsonl", "--decode-rows",
                           corpus_dir("s1-row-crc32"))
        assert rc == 0, err
        cls.events = parse_jsonl(out)
        # The statements, with the rows events of each.
        cls.statements = []
        for e in cls.events:
            if e["type_name"] == "ANNOTATE_ROWS_EVENT":
                cls.statements.append((e["query"], []))
            elif "rows" in e:
                assert "rows_error" not in e, e
                assert e["row_count"] == len(e["rows"]), e
                cls.statements[-1][1].append(e)

    def check_value(self, column, want, got, where):
        if want is None:
            self.assertIsNone(got, where)
        elif column == "payload":
            if isinstance(want, str):  # '' for an empty BLOB
                want = want.encode()
            self.assertEqual(got, as_tool_value(want), where)
            self.assertEqual(tool_value_bytes(got), want, where)
        elif column in ("price", "amount"):
            self.assertEqual(decimal.Decimal(got), want, where)
        elif column == "status":
            self.assertEqual(got, STATUSES.index(want) + 1, where)
        else:
            self.assertEqual(got, want, where)

    def test_inserted_rows_equal_the_statements(self):
        checked = 0
        for stmt, events in self.statements:
            m = re.match(r"INSERT INTO `vis_(items|ledger)` \(([^)]*)\)", stmt)
            if not m:
                continue
            names = [c.strip() for c in m.group(2).split(",")]
            want_rows = sql_values(stmt)
            got_rows = [r["after"] for e in events for r in e["rows"]]
            self.assertEqual(len(got_rows), len(want_rows), stmt[:100])
            for event in events:
                self.assertEqual(event["table"], "vis_" + m.group(1))
            columns_in_table = events[0]["rows"][0]["after"].keys()
            if m.group(1) == "items":
                # id big name [extra] notes payload price created doc status
                order = ["id", "big", "name"]
                if len(columns_in_table) == 10:
                    order.append("extra")
                order += ["notes", "payload", "price", "created", "doc",
                          "status"]
            else:
                order = ["id", "item_id", "amount", "memo", "at"]
            for want, got in zip(want_rows, got_rows):
                for name, value in zip(names, want):
                    key = "@%d" % (order.index(name) + 1)
                    self.check_value(name, value, got[key],
                                     f"{stmt[:60]}... {name}")
                    checked += 1
        # 9 columns of a few hundred item rows plus the ledger rows.
        self.assertGreater(checked, 3000)

    def test_statements_come_from_the_seeded_workload(self):
        self.assertTrue(os.path.exists(WORKLOAD), WORKLOAD)
        sql = subprocess.run(
            ["python3", WORKLOAD, "row", "--seed", "1101", "--db", "shop",
             "--prefix", "vis", "--target-kb", "800", "--text-max", "600",
             "--blob-max", "500", "--xa", "--restart-at", "0.6"], capture_output=True, check=True,
            timeout=120).stdout.decode("utf-8")
        inserts = [s for s, _ in self.statements if s.startswith("INSERT")]
        self.assertGreater(len(inserts), 50)
        for stmt in inserts:
            self.assertIn(stmt + ";", sql)

    def test_updates_set_the_values_of_their_statement(self):
        checked = 0
        for stmt, events in self.statements:
            m = re.match(r"UPDATE `vis_items` SET price = (-?[\d.]+), status = "
                         r"'(\w+)' WHERE id IN \(([\d, ]+)\)$", stmt)
            if not m:
                continue
            ids = {int(x) for x in m.group(3).split(",")}
            rows = [r for e in events for r in e["rows"]]
            self.assertEqual(len(rows), len(ids), stmt)
            for r in rows:
                # After ALTER TABLE ... ADD COLUMN extra AFTER name, the
                # table has 10 columns and price/status move by one.
                shift = 1 if len(r["after"]) == 10 else 0
                price, status = "@%d" % (6 + shift), "@%d" % (9 + shift)
                self.assertIn(r["before"]["@1"], ids)
                self.assertEqual(r["after"]["@1"], r["before"]["@1"])
                self.assertEqual(decimal.Decimal(r["after"][price]),
                                 decimal.Decimal(m.group(1)))
                self.assertEqual(r["after"][status],
                                 STATUSES.index(m.group(2)) + 1)
                # Untouched columns keep their values.
                for col in r["after"]:
                    if col not in (price, status):
                        self.assertEqual(r["after"][col], r["before"][col])
                checked += 1
        self.assertGreater(checked, 20)

    def test_deletes_remove_the_listed_ids(self):
        checked = 0
        for stmt, events in self.statements:
            m = re.match(r"DELETE FROM `vis_items` WHERE id IN \(([\d, ]+)\)$",
                         stmt)
            if not m:
                continue
            ids = sorted(int(x) for x in m.group(1).split(","))
            got = sorted(r["before"]["@1"] for e in events for r in e["rows"])
            self.assertEqual(got, ids, stmt)
            for e in events:
                self.assertEqual(e["type_name"], "DELETE_ROWS_EVENT_V1")
            checked += 1
        self.assertGreater(checked, 10)

    def test_every_rows_event_of_the_corpus_decodes(self):
        for scenario in ("s1-row-crc32", "s3-row-wide-nochecksum",
                         "s4-crash-kill9"):
            rc, out, err = run("dump", "--format=jsonl", "--decode-rows",
                               corpus_dir(scenario))
            self.assertEqual(rc, 0, err)
            rows_events = [e for e in parse_jsonl(out) if "row_count" in e
                           or "rows_error" in e]
            self.assertGreater(len(rows_events), 10)
            for e in rows_events:
                self.assertNotIn("rows_error", e)
                self.assertNotIn("decode_error", e)


# ---------------------------------------------------------------------------
# Generated binlogs: every column type


def expected_row(k):
    """Row k of binlog_gen's `gen`.`types` as binlogtool prints it in JSON
    (see the comments in tools/binlog_gen.cc)."""
    def signed(neg, text, zero):
        return ("-" if neg and not zero else "") + text

    v = (k * 12345) % 10**10
    tm_zero = k % 839 == 0 and k % 60 == 0 and k * 7 % 60 == 0 and \
        k % 1000 == 0
    told_zero = k % 100 == 0 and k % 60 == 0 and k * 3 % 60 == 0
    return {
        "@1": k,
        "@2": 2**64 - k,
        "@3": (k * 7) % 256,
        "@4": -((k * 13) % 32768),
        "@5": (k * 1000003) % 16777216 - 8388608,
        "@6": k + 0.25,
        "@7": k / 3.0,
        "@8": signed(k % 2 == 1, f"{v // 10000}.{v % 10000:04d}", v == 0),
        "@9": f"n{k}-é" + "z" * (k % 40),
        "@10": f"c{k % 10000000}",
        "@11": None if k % 5 == 0 else
        {"hex": bytes((k * i) % 256 for i in range(k % 7)).hex()},
        "@12": f"{1990 + k % 40:04d}-{1 + k % 12:02d}-{1 + k % 28:02d}",
        "@13": signed(k % 2 == 1, f"{k % 839:02d}:{k % 60:02d}:"
                      f"{k * 7 % 60:02d}.{k % 1000:03d}", tm_zero),
        "@14": f"{2000 + k % 100:04d}-{1 + k % 12:02d}-{1 + k % 28:02d} "
               f"{k % 24:02d}:{k % 60:02d}:{k * 11 % 60:02d}."
               f"{k * 7919 % 1000000:06d}",
        "@15": utc(1700000000 + k * 3601) + f".{k % 100:02d}",
        "@16": 1901 + k % 255,
        "@17": STATUSES[k % 4],
        "@18": ",".join(n for b, n in enumerate("abcd") if (k % 16) >> b & 1),
        "@19": k % 4096,
        "@20": {"a": [1, True, None], "k": k, "s": f"v{k}"},
        "@21": None if k % 3 == 0 else -k,
        "@22": ("-" if k % 2 == 0 else "") +
        f"{(k * 123456789012345) % 2**64}.{k * 7 % 10**10:010d}",
        "@23": utc(1600000000 + k),
        "@24": f"{1980 + k % 20:04d}-{1 + k % 12:02d}-{1 + k % 28:02d} "
               f"{k % 24:02d}:{k % 60:02d}:{k % 60:02d}",
        "@25": signed(k % 5 == 0, f"{k % 100:02d}:{k % 60:02d}:"
                      f"{k * 3 % 60:02d}", told_zero),
    }


START = 1800000000  # 2027-01-15 08:00:00 UTC


class GeneratedTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.dir = os.path.join(tmpdir(), "log")
        cls.txns = gen(cls.dir, "--transactions=60", "--rows=4",
                       f"--start-time={START}", "--tps=4",
                       "--max-file-size=16384")
        rc, out, err = run("dump", "--format=jsonl", "--decode-rows", cls.dir)
        assert rc == 0, err
        cls.events = parse_jsonl(out)

    def test_manifest_spans_several_files(self):
        self.assertGreater(len({t["file"] for t in self.txns}), 3)

    def test_every_column_type_decodes_to_the_generated_value(self):
        rows_events = [e for e in self.events if "rows" in e]
        self.assertEqual(len(rows_events), len(self.txns))
        checked = 0
        for t, e in zip(self.txns, rows_events):
            self.assertEqual((e["file"], e["table"], e["db"]),
                             (t["file"], "types", "gen"))
            self.assertEqual(e["row_count"], t["rows"])
            for r, row in enumerate(e["rows"]):
                k = t["first_row"] + r
                if t["kind"] == "write":
                    self.assertEqual(row["after"], expected_row(k))
                elif t["kind"] == "delete":
                    self.assertEqual(row["before"], expected_row(k))
                else:
                    self.assertEqual(row["before"], expected_row(k))
                    self.assertEqual(row["after"], expected_row(k + 500000))
                checked += 1
        self.assertEqual(checked, 60 * 4)

    def test_text_rows_use_names_types_and_literals(self):
        rc, out, err = run("dump", "--decode-rows", self.dir)
        self.assertEqual(rc, 0, err)
        self.assertIn(
            "  row 1 after: @1=1 @2=18446744073709551615 @3=7 @4=-13 "
            "@5=-7388605 @6=1.25 @7=0.3333333333333333 @8=\"-1.2345\" "
            "@9=\"n1-éz\" @10=\"c1\" @11=0x00 @12=\"1991-02-02\" "
            "@13=\"-01:01:07.001\" @14=\"2001-02-02 01:01:11.007919\" "
            "@15=\"2023-11-14 23:13:21.01\" @16=1902 @17=\"paid\" @18=\"a\" "
            "@19=1 @20={\"a\":[1,true,null],\"k\":1,\"s\":\"v1\"} @21=-1 "
            "@22=\"123456789012345.0000000007\" @23=\"2020-09-13 12:26:41\" "
            "@24=\"1981-02-02 01:01:01\" @25=\"01:01:03\"\n", out)
        self.assertIn("column_names=[\"id\",\"u\",\"tiny\",", out)
        self.assertIn("column_types=INT,BIGINT_UNSIGNED,TINYINT_UNSIGNED,", out)

    def test_gtid_events_carry_the_identity_the_log_assigned(self):
        # binlog_gen commits AUTOMATIC GTIDs: the log assigns the GNOs, the
        # clocks (sequence_number from 1 in each file, WRITESET
        # last_committed) and the commit timestamps, which the manifest
        # records from TransactionBuffer::identity().
        gtids = [e for e in self.events if e["type"] == 33]
        self.assertEqual(len(gtids), 60)
        seq_in_file = {}
        for i, (e, t) in enumerate(zip(gtids, self.txns)):
            self.assertEqual(e["gtid"], t["gtid"])
            self.assertEqual(e["gtid"], f"{UUID}:{i + 1}")
            self.assertEqual(e["last_committed"], t["last_committed"])
            self.assertEqual(e["sequence_number"], t["sequence_number"])
            seq_in_file[t["file"]] = seq_in_file.get(t["file"], 0) + 1
            self.assertEqual(e["sequence_number"], seq_in_file[t["file"]])
            self.assertLess(e["last_committed"], e["sequence_number"])
            self.assertEqual(e["immediate_commit_timestamp"],
                             t["immediate_commit_us"])
            self.assertEqual(e["original_commit_timestamp"],
                             t["immediate_commit_us"])
            self.assertEqual(e["transaction_length"], t["end"] - t["start"])
            self.assertEqual(e["immediate_server_version"], 80406)
            self.assertEqual((e["file"], e["pos"]), (t["file"], t["start"]))
        # Every file after the first starts with the GTIDs of the earlier
        # ones in its Previous_gtids.
        prev = [e for e in self.events if e["type"] == 35]
        self.assertGreater(len(prev), 3)
        for e in prev:
            before = [t for t in self.txns if t["file"] < e["file"]]
            want = f"{UUID}:1-{len(before)}" if before else ""
            self.assertEqual(e["previous_gtids"], want)

    def test_tagged_and_assigned_identities(self):
        # --tag: every odd transaction AUTOMATIC:tag (a Gtid_tagged_log_event,
        # type 42, its own GNO sequence); --gtid=assigned: each GTID acquired
        # and committed as a replica's.
        for mode in ("mysql", "assigned"):
            with self.subTest(gtid=mode):
                d = os.path.join(tmpdir(), f"tagged-{mode}")
                txns = gen(d, "--transactions=10", "--rows=1",
                           f"--start-time={START}", f"--gtid={mode}",
                           "--tag=Blue")
                rc, out, err = run("dump", "--format=jsonl", d)
                self.assertEqual(rc, 0, err)
                events = [e for e in parse_jsonl(out) if e["type"] in (33, 42)]
                self.assertEqual([e["gtid"] for e in events],
                                 [t["gtid"] for t in txns])
                for i, e in enumerate(events):
                    if i % 2 == 1:
                        self.assertEqual(e["type"], 42)
                        gno = (i + 1) if mode == "assigned" else (i + 1) // 2
                        self.assertEqual(e["gtid"], f"{UUID}:blue:{gno}")
                    else:
                        self.assertEqual(e["type"], 33)
                        gno = (i + 1) if mode == "assigned" else i // 2 + 1
                        self.assertEqual(e["gtid"], f"{UUID}:{gno}")
                    self.assertEqual(e["sequence_number"], i + 1)
                    self.assertEqual(e["transaction_length"],
                                     txns[i]["end"] - txns[i]["start"])
                # find takes a tagged GTID (the tag in any case).
                want = next(t for t in txns if t["gtid"] == f"{UUID}:blue:2")
                rc, out, err = run("find", "--format=jsonl",
                                   f"--gtid={UUID}:BLUE:2", d)
                self.assertEqual(rc, 0, err)
                got = parse_jsonl(out)[0]
                self.assertEqual((got["file"], got["pos"], got["gtid"]),
                                 (want["file"], want["start"], want["gtid"]))

    def test_table_map_and_query_fields(self):
        tm = next(e for e in self.events if e["type"] == 19)
        self.assertEqual(tm["table_id"], 108)
        self.assertEqual(tm["column_count"], 25)
        self.assertEqual(tm["column_types"][7], "DECIMAL(10,4)")
        self.assertEqual(tm["column_names"][19], "doc")
        q = next(e for e in self.events if e["type"] == 2)
        self.assertEqual((q["db"], q["query"]), ("gen", "BEGIN"))

    def test_find_each_gtid_and_time(self):
        for t in self.txns[::7]:
            rc, out, err = run("find", "--format=jsonl", f"--gtid={t['gtid']}",
                               self.dir)
            self.assertEqual(rc, 0, err)
            got = parse_jsonl(out)[0]
            self.assertEqual((got["file"], got["pos"], got["end_pos"]),
                             (t["file"], t["start"], t["end"]))
            self.assertEqual(got["gtid"], t["gtid"])
        # Four transactions per second: the first one of second 5 is i=20.
        rc, out, err = run("find", "--format=jsonl",
                           f"--datetime=@{START + 5}", self.dir)
        self.assertEqual(rc, 0, err)
        got = parse_jsonl(out)[0]
        t = self.txns[20]
        self.assertEqual((got["file"], got["pos"], got["timestamp"]),
                         (t["file"], t["start"], START + 5))
        rc, out, err = run("find", "--datetime=2027-01-15 08:00:05", self.dir)
        self.assertEqual(rc, 0, err)
        self.assertTrue(out.startswith(f"{t['file']} {t['start']} "), out)
        self.assertIn(f"gtid={t['gtid']}", out)

    def test_find_reports_nothing_with_exit_3(self):
        rc, _, err = run("find", f"--gtid={UUID}:9999", self.dir)
        self.assertEqual(rc, 3, err)
        rc, _, _ = run("find", f"--datetime=@{START + 3600}", self.dir)
        self.assertEqual(rc, 3)
        rc, _, _ = run("find", "--gtid=nonsense", self.dir)
        self.assertEqual(rc, 2)

    def test_stats_match_the_manifest(self):
        rc, out, err = run("stats", "--format=jsonl", self.dir)
        self.assertEqual(rc, 0, err)
        s = parse_jsonl(out)[0]
        self.assertEqual(s["transactions"], 60)
        sizes = sorted(t["end"] - t["start"] for t in self.txns)
        self.assertEqual(s["transaction_size"]["max"], sizes[-1])
        self.assertEqual(s["transaction_size"]["p50"], sizes[29])
        self.assertEqual(s["transaction_size"]["p99"], sizes[59])
        table = next(t for t in s["tables"] if t["table"] == "gen.types")
        by_kind = {"write": 0, "update": 0, "delete": 0}
        for t in self.txns:
            by_kind[t["kind"]] += t["rows"]
        self.assertEqual((table["inserted"], table["updated"],
                          table["deleted"]),
                         (by_kind["write"], by_kind["update"],
                          by_kind["delete"]))
        self.assertEqual(s["bucket_seconds"], 1)
        buckets = s["transactions_per_bucket"]
        self.assertEqual([b["transactions"] for b in buckets], [4] * 15)
        self.assertEqual(buckets[0]["timestamp"], START)
        types = {t["type_name"]: t["events"] for t in s["event_types"]}
        self.assertEqual(types["GTID_LOG_EVENT"], 60)
        self.assertEqual(s["compression"]["payload_events"], 0)
        rc, out, err = run("stats", "--bucket=5", self.dir)
        self.assertEqual(rc, 0, err)
        self.assertIn("TRANSACTIONS PER 5 SECONDS", out)
        self.assertIn("2027-01-15 08:00:05             20\n", out)
        self.assertIn("gen.types", out)

    def test_position_and_time_ranges(self):
        t = self.txns[10]
        nxt = self.txns[11]
        self.assertEqual(t["file"], nxt["file"])
        path = os.path.join(self.dir, t["file"])
        rc, out, err = run("dump", "--format=jsonl",
                           f"--start-position={t['start']}",
                           f"--stop-position={t['end']}", path)
        self.assertEqual(rc, 0, err)
        got = parse_jsonl(out)
        self.assertEqual([e["type"] for e in got], [33, 2, 19, 30, 16])
        self.assertEqual(got[0]["pos"], t["start"])
        self.assertEqual(got[-1]["end_pos"], t["end"])
        # A position inside an event is refused with a hint.
        rc, out, err = run("dump", f"--start-position={t['start'] + 1}", path)
        self.assertEqual(rc, 1)
        self.assertIn("--start-position", err)
        # Seconds 2 and 3: transactions 8..15.
        rc, out, err = run("dump", "--format=jsonl",
                           f"--start-datetime=@{START + 2}",
                           "--stop-datetime=2027-01-15T08:00:04", self.dir)
        self.assertEqual(rc, 0, err)
        gtids = [e["gtid"] for e in parse_jsonl(out) if e["type"] == 33]
        self.assertEqual(gtids, [f"{UUID}:{i}" for i in range(9, 17)])
        for e in parse_jsonl(out):
            self.assertIn(e["timestamp"], (START + 2, START + 3))

    def test_list_counts_and_verify(self):
        rc, out, err = run("list", "--format=jsonl", self.dir)
        self.assertEqual(rc, 0, err)
        files = parse_jsonl(out)
        per_file = {}
        for t in self.txns:
            per_file[t["file"]] = per_file.get(t["file"], 0) + 1
        self.assertEqual({f["file"]: f["transactions"] for f in files},
                         per_file)
        for f in files:
            self.assertEqual(f["status"], "clean")
            self.assertEqual(f["payload_events"], 0)
        rc, out, err = run("verify", self.dir)
        self.assertEqual(rc, 0, out + err)
        self.assertTrue(out.endswith("60 transactions: OK\n"), out)


class PayloadTest(unittest.TestCase):
    """binlog_gen --payload stores each transaction as a Gtid event plus a
    zstd Transaction_payload event."""

    @classmethod
    def setUpClass(cls):
        cls.dir = os.path.join(tmpdir(), "log")
        cls.txns = gen(cls.dir, "--transactions=40", "--rows=20", "--payload",
                       f"--start-time={START}")

    def test_list_shows_the_compressed_share(self):
        rc, out, err = run("list", "--format=jsonl", self.dir)
        self.assertEqual(rc, 0, err)
        f = parse_jsonl(out)[0]
        self.assertEqual(f["payload_events"], 40)
        self.assertGreater(f["payload_bytes"], f["size"] // 2)
        rc, out, err = run("list", self.dir)
        self.assertRegex(out.splitlines()[1], r" \d+\.\d% +clean$")

    def test_stats_shows_the_compression_ratio(self):
        rc, out, err = run("stats", "--format=jsonl", self.dir)
        self.assertEqual(rc, 0, err)
        s = parse_jsonl(out)[0]
        c = s["compression"]
        self.assertEqual(c["payload_events"], 40)
        self.assertGreater(c["ratio"], 1.5)
        self.assertEqual(s["transactions"], 40)

    def test_dump_expands_payloads_and_decodes_their_rows(self):
        rc, out, err = run("dump", "--format=jsonl", "--decode-rows", self.dir)
        self.assertEqual(rc, 0, err)
        events = parse_jsonl(out)
        self.assertFalse([e for e in events if e["type"] == 40])
        inner = [e for e in events if "payload_index" in e]
        self.assertEqual(len(inner), 40 * 4)  # BEGIN, Table_map, Rows, Xid
        rows = [e for e in inner if "rows" in e]
        for t, e in zip(self.txns, rows):
            self.assertEqual((e["file"], e["end_pos"]), (t["file"], t["end"]))
            self.assertEqual(e["payload_events"], 4)
            if t["kind"] == "write":
                self.assertEqual(e["rows"][0]["after"],
                                 expected_row(t["first_row"]))
        first = [e for e in inner if e["payload_index"] == 0]
        self.assertEqual(len(first), 40)
        for e in first:
            self.assertEqual(e["payload_compression"], "zstd")
            self.assertGreater(e["payload_uncompressed_size"],
                               e["payload_size"])

    def test_tagged_transactions_are_packed_after_their_gtid_event(self):
        # MySQL 8.4's layout: a tagged transaction's Gtid_tagged_log_event
        # (type 42) outside, then its Transaction_payload, as an untagged
        # one's Gtid event.
        d = os.path.join(tmpdir(), "tagged-payload")
        txns = gen(d, "--transactions=20", "--rows=20", "--payload",
                   "--tag=blue", f"--start-time={START}")
        rc, out, err = run("dump", "--format=jsonl", "--raw", d)
        self.assertEqual(rc, 0, err)
        raw = [e for e in parse_jsonl(out) if e["type"] in (33, 42, 40)]
        self.assertEqual([e["type"] for e in raw], [33, 40, 42, 40] * 10)
        gtids = [e for e in raw if e["type"] != 40]
        for t, g, p in zip(txns, gtids, raw[1::2]):
            self.assertEqual(g["gtid"], t["gtid"])
            self.assertEqual((g["pos"], p["end_pos"]), (t["start"], t["end"]))
            self.assertEqual(g["transaction_length"], t["end"] - t["start"])
            self.assertEqual(g["end_pos"], p["pos"])
        self.assertEqual(txns[1]["gtid"], f"{UUID}:blue:1")
        rc, out, err = run("dump", "--format=jsonl", "--decode-rows", d)
        self.assertEqual(rc, 0, err)
        events = parse_jsonl(out)
        xids = [e for e in events if e["type"] == 16]
        self.assertEqual(len(xids), 20)
        for t, x in zip(txns, xids):
            self.assertEqual(x["payload_index"], 3)
            self.assertEqual(x["end_pos"], t["end"])
        rows = [e for e in events if "rows" in e]
        for t, e in zip(txns, rows):
            if t["kind"] == "write":
                self.assertEqual(e["rows"][0]["after"],
                                 expected_row(t["first_row"]))
        rc, out, err = run("verify", d)
        self.assertEqual(rc, 0, out + err)
        self.assertTrue(out.endswith("20 transactions: OK\n"), out)
        rc, out, err = run("find", "--format=jsonl", f"--gtid={UUID}:blue:3", d)
        self.assertEqual(rc, 0, err)
        got = parse_jsonl(out)[0]
        self.assertEqual((got["pos"], got["end_pos"]),
                         (txns[5]["start"], txns[5]["end"]))

    def test_stats_counts_rows_inside_payloads(self):
        rc, out, err = run("stats", "--format=jsonl", self.dir)
        self.assertEqual(rc, 0, err)
        s = parse_jsonl(out)[0]
        table = next(t for t in s["tables"] if t["table"] == "gen.types")
        self.assertEqual(table["inserted"] + table["updated"] +
                         table["deleted"], 40 * 20)
        types = {t["type_name"]: t for t in s["event_types"]}
        self.assertEqual(types["TRANSACTION_PAYLOAD_EVENT"]["events"], 40)
        self.assertEqual(types["XID_EVENT"]["in_payload_events"], 40)
        self.assertEqual(types["XID_EVENT"]["events"], 0)

    def test_find_and_verify_read_through_payloads(self):
        t = self.txns[17]
        rc, out, err = run("find", "--format=jsonl", f"--gtid={t['gtid']}",
                           self.dir)
        self.assertEqual(rc, 0, err)
        got = parse_jsonl(out)[0]
        self.assertEqual((got["pos"], got["end_pos"]), (t["start"], t["end"]))
        rc, out, err = run("verify", self.dir)
        self.assertEqual(rc, 0, out + err)

    def test_raw_dump_shows_the_payload_headers(self):
        rc, out, err = run("dump", "--format=jsonl", "--raw", self.dir)
        self.assertEqual(rc, 0, err)
        payloads = [e for e in parse_jsonl(out) if e["type"] == 40]
        self.assertEqual(len(payloads), 40)
        for p in payloads:
            self.assertEqual(p["compression"], "zstd")
            self.assertGreater(p["uncompressed_size"], p["payload_size"])


# ---------------------------------------------------------------------------
# follow


class EncryptedTest(unittest.TestCase):
    """binlogtool reads MySQL 8.0.14+ encrypted binlogs given the keys."""

    @classmethod
    def setUpClass(cls):
        base = tmpdir()
        cls.plain = os.path.join(base, "plain")
        cls.enc = os.path.join(base, "enc")
        cls.keys = os.path.join(base, "keys")
        args = ["--transactions=30", "--rows=5", f"--start-time={START}",
                "--max-file-size=20000"]
        gen(cls.plain, *args, manifest=False)
        gen(cls.enc, *args, f"--encrypt-keyring-file={cls.keys}",
            manifest=False)

    def test_files_are_encrypted(self):
        name = sorted(n for n in os.listdir(self.enc)
                      if re.match(r"binlog\.\d{6}$", n))[0]
        with open(os.path.join(self.enc, name), "rb") as f:
            self.assertEqual(f.read(4), b"\xfdbin")

    def test_dump_with_keys_equals_the_plain_log(self):
        # The two logs were written by two runs: the commit timestamps the
        # log assigned (wall clock, in microseconds) differ; every other
        # field is the same.
        def without_commit_times(out):
            events = parse_jsonl(out)
            for e in events:
                e.pop("immediate_commit_timestamp", None)
                e.pop("original_commit_timestamp", None)
            return events
        rc, plain, err = run("dump", "--format=jsonl", "--decode-rows",
                             self.plain)
        self.assertEqual(rc, 0, err)
        rc, enc, err = run("dump", "--format=jsonl", "--decode-rows",
                           f"--keyring_file={self.keys}", self.enc)
        self.assertEqual(rc, 0, err)
        self.assertEqual(without_commit_times(enc), without_commit_times(plain))
        self.assertIn('"immediate_commit_timestamp"', plain)
        rc, out, err = run("verify", f"--keyring_file={self.keys}", self.enc)
        self.assertEqual(rc, 0, err + out)

    def test_without_keys_is_an_error_not_garbage(self):
        rc, out, err = run("dump", self.enc)
        self.assertNotEqual(rc, 0)
        self.assertIn("encrypted", err)

    def test_bad_key_file_is_a_usage_error(self):
        bad = self.keys + ".bad"
        with open(bad, "w") as f:
            f.write("k 12\n")
        os.chmod(bad, 0o600)
        rc, out, err = run("list", f"--keyring_file={bad}", self.enc)
        self.assertEqual(rc, 2)
        self.assertIn("64 hex digits", err)

    def test_the_key_file_is_private(self):
        # binlog_gen writes it rw------- (it was world-readable).
        self.assertEqual(os.stat(self.keys).st_mode & 0o777, 0o600)

    def test_a_key_file_others_can_read_is_refused(self):
        shared = self.keys + ".shared"
        with open(self.keys) as f, open(shared, "w") as g:
            g.write(f.read())
        os.chmod(shared, 0o644)
        rc, out, err = run("list", f"--keyring_file={shared}", self.enc)
        self.assertNotEqual(rc, 0)
        self.assertIn("other users", err)
        os.chmod(shared, 0o640)
        rc, out, err = run("list", f"--keyring_file={shared}", self.enc)
        self.assertEqual(rc, 0, err)


class Follower:
    """binlogtool follow in the background; stdout goes to a file."""

    def __init__(self, *args):
        self.out_path = os.path.join(tmpdir(), "follow.out")
        self.out = open(self.out_path, "wb")
        self.proc = subprocess.Popen([TOOL, "follow"] + list(args),
                                     stdout=self.out, stderr=subprocess.PIPE)

    def lines(self):
        with open(self.out_path, "rb") as f:
            return f.read().count(b"\n")

    def wait_for_lines(self, n, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline and self.lines() < n:
            time.sleep(0.05)
        return self.lines()

    def wait_for_stderr(self, text, timeout=30):
        deadline = time.time() + timeout
        buf = b""
        while time.time() < deadline:
            r, _, _ = select.select([self.proc.stderr], [], [], 0.2)
            if r:
                chunk = os.read(self.proc.stderr.fileno(), 4096)
                if not chunk:
                    break
                buf += chunk
                if text.encode() in buf:
                    return buf.decode()
        raise AssertionError(f"follow did not print {text!r}: {buf!r}")

    def finish(self, timeout=60):
        _, err = self.proc.communicate(timeout=timeout)
        self.out.close()
        with open(self.out_path, "rb") as f:
            out = f.read()
        return self.proc.returncode, out.decode(), err.decode()


def dump_keys(directory):
    rc, out, err = run("dump", "--format=jsonl", directory)
    assert rc == 0, err
    return [(e["file"], e["pos"], e["type"]) for e in parse_jsonl(out)]


class FollowTest(unittest.TestCase):

    def test_follow_from_start_sees_appends_and_rotations(self):
        d = os.path.join(tmpdir(), "log")
        os.mkdir(d)
        f = Follower("--format=jsonl", "--from-start", "--poll-interval=20",
                     "--timeout=120", d)
        writer = subprocess.Popen(
            [GEN, f"--dir={d}", "--transactions=30", "--rows=2",
             "--sleep-ms=15", "--rotate-every=7"])
        self.assertEqual(writer.wait(timeout=120), 0)
        want = dump_keys(d)
        # Let follow catch up, then stop it with SIGINT.
        f.wait_for_lines(len(want))
        f.proc.send_signal(signal.SIGINT)
        rc, out, err = f.finish()
        self.assertEqual(rc, 0, err)
        got = [(e["file"], e["pos"], e["type"]) for e in parse_jsonl(out)]
        self.assertEqual(got, want)
        self.assertGreaterEqual(len({k[0] for k in got}), 5)  # rotations

    def test_follow_from_the_end_prints_only_new_events(self):
        d = os.path.join(tmpdir(), "log")
        gen(d, "--transactions=5", manifest=False)
        old = set(dump_keys(d))
        f = Follower("--format=jsonl", "--decode-rows", "--poll-interval=20",
                     "--max-events=20", "--timeout=120", d)
        f.wait_for_stderr("following")
        gen(d, "--transactions=10", "--rows=3", manifest=False)
        rc, out, err = f.finish()
        self.assertEqual(rc, 0, err)
        got = parse_jsonl(out)
        self.assertEqual(len(got), 20)  # --max-events
        keys = [(e["file"], e["pos"], e["type"]) for e in got]
        self.assertFalse(set(keys) & old)
        self.assertEqual(keys, [k for k in dump_keys(d) if k not in old][:20])
        # The new file starts with its Format_description event, and rows
        # are decoded with the Table_map seen before them.
        self.assertEqual(got[0]["type"], 15)
        rows = [e for e in got if "rows" in e]
        self.assertTrue(rows)
        self.assertEqual(rows[0]["row_count"], 3)

    def test_max_events_and_timeout(self):
        d = os.path.join(tmpdir(), "log")
        gen(d, "--transactions=3", manifest=False)
        rc, out, err = run("follow", "--from-start", "--max-events=4", d,
                           timeout=30)
        self.assertEqual(rc, 0, err)
        self.assertEqual(len([l for l in out.splitlines()
                              if re.match(r"#\d+ ", l)]), 4)
        start = time.time()
        rc, out, err = run("follow", "--timeout=0.5", d, timeout=30)
        self.assertEqual(rc, 0, err)
        self.assertEqual(out, "")
        self.assertLess(time.time() - start, 10)

    def test_follow_needs_a_directory(self):
        rc, _, _ = run("follow", "/nonexistent/dir")
        self.assertEqual(rc, 2)


# ---------------------------------------------------------------------------
# find on the corpus


def group_timestamps(scenario):
    """(file, group) pairs with the timestamp of each group's first event,
    read straight from the file's bytes."""
    out = []
    for f in manifest(scenario)["files"]:
        with open(os.path.join(corpus_dir(scenario), f["name"]), "rb") as fh:
            data = fh.read()
        for g in f["groups"]:
            ts = struct.unpack_from("<I", data, g["start"])[0]
            out.append((f["name"], g, ts))
    return out


class FindCorpusTest(unittest.TestCase):

    def test_every_gtid_of_s1_is_found_at_its_group(self):
        groups = group_timestamps("s1-row-crc32")
        for name, g, _ in groups[::9]:
            with self.subTest(gtid=g["gtid"]):
                rc, out, err = run("find", "--format=jsonl",
                                   f"--gtid={g['gtid']}",
                                   corpus_dir("s1-row-crc32"))
                self.assertEqual(rc, 0, err)
                got = parse_jsonl(out)[0]
                self.assertEqual((got["file"], got["pos"], got["end_pos"]),
                                 (name, g["start"], g["end"]))

    def test_datetime_finds_the_first_group_at_or_after(self):
        for scenario in ("s1-row-crc32", "s2-statement-nochecksum"):
            groups = group_timestamps(scenario)
            times = sorted({ts for _, _, ts in groups})
            for t in times:
                want = next((n, g) for n, g, ts in groups if ts >= t)
                rc, out, err = run("find", "--format=jsonl",
                                   f"--datetime=@{t}", corpus_dir(scenario))
                self.assertEqual(rc, 0, err)
                got = parse_jsonl(out)[0]
                self.assertEqual((got["file"], got["pos"]),
                                 (want[0], want[1]["start"]), (scenario, t))

    def test_incomplete_last_group_of_s4_is_found_without_end(self):
        m = manifest("s4-crash-kill9")
        last = m["files"][-1]["groups"][-1]
        self.assertFalse(last["complete"])
        rc, out, err = run("find", "--format=jsonl", f"--gtid={last['gtid']}",
                           corpus_dir("s4-crash-kill9"))
        self.assertEqual(rc, 0, err)
        got = parse_jsonl(out)[0]
        self.assertEqual(got["pos"], last["start"])
        self.assertNotIn("end_pos", got)


# ---------------------------------------------------------------------------
# verify: each kind of damage


class VerifyCorruptionTest(unittest.TestCase):

    def copy_log(self):
        d = os.path.join(tmpdir(), "log")
        gen(d, "--transactions=20", "--max-file-size=8192", manifest=False)
        return d

    def test_flipped_byte_in_a_rows_event(self):
        d = self.copy_log()
        ev = next(e for e in parse_jsonl(run("dump", "--format=jsonl", d)[1])
                  if e["type"] == 30)
        path = os.path.join(d, ev["file"])
        with open(path, "r+b") as f:
            f.seek(ev["pos"] + ev["size"] // 2)
            b = f.read(1)
            f.seek(ev["pos"] + ev["size"] // 2)
            f.write(bytes([b[0] ^ 0x10]))
        rc, out, _ = run("verify", d)
        self.assertEqual(rc, 1, out)
        self.assertIn(f"{path}:{ev['pos']}: checksum mismatch in "
                      "WRITE_ROWS_EVENT event", out)

    def test_truncated_closed_file(self):
        d = self.copy_log()
        name = "binlog.000002"
        path = os.path.join(d, name)
        size = os.path.getsize(path)
        with open(path, "r+b") as f:
            f.truncate(size - 10)
        rc, out, _ = run("verify", d)
        self.assertEqual(rc, 1, out)
        self.assertIn(f"{path}:", out)
        self.assertIn("file ends inside an event", out)

    def test_index_naming_a_missing_file(self):
        d = self.copy_log()
        with open(os.path.join(d, "binlog.index"), "a") as f:
            f.write("./binlog.000099\n")
        rc, out, _ = run("verify", d)
        self.assertEqual(rc, 1, out)
        self.assertIn("binlog.000099", out)

    def test_index_with_a_hostile_entry(self):
        d = self.copy_log()
        with open(os.path.join(d, "binlog.index"), "a") as f:
            f.write("../../etc/passwd\n")
        rc, out, _ = run("verify", d)
        self.assertEqual(rc, 1, out)
        self.assertIn("binlog.index", out)

    def test_index_out_of_order(self):
        d = self.copy_log()
        idx = os.path.join(d, "binlog.index")
        with open(idx) as f:
            lines = f.read().splitlines()
        with open(idx, "w") as f:
            f.write("\n".join(reversed(lines)) + "\n")
        rc, out, _ = run("verify", d)
        self.assertEqual(rc, 1, out)

    def test_file_left_out_of_the_index_is_a_warning(self):
        d = self.copy_log()
        idx = os.path.join(d, "binlog.index")
        with open(idx) as f:
            lines = f.read().splitlines()
        with open(idx, "w") as f:
            f.write("\n".join(lines[:-1]) + "\n")
        rc, out, _ = run("verify", d)
        self.assertEqual(rc, 0, out)
        self.assertIn("warning: not listed in binlog.index", out)

    def test_verify_never_writes_to_the_directory(self):
        # An index update interrupted before its rename: verify and follow
        # read the directory as it is.
        d = self.copy_log()
        os.rename(os.path.join(d, "binlog.index"),
                  os.path.join(d, "binlog.index_crash_safe"))
        before = sorted(os.listdir(d))
        run("verify", d)
        run("list", d)
        self.assertEqual(sorted(os.listdir(d)), before)


# ---------------------------------------------------------------------------
# Progress indicator, help


class ProgressTest(unittest.TestCase):

    def run_with_pty_stderr(self, *args):
        master, slave = pty.openpty()
        env = dict(os.environ, BINLOGTOOL_PROGRESS_DELAY_MS="0")
        p = subprocess.Popen([TOOL] + list(args), stdout=subprocess.PIPE,
                             stderr=slave, env=env)
        os.close(slave)
        out = p.stdout.read()
        p.wait(timeout=120)
        err = b""
        while True:
            try:
                r, _, _ = select.select([master], [], [], 0.2)
                if not r:
                    break
                chunk = os.read(master, 65536)
                if not chunk:
                    break
                err += chunk
            except OSError:
                break
        os.close(master)
        return p.returncode, out, err

    def test_progress_on_a_terminal(self):
        d = os.path.join(tmpdir(), "log")
        gen(d, "--transactions=3000", "--rows=10", manifest=False)
        rc, out, err = self.run_with_pty_stderr("stats", d)
        self.assertEqual(rc, 0)
        self.assertIn(b"\rstats: ", err)
        self.assertIn(b"MB/s", err)
        self.assertTrue(err.endswith(b"\r\x1b[K"), err[-40:])
        self.assertNotIn(b"\r", out)

    def test_no_progress_when_stderr_is_not_a_terminal(self):
        env = dict(os.environ, BINLOGTOOL_PROGRESS_DELAY_MS="0")
        rc, out, err = run("stats", corpus_dir("s1-row-crc32"), env=env)
        self.assertEqual(rc, 0)
        self.assertEqual(err, "")


class HelpTest(unittest.TestCase):

    def test_every_command_has_help_with_examples(self):
        for cmd in ("list", "dump", "verify", "stats", "follow", "find"):
            with self.subTest(cmd=cmd):
                rc, out, _ = run(cmd, "--help")
                self.assertEqual(rc, 0)
                self.assertTrue(out.startswith(f"Usage: binlogtool {cmd}"))
                self.assertIn("Examples:", out)
                rc2, out2, _ = run("help", cmd)
                self.assertEqual((rc2, out2), (rc, out))
        rc, out, _ = run("help")
        for cmd in ("list", "dump", "verify", "stats", "follow", "find"):
            self.assertIn(f"binlogtool {cmd}", out)

    def test_raw_is_documented(self):
        rc, out, _ = run("dump", "--help")
        self.assertIn("--raw", out)
        self.assertIn("payload_index", out)

    def test_bad_flags_exit_2(self):
        for args in (("dump", "--stop-position=x", "f"),
                     ("dump", "--start-datetime=yesterday", "f"),
                     ("stats", "--bucket=0", "f"),
                     ("find", corpus_dir("s1-row-crc32")),
                     ("find", "--gtid=0-1-1", "--datetime=@1",
                      corpus_dir("s1-row-crc32")),
                     ("follow", "--poll-interval=0", "/tmp"),
                     ("verify", "--format=jsonl", "/tmp")):
            with self.subTest(args=args):
                rc, _, err = run(*args)
                self.assertEqual(rc, 2, err)
                self.assertIn("Usage:", err)


# ---------------------------------------------------------------------------
# Hostile input


class HostileTest(unittest.TestCase):

    def test_random_damage_to_typed_rows_never_crashes(self):
        d = os.path.join(tmpdir(), "log")
        gen(d, "--transactions=8", "--rows=3", manifest=False)
        name = os.path.join(d, "binlog.000001")
        with open(name, "rb") as f:
            original = f.read()
        rng = random.Random(8)
        damaged = os.path.join(tmpdir(), "binlog.000001")
        for i in range(60):
            data = bytearray(original)
            for _ in range(rng.randint(1, 8)):
                # Damage past the Format_description event, where the
                # decoders work (the reader keeps checksums: kReport).
                at = rng.randrange(130, len(data))
                data[at] = rng.randrange(256)
            with open(damaged, "wb") as f:
                f.write(data)
            for args in (("dump", "--format=jsonl", "--decode-rows"),
                         ("dump", "--decode-rows"), ("stats",), ("list",),
                         ("verify",), ("find", f"--gtid={UUID}:3")):
                rc, out, err = run(*args, damaged)
                self.assertIn(rc, (0, 1, 3), (args, err))
                if "--format=jsonl" in args:
                    parse_jsonl(out)
                self.assertNotIn("\x1b", out)


if __name__ == "__main__":
    unittest.main()
