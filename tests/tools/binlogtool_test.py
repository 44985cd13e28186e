#!/usr/bin/env python3
"""End-to-end tests of binlogtool on the MariaDB corpus.

Runs the built //tools:binlogtool on the real server binlogs of
the in-tree corpus (tests/data/mariadb) and compares its output with the corpus manifests (made
from mariadb-binlog output; see tests/data/mariadb/README.md).
Damaged copies are made under $TEST_TMPDIR.

Started by binlogtool_test.sh (an sh_test, so that python3 comes from PATH).
"""

import json
import os
import random
import re
import shutil
import subprocess
import tempfile
import unittest

SRCDIR = os.environ["TEST_SRCDIR"]
TOOL = os.path.join(SRCDIR, "binlog_storage", "tools", "binlogtool")
CORPUS = os.path.join(SRCDIR, "binlog_storage", "tests", "data", "mariadb")
SCENARIOS = ["s1-row-crc32", "s2-statement-nochecksum",
             "s3-row-wide-nochecksum", "s4-crash-kill9"]
EXPECTED_FILES = {"s1-row-crc32": 5, "s2-statement-nochecksum": 8,
                  "s3-row-wide-nochecksum": 2, "s4-crash-kill9": 4}
WITH_CHECKSUMS = {"s1-row-crc32": True, "s2-statement-nochecksum": False,
                  "s3-row-wide-nochecksum": False, "s4-crash-kill9": True}

_manifests = {}


def manifest(scenario):
    if scenario not in _manifests:
        with open(os.path.join(CORPUS, scenario, "manifest.json")) as f:
            _manifests[scenario] = json.load(f)
    return _manifests[scenario]


def torn_tail(scenario="s4-crash-kill9", name="mariadb-bin.000004"):
    """(pos, available_bytes) of the partial event the crashed file ends
    in, from the manifest."""
    mfile = manifest_file(scenario, name)
    part = mfile["tail"]["partial_event"]
    return part["pos"], part["available_bytes"]


def binlog_dir(scenario):
    return os.path.join(CORPUS, scenario, "binlogs")


def binlog_path(scenario, name):
    return os.path.join(binlog_dir(scenario), name)


def run(*args):
    """Runs binlogtool; returns (exit code, stdout, stderr) as text.

    stdout is decoded strictly as UTF-8: the tool promises valid UTF-8 JSON.
    """
    r = subprocess.run([TOOL] + list(args), capture_output=True, timeout=120)
    if r.returncode < 0:
        raise AssertionError(f"binlogtool {args} died with signal "
                             f"{-r.returncode}: {r.stderr.decode(errors='replace')}")
    return r.returncode, r.stdout.decode("utf-8"), r.stderr.decode(
        "utf-8", errors="replace")


def parse_jsonl(text):
    """Every line must be one JSON object."""
    out = []
    for i, line in enumerate(text.splitlines()):
        obj = json.loads(line)
        assert isinstance(obj, dict), f"line {i + 1} is not an object: {line}"
        out.append(obj)
    return out


def tmpdir():
    return tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))


def flip_byte(path, offset):
    with open(path, "r+b") as f:
        f.seek(offset)
        b = f.read(1)
        f.seek(offset)
        f.write(bytes([b[0] ^ 0x5A]))


class DumpTest(unittest.TestCase):

    def check_file(self, scenario, mfile):
        rc, out, err = run("dump", "--format=jsonl",
                           binlog_path(scenario, mfile["name"]))
        self.assertEqual(rc, 0, err)
        records = parse_jsonl(out)
        events = [r for r in records if not r.get("torn_tail")]
        torn = [r for r in records if r.get("torn_tail")]
        got = [(e["pos"], e["end_pos"], e["size"], e["type"]) for e in events]
        want = [(e["pos"], e["end_log_pos"], e["size"], e["type_code"])
                for e in mfile["events"]]
        self.assertEqual(got, want, f"{scenario}/{mfile['name']}")
        expected_crc = "ok" if WITH_CHECKSUMS[scenario] else "none"
        for e, m in zip(events, mfile["events"]):
            self.assertEqual(e["file"], mfile["name"])
            self.assertEqual(e["checksum"], expected_crc, e)
            self.assertEqual(e["type_name"], m["type"], e)
            self.assertEqual(e["flags"], m["flags"], e)
            self.assertEqual(e["log_pos"], e["end_pos"], e)
            for key in ("timestamp", "server_id"):
                self.assertIn(key, e)
            if e["type"] == 2 and "query" in m:
                # The manifest keeps the first line, at most 80 characters.
                self.assertEqual(e["query"].split("\n")[0][:80], m["query"], e)
                self.assertIn("db", e)
            if e["type"] == 15:
                fd = mfile["format_description"]
                self.assertEqual(e["server_version"], fd["server_version"])
                self.assertEqual(e["binlog_version"], fd["binlog_version"])
                self.assertEqual(e["in_use"], fd["in_use_flag"])
                self.assertEqual(e["checksum_alg"],
                                 "crc32" if WITH_CHECKSUMS[scenario] else "none")
            if e["type"] == 4:
                self.assertRegex(e["next_file"], r"^mariadb-bin\.\d{6}$")
                self.assertEqual(e["next_pos"], 4)
        partial = (mfile.get("tail") or {}).get("partial_event")
        if partial:
            self.assertEqual(len(torn), 1, records[-3:])
            self.assertIs(records[-1], torn[0], "torn tail is the last line")
            self.assertEqual(torn[0]["file"], mfile["name"])
            self.assertEqual(torn[0]["pos"], partial["pos"])
            self.assertEqual(torn[0]["bytes"], partial["available_bytes"])
            self.assertTrue(torn[0]["in_use"])
            self.assertIn("reason", torn[0])
        else:
            self.assertEqual(torn, [])

    def test_jsonl_matches_manifest_for_every_corpus_file(self):
        n = 0
        for scenario in SCENARIOS:
            for mfile in manifest(scenario)["files"]:
                with self.subTest(scenario=scenario, file=mfile["name"]):
                    self.check_file(scenario, mfile)
                    n += 1
        self.assertEqual(n, sum(EXPECTED_FILES.values()))

    def test_s4_torn_tail_is_at_the_manifest_partial_event(self):
        rc, out, _ = run("dump", "--format=jsonl",
                         binlog_path("s4-crash-kill9", "mariadb-bin.000004"))
        self.assertEqual(rc, 0)
        last = parse_jsonl(out)[-1]
        self.assertEqual(last["torn_tail"], True)
        self.assertEqual(last["pos"], torn_tail()[0])

    def test_several_files_are_dumped_in_order(self):
        m = manifest("s2-statement-nochecksum")
        paths = [binlog_path("s2-statement-nochecksum", f["name"])
                 for f in m["files"]]
        rc, out, err = run("dump", "--format=jsonl", *paths)
        self.assertEqual(rc, 0, err)
        got = [(e["file"], e["pos"]) for e in parse_jsonl(out)]
        want = [(f["name"], e["pos"]) for f in m["files"] for e in f["events"]]
        self.assertEqual(got, want)

    def test_directory_argument_dumps_the_whole_log(self):
        rc, out, err = run("dump", "--format=jsonl",
                           binlog_dir("s1-row-crc32"))
        self.assertEqual(rc, 0, err)
        self.assertEqual(len(parse_jsonl(out)),
                         manifest("s1-row-crc32")["totals"]["events"])

    def test_text_format_has_one_line_per_event(self):
        for scenario in SCENARIOS:
            m = manifest(scenario)
            rc, out, err = run("dump", binlog_dir(scenario))
            self.assertEqual(rc, 0, err)
            lines = out.splitlines()
            events = [l for l in lines if re.match(r"^#\d+ end=\d+ ", l)]
            self.assertEqual(len(events), m["totals"]["events"], scenario)
            crc = "ok" if WITH_CHECKSUMS[scenario] else "none"
            for l in events:
                self.assertRegex(
                    l, r"^#\d+ end=\d+ [A-Z0-9_]+ size=\d+ server_id=\d+ "
                    r"time=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ crc=" + crc + " ")
            files = [l for l in lines if l.startswith("# file ")]
            self.assertEqual(len(files), len(m["files"]))
        rc, out, _ = run("dump", binlog_path("s4-crash-kill9",
                                             "mariadb-bin.000004"))
        self.assertTrue(out.splitlines()[-1].startswith(
            "# torn tail in mariadb-bin.000004 at %d: " % torn_tail()[0]),
            out[-300:])

    def test_text_format_prints_the_first_events(self):
        rc, out, _ = run("dump", binlog_path("s1-row-crc32",
                                             "mariadb-bin.000001"))
        self.assertEqual(rc, 0)
        lines = out.splitlines()
        self.assertEqual(lines[0], '# file "mariadb-bin.000001"')
        self.assertTrue(lines[1].startswith(
            "#4 end=256 FORMAT_DESCRIPTION_EVENT size=252 server_id=1 "), lines[1])
        self.assertIn(' server_version="10.11.19-MariaDB-0+deb12u1-log"',
                      lines[1])
        self.assertIn(" crc=ok ", lines[1])
        last = manifest_file("s1-row-crc32", "mariadb-bin.000001")["events"][-1]
        self.assertTrue(lines[-1].startswith(
            "#%d end=%d ROTATE_EVENT" % (last["pos"], last["end_log_pos"])),
            lines[-1])
        self.assertIn('next_file="mariadb-bin.000002" next_pos=4', lines[-1])

    def test_bad_checksum_is_reported_not_fatal(self):
        d = tmpdir()
        name = "mariadb-bin.000002"
        path = os.path.join(d, name)
        shutil.copy(binlog_path("s1-row-crc32", name), path)
        ev = big_event(manifest_file("s1-row-crc32", name))
        flip_byte(path, ev["pos"] + ev["size"] // 2)
        rc, out, err = run("dump", "--format=jsonl", path)
        self.assertEqual(rc, 0, err)
        records = parse_jsonl(out)
        bad = [r for r in records if r.get("checksum") == "bad"]
        self.assertEqual([r["pos"] for r in bad], [ev["pos"]])
        self.assertEqual(len(records), len(manifest_file("s1-row-crc32",
                                                         name)["events"]))

    def test_hostile_query_bytes_still_give_valid_json(self):
        # s2 has no checksums, so bytes of a query can be changed and the
        # event stays valid for the reader.
        d = tmpdir()
        mfile = manifest("s2-statement-nochecksum")["files"][0]
        path = os.path.join(d, mfile["name"])
        shutil.copy(binlog_path("s2-statement-nochecksum", mfile["name"]), path)
        q = next(e for e in mfile["events"]
                 if e["type_code"] == 2 and len(e.get("query", "")) > 20)
        with open(path, "rb") as f:
            data = bytearray(f.read())
        event = bytes(data[q["pos"]:q["pos"] + q["size"]])
        text = q["query"].encode()
        at = q["pos"] + event.index(text)
        hostile = b'\xff\x01"\\\n\x1b\xc3'
        data[at:at + len(hostile)] = hostile
        with open(path, "wb") as f:
            f.write(data)
        rc, out, err = run("dump", "--format=jsonl", path)
        self.assertEqual(rc, 0, err)
        self.assertIn(r'"query":"\u00ff\u0001\"\\\u000a\u001b\u00c3', out)
        rec = next(r for r in parse_jsonl(out) if r["pos"] == q["pos"])
        self.assertTrue(rec["query"].startswith('\u00ff\u0001"\\\n\u001b\u00c3'))
        rc, out, err = run("dump", path)
        self.assertEqual(rc, 0, err)
        self.assertNotIn("\x1b", out)

    def test_truncated_closed_file_stops_with_file_and_offset(self):
        d = tmpdir()
        name = "mariadb-bin.000001"
        mfile = manifest_file("s1-row-crc32", name)
        ev = big_event(mfile)
        path = os.path.join(d, name)
        with open(binlog_path("s1-row-crc32", name), "rb") as f:
            data = f.read()
        with open(path, "wb") as f:
            f.write(data[:ev["pos"] + ev["size"] // 2])
        rc, out, err = run("dump", "--format=jsonl", path)
        self.assertEqual(rc, 1)
        self.assertIn(f"{name}: offset {ev['pos']}:", err)
        before = [e for e in mfile["events"] if e["pos"] < ev["pos"]]
        self.assertEqual(len(parse_jsonl(out)), len(before))


def manifest_file(scenario, name):
    return next(f for f in manifest(scenario)["files"] if f["name"] == name)


def big_event(mfile):
    """A row event of at least 1 KiB from the middle of the file."""
    rows = [e for e in mfile["events"]
            if e["type_code"] in (23, 24, 25) and e["size"] >= 1024]
    return rows[len(rows) // 2]


class ListTest(unittest.TestCase):

    def test_text_lists_every_file_with_manifest_counts(self):
        for scenario in SCENARIOS:
            m = manifest(scenario)
            rc, out, err = run("list", binlog_dir(scenario))
            self.assertEqual(rc, 0, err)
            lines = out.splitlines()
            self.assertTrue(lines[0].startswith("FILE "), lines[0])
            rows = [l.split() for l in lines[1:]]
            self.assertEqual(len(rows), EXPECTED_FILES[scenario], out)
            for row, mfile in zip(rows, m["files"]):
                self.assertEqual(row[0], mfile["name"])
                self.assertEqual(int(row[1]), mfile["size"])
                self.assertEqual(int(row[2]), mfile["event_count"])
                self.assertEqual(int(row[3]),
                                 mfile["transactions"]["complete"])
                self.assertRegex(" ".join(row[4:8]),
                                 r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d "
                                 r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$")
                self.assertEqual(row[8], "-")  # COMPRESSED: no payloads
                status = " ".join(row[9:])
                if mfile["name"] == "mariadb-bin.000004" and \
                        scenario == "s4-crash-kill9":
                    self.assertEqual(status, "torn at %d (%d bytes, in-use)"
                                     % torn_tail())
                else:
                    self.assertEqual(status, "clean")

    def test_jsonl_lists_every_file(self):
        for scenario in SCENARIOS:
            m = manifest(scenario)
            rc, out, err = run("list", "--format=jsonl", binlog_dir(scenario))
            self.assertEqual(rc, 0, err)
            rows = parse_jsonl(out)
            self.assertEqual([r["file"] for r in rows],
                             [f["name"] for f in m["files"]])
            for r, mfile in zip(rows, m["files"]):
                self.assertEqual(r["size"], mfile["size"])
                self.assertEqual(r["events"], mfile["event_count"])
                self.assertEqual(r["transactions"],
                                 mfile["transactions"]["complete"])
                self.assertEqual(r["in_use"],
                                 mfile["format_description"]["in_use_flag"])
                self.assertEqual(r["status"], "torn" if mfile.get("tail")
                                 else "clean")
            self.assertEqual(sum(r["transactions"] for r in rows),
                             m["totals"]["complete_groups"])

    def test_files_after_a_damaged_one_are_still_listed(self):
        d = tmpdir()
        bad = os.path.join(d, "bad")
        with open(bad, "wb") as f:
            f.write(b"not a binlog")
        good = binlog_path("s1-row-crc32", "mariadb-bin.000003")
        rc, out, err = run("list", bad, good)
        self.assertEqual(rc, 1)
        self.assertIn("not a binlog file", err)
        rows = [l.split() for l in out.splitlines()[1:]]
        self.assertEqual([r[0] for r in rows], ["bad", "mariadb-bin.000003"])
        self.assertEqual(rows[0][-3:], ["error", "at", "0"])
        self.assertEqual(rows[1][-1], "clean")


class VerifyTest(unittest.TestCase):

    def summary_counts(self, out):
        m = re.search(r"^verified (\d+) files?, (\d+) events?, (\d+) "
                      r"transactions?: (.*)$", out.splitlines()[-1])
        self.assertIsNotNone(m, out[-500:])
        return int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4)

    def test_clean_corpus_directories_verify_ok(self):
        for scenario in ("s1-row-crc32", "s2-statement-nochecksum"):
            m = manifest(scenario)
            rc, out, err = run("verify", binlog_dir(scenario))
            self.assertEqual(rc, 0, out + err)
            self.assertEqual(out.splitlines()[:-1], [], out)
            self.assertEqual(self.summary_counts(out),
                             (m["totals"]["files"], m["totals"]["events"],
                              m["totals"]["complete_groups"], "OK"))

    def test_crashed_directory_verifies_ok_with_torn_tail_warning(self):
        m = manifest("s4-crash-kill9")
        d = binlog_dir("s4-crash-kill9")
        rc, out, err = run("verify", d)
        self.assertEqual(rc, 0, out + err)
        self.assertIn(os.path.join(d, "mariadb-bin.000004") +
                      ":%d: warning: torn tail" % torn_tail()[0], out)
        for line in out.splitlines()[:-1]:
            self.assertIn(": warning: ", line)
        self.assertEqual(self.summary_counts(out),
                         (m["totals"]["files"], m["totals"]["events"],
                          m["totals"]["complete_groups"], "OK"))

    def test_files_arguments_verify_ok(self):
        m = manifest("s1-row-crc32")
        paths = [binlog_path("s1-row-crc32", f["name"]) for f in m["files"]]
        rc, out, err = run("verify", *paths)
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(self.summary_counts(out)[:2],
                         (m["totals"]["files"], m["totals"]["events"]))

    def test_flipped_byte_is_a_checksum_problem_at_its_event(self):
        d = tmpdir()
        name = "mariadb-bin.000002"
        path = os.path.join(d, name)
        shutil.copy(binlog_path("s1-row-crc32", name), path)
        ev = big_event(manifest_file("s1-row-crc32", name))
        flip_byte(path, ev["pos"] + ev["size"] // 2)
        rc, out, err = run("verify", path)
        self.assertEqual(rc, 1, out + err)
        lines = out.splitlines()
        self.assertTrue(lines[0].startswith(
            f"{path}:{ev['pos']}: checksum mismatch in {ev['type']} event"),
            out)
        self.assertEqual(len(lines), 2, out)
        self.assertTrue(lines[-1].endswith(": 1 problem"), lines[-1])

    def test_flipped_byte_in_a_directory_copy_is_found(self):
        d = os.path.join(tmpdir(), "binlogs")
        shutil.copytree(binlog_dir("s1-row-crc32"), d)
        name = "mariadb-bin.000004"
        ev = big_event(manifest_file("s1-row-crc32", name))
        flip_byte(os.path.join(d, name), ev["pos"] + ev["size"] // 2)
        rc, out, _ = run("verify", d)
        self.assertEqual(rc, 1)
        self.assertIn(f"{os.path.join(d, name)}:{ev['pos']}: checksum mismatch",
                      out)
        self.assertIn(f", {manifest('s1-row-crc32')['totals']['events']} "
                      "events", out.splitlines()[-1])

    def test_file_without_magic_is_a_problem(self):
        d = tmpdir()
        path = os.path.join(d, "mariadb-bin.000001")
        with open(binlog_path("s1-row-crc32", "mariadb-bin.000001"), "rb") as f:
            data = bytearray(f.read())
        data[0:4] = b"XXXX"
        with open(path, "wb") as f:
            f.write(data)
        rc, out, err = run("verify", path)
        self.assertIn(rc, (1, 2))
        self.assertIn(f"{path}:0: not a binlog file", out)
        for cmd in ("dump", "list"):
            rc, _, err = run(cmd, path)
            self.assertIn(rc, (1, 2), cmd)
            self.assertIn("not a binlog file", err, cmd)

    def test_empty_file_is_a_problem(self):
        path = os.path.join(tmpdir(), "empty")
        open(path, "wb").close()
        rc, out, _ = run("verify", path)
        self.assertEqual(rc, 1)
        self.assertIn(f"{path}:0: not a binlog file", out)

    def test_files_after_a_damaged_file_are_still_verified(self):
        d = tmpdir()
        bad = os.path.join(d, "bad")
        with open(bad, "wb") as f:
            f.write(b"\xfebin" + b"\x00" * 3)
        good = binlog_path("s1-row-crc32", "mariadb-bin.000003")
        rc, out, _ = run("verify", bad, good)
        self.assertEqual(rc, 1)
        self.assertTrue(out.splitlines()[0].startswith(f"{bad}:"), out)
        n_files, n_events, _, result = self.summary_counts(out)
        self.assertEqual((n_files, n_events), (2, manifest_file(
            "s1-row-crc32", "mariadb-bin.000003")["event_count"]))
        self.assertEqual(result, "1 problem")

    def test_truncated_closed_file_is_a_problem(self):
        d = tmpdir()
        name = "mariadb-bin.000003"
        path = os.path.join(d, name)
        with open(binlog_path("s1-row-crc32", name), "rb") as f:
            data = f.read()
        with open(path, "wb") as f:
            f.write(data[:-10])
        rc, out, _ = run("verify", path)
        self.assertEqual(rc, 1)
        self.assertRegex(out.splitlines()[0],
                         "^" + re.escape(path) + r":\d+: file ends inside")

    def test_bytes_after_rotate_event_are_a_problem(self):
        d = tmpdir()
        name = "mariadb-bin.000001"
        path = os.path.join(d, name)
        size = manifest_file("s1-row-crc32", name)["size"]
        shutil.copy(binlog_path("s1-row-crc32", name), path)
        with open(path, "ab") as f:
            f.write(b"\x00" * 4096)
        rc, out, _ = run("verify", path)
        self.assertEqual(rc, 1, out)
        # The reader reports bytes after a Rotate event as a torn tail.
        self.assertIn(
            f"{path}:{size}: torn tail: 4096 bytes after the Rotate event", out)
        rc, out, _ = run("list", "--format=jsonl", path)
        self.assertEqual(parse_jsonl(out)[0]["status"], "torn")

    def test_closed_file_cut_inside_a_transaction(self):
        d = tmpdir()
        mfile = manifest_file("s1-row-crc32", "mariadb-bin.000001")
        group = next(g for g in mfile["groups"]
                     if g["terminator"] == "XID_EVENT" and g["events"] >= 4)
        inner = [e for e in mfile["events"]
                 if group["start"] < e["end_log_pos"] < group["end"]]
        cut = inner[1]["end_log_pos"]
        first = os.path.join(d, "first")
        with open(binlog_path("s1-row-crc32", "mariadb-bin.000001"), "rb") as f:
            data = f.read()
        with open(first, "wb") as f:
            f.write(data[:cut])
        second = binlog_path("s1-row-crc32", "mariadb-bin.000002")
        # Followed by another file: a problem.
        rc, out, _ = run("verify", first, second)
        self.assertEqual(rc, 1, out)
        self.assertIn(f"{first}:{cut}: file ends inside a transaction that "
                      f"started at {group['start']}", out)
        # As the last file: a warning only.
        rc, out, _ = run("verify", second, first)
        self.assertEqual(rc, 0, out)
        self.assertIn(f"{first}:{cut}: warning: file ends inside a "
                      "transaction", out)

    def test_missing_index_entry_is_a_problem(self):
        d = os.path.join(tmpdir(), "binlogs")
        shutil.copytree(binlog_dir("s2-statement-nochecksum"), d)
        os.remove(os.path.join(d, "mariadb-bin.000005"))
        rc, out, _ = run("verify", d)
        self.assertEqual(rc, 1, out)
        self.assertIn("mariadb-bin.000005", out.splitlines()[0])
        self.assertTrue(out.splitlines()[-1].endswith(": 1 problem"))

    def test_file_missing_from_index_is_a_warning(self):
        d = os.path.join(tmpdir(), "binlogs")
        shutil.copytree(binlog_dir("s2-statement-nochecksum"), d)
        shutil.copy(os.path.join(d, "mariadb-bin.000008"),
                    os.path.join(d, "mariadb-bin.000042"))
        rc, out, _ = run("verify", d)
        self.assertEqual(rc, 0, out)
        self.assertIn(os.path.join(d, "mariadb-bin.000042") +
                      ": warning: not listed in mariadb-bin.index", out)

    def test_directory_without_index_reads_numbered_files(self):
        d = os.path.join(tmpdir(), "binlogs")
        shutil.copytree(binlog_dir("s1-row-crc32"), d)
        os.remove(os.path.join(d, "mariadb-bin.index"))
        rc, out, _ = run("verify", d)
        self.assertEqual(rc, 0, out)
        self.assertTrue(out.startswith("verified 5 files, %d events" %
                                       manifest("s1-row-crc32")["totals"]
                                       ["events"]), out)


class UsageTest(unittest.TestCase):

    def assert_usage_error(self, *args):
        rc, out, err = run(*args)
        self.assertEqual(rc, 2, (args, out, err))
        self.assertIn("Usage", err, args)
        self.assertEqual(out, "", args)

    def test_usage_errors_exit_2(self):
        f = binlog_path("s1-row-crc32", "mariadb-bin.000001")
        self.assert_usage_error()
        self.assert_usage_error("frobnicate")
        self.assert_usage_error("dump")
        self.assert_usage_error("dump", "--format=xml", f)
        self.assert_usage_error("dump", "--format")
        self.assert_usage_error("list", "--no-such-flag", f)
        self.assert_usage_error("verify", "--format=jsonl", f)
        self.assert_usage_error("verify", binlog_dir("s1-row-crc32"), f)
        self.assert_usage_error("list", "--basename=mariadb-bin", f)
        self.assert_usage_error("help", "frobnicate")

    def test_missing_file_is_an_io_error(self):
        missing = os.path.join(tmpdir(), "nope.000001")
        for cmd in ("list", "dump", "verify"):
            rc, _, err = run(cmd, missing)
            self.assertEqual(rc, 2, cmd)
            self.assertIn("nope.000001", err, cmd)

    def test_help_prints_usage_with_examples(self):
        for args in (["--help"], ["help"], ["-h"]):
            rc, out, _ = run(*args)
            self.assertEqual(rc, 0, args)
            self.assertIn("Usage:", out)
            self.assertIn("Examples:", out)
        for cmd in ("list", "dump", "verify"):
            for args in ([cmd, "--help"], ["help", cmd]):
                rc, out, _ = run(*args)
                self.assertEqual(rc, 0, args)
                self.assertTrue(out.startswith(f"Usage: binlogtool {cmd} "), out)
                self.assertIn("Examples:", out)


class VersionTest(unittest.TestCase):

    def test_version_is_the_library_version(self):
        with open(os.path.join(SRCDIR, "binlog_storage", "binlog",
                               "version.h")) as f:
            header = f.read()
        parts = [re.search(r"#define BINLOG_VERSION_%s (\d+)" % p,
                           header).group(1)
                 for p in ("MAJOR", "MINOR", "PATCH")]
        for args in (["--version"], ["version"]):
            rc, out, err = run(*args)
            self.assertEqual(rc, 0, err)
            self.assertEqual(out, "binlogtool %s\n" % ".".join(parts))


class HostileInputTest(unittest.TestCase):
    """Seeded random damage: the tool must never crash or emit bad JSON."""

    def test_random_damage_never_crashes(self):
        rnd = random.Random(20261121)
        d = tmpdir()
        sources = [binlog_path(s, f["name"]) for s in SCENARIOS
                   for f in manifest(s)["files"]]
        for it in range(40):
            with open(rnd.choice(sources), "rb") as f:
                data = bytearray(f.read())
            kind = it % 4
            if kind == 0:    # random bytes anywhere
                for _ in range(rnd.randint(1, 20)):
                    data[rnd.randrange(len(data))] = rnd.randrange(256)
            elif kind == 1:  # the Format_description event and first headers
                for _ in range(rnd.randint(1, 6)):
                    data[rnd.randrange(4, 600)] = rnd.randrange(256)
            elif kind == 2:  # truncation
                data = data[:rnd.randrange(len(data))]
            else:            # garbage after a prefix
                data = data[:rnd.randrange(600)] + bytes(
                    rnd.randrange(256) for _ in range(rnd.randrange(4096)))
            path = os.path.join(d, f"damaged.{it:06d}")
            with open(path, "wb") as f:
                f.write(data)
            for args in (["dump", "--format=jsonl", path], ["dump", path],
                         ["verify", path], ["list", path]):
                rc, out, _ = run(*args)
                self.assertIn(rc, (0, 1), (it, args))
                if "--format=jsonl" in args:
                    parse_jsonl(out)


if __name__ == "__main__":
    unittest.main(verbosity=2)
