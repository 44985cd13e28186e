#!/usr/bin/env python3
"""binlogtool on files in other servers' layouts (made by
//tests/tools:make_format_variants from the MariaDB corpus and the servers'
documented layouts, tests/testutil/format_variants.h):

  MariaDb114Test   MariaDB 11.4+ files (log_pos 0 inside transactions):
                   verify, list, dump and find read every event, at the
                   offsets and with the log_pos mariadb-binlog shows
  RelayLog55Test   a MySQL 5.5 replica's relay log: read to its end
  UnreadDataTest   dump and list never exit 0 when they stop before the
                   end of a file (bytes after a Rotate event)
  OldVersionTest   binlog v3: "unsupported binlog version 3", exit 4
  IncidentTest     an Incident event with an invalid number is a problem
  MariaDbEncryptedTest  a real MariaDB-encrypted binlog: exit 4 without
                   the key, every event decrypted with --mariadb_key_file
  PayloadTest      events inside a Transaction_payload carry no checksum
                   of their own: checksum "none", the payload's in
                   payload_checksum

Started by binlogtool_formats_test.sh (an sh_test, so python3 comes from
PATH).
"""

import json
import os
import re
import shutil
import struct
import subprocess
import tempfile
import unittest

SRCDIR = os.environ["TEST_SRCDIR"]
ROOT = os.path.join(SRCDIR, "binlog_storage")
TOOL = os.path.join(ROOT, "tools", "binlogtool")
MAKE = os.path.join(ROOT, "tests", "tools", "make_format_variants")
GEN = os.path.join(ROOT, "tools", "binlog_gen")
CORPUS = os.path.join(ROOT, "tests", "data", "mariadb")
ENCRYPTED = os.path.join(ROOT, "tests", "data", "mariadb-encrypted")
EXIT_UNSUPPORTED = 4


def run(*args):
    r = subprocess.run([TOOL] + list(args), capture_output=True, timeout=120)
    if r.returncode < 0:
        raise AssertionError(f"binlogtool {args} died: {r.stderr[-2000:]!r}")
    return r.returncode, r.stdout.decode("utf-8"), r.stderr.decode(
        "utf-8", errors="replace")


def jsonl(text):
    return [json.loads(l) for l in text.splitlines() if l]


def corpus_dir(scenario):
    return os.path.join(CORPUS, scenario, "binlogs")


def events(path):
    """(offset, type, size) of each event of a binlog v4 file."""
    with open(path, "rb") as f:
        data = f.read()
    out, pos = [], 4
    while pos + 19 <= len(data):
        size = struct.unpack_from("<I", data, pos + 9)[0]
        out.append((pos, data[pos + 4], size))
        pos += size
    return data, out


VARIANTS = None


def variants():
    global VARIANTS
    if VARIANTS is None:
        d = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
        r = subprocess.run([MAKE, d, corpus_dir("s1-row-crc32")],
                           capture_output=True, check=True, timeout=60)
        facts = dict(l.rsplit(" ", 1) for l in r.stdout.decode().splitlines())
        VARIANTS = (d, {k: int(v) for k, v in facts.items()})
    return VARIANTS


class MariaDb114Test(unittest.TestCase):
    def setUp(self):
        d, facts = variants()
        self.dir = os.path.join(d, "maria114")
        self.zeroed = facts["maria114 zeroed"]

    def test_verify_list_and_dump_read_every_event(self):
        self.assertGreater(self.zeroed, 0)
        rc, out, err = run("verify", self.dir)
        self.assertEqual(rc, 0, out + err)
        self.assertTrue(out.endswith(": OK\n"), out)

        rc, want, err = run("dump", "--format=jsonl", corpus_dir("s1-row-crc32"))
        self.assertEqual(rc, 0, err)
        rc, got, err = run("dump", "--format=jsonl", self.dir)
        self.assertEqual(rc, 0, err)
        want, got = jsonl(want), jsonl(got)
        self.assertEqual([(e.get("file"), e.get("pos"), e.get("type"))
                          for e in got],
                         [(e.get("file"), e.get("pos"), e.get("type"))
                          for e in want])
        self.assertEqual(sum(1 for e in got if e.get("log_pos") == 0),
                         self.zeroed)

        rc, out, err = run("list", "--format=jsonl", self.dir)
        self.assertEqual(rc, 0, err)
        rc, base, err = run("list", "--format=jsonl", corpus_dir("s1-row-crc32"))
        self.assertEqual([(f["file"], f["events"], f["transactions"])
                          for f in jsonl(out)],
                         [(f["file"], f["events"], f["transactions"])
                          for f in jsonl(base)])

    def test_find_by_gtid(self):
        rc, out, err = run("dump", "--format=jsonl", self.dir)
        gtids = [e["gtid"] for e in jsonl(out) if e.get("gtid")]
        self.assertTrue(gtids)
        for g in (gtids[0], gtids[len(gtids) // 2], gtids[-1]):
            rc, out, err = run("find", f"--gtid={g}", self.dir)
            self.assertEqual(rc, 0, (g, out, err))


def mariadb_binlog_events(path):
    """(offset, end_log_pos) of each event as Debian's mariadb-binlog prints
    them, or None without mariadb-binlog."""
    tool = shutil.which("mariadb-binlog")
    if tool is None:
        return None
    r = subprocess.run([tool, path], capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    text = r.stdout.decode("utf-8", errors="replace")
    ats = [int(m) for m in re.findall(r"^# at (\d+)$", text, re.M)]
    ends = [int(m) for m in re.findall(r"^#\d{6} .* end_log_pos (\d+) ", text,
                                       re.M)]
    return list(zip(ats, ends))


def tool_events(path):
    rc, out, err = run("dump", "--format=jsonl", path)
    assert rc == 0, err
    return [(e["pos"], e["log_pos"]) for e in jsonl(out) if "pos" in e]


class MariaDbBinlogAgreesTest(unittest.TestCase):
    """binlogtool and mariadb-binlog see the same events at the same
    offsets with the same log_pos (skipped without mariadb-binlog, as the
    other compat tests)."""

    def check(self, path):
        want = mariadb_binlog_events(path)
        if want is None:
            self.skipTest("mariadb-binlog not installed")
        got = tool_events(path)
        self.assertTrue(got)
        self.assertEqual(got, want, path)

    def test_maria114_files(self):
        d, _ = variants()
        for name in sorted(os.listdir(os.path.join(d, "maria114"))):
            if not name.endswith(".index"):
                self.check(os.path.join(d, "maria114", name))

    def test_relay_log_55(self):
        d, _ = variants()
        self.check(os.path.join(d, "relay55", "relay-bin.000002"))


class RelayLog55Test(unittest.TestCase):
    def test_read_to_the_end(self):
        d, facts = variants()
        path = os.path.join(d, "relay55", "relay-bin.000002")
        n = facts["relay55 events"]
        rc, out, err = run("dump", "--format=jsonl", path)
        self.assertEqual(rc, 0, err)
        self.assertEqual(len(jsonl(out)), n)
        rc, out, err = run("list", "--format=jsonl", path)
        self.assertEqual(rc, 0, err)
        self.assertEqual(jsonl(out)[0]["events"], n)
        self.assertEqual(jsonl(out)[0]["transactions"], 12)
        rc, out, err = run("verify", path)
        self.assertEqual(rc, 0, out + err)


class UnreadDataTest(unittest.TestCase):
    def test_bytes_after_a_rotate_fail_dump_and_list(self):
        src = os.path.join(corpus_dir("s1-row-crc32"), "mariadb-bin.000001")
        data, evs = events(src)
        self.assertEqual(evs[-1][1], 4)  # the file ends with its Rotate
        # The file's transactions once more after the Rotate event.
        d = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
        path = os.path.join(d, "mariadb-bin.000001")
        with open(path, "wb") as f:
            f.write(data + data[evs[1][0]:evs[-1][0]])
        for cmd in ("dump", "list"):
            rc, out, err = run(cmd, path)
            self.assertEqual(rc, 1, (cmd, err))
            self.assertIn("bytes not read", err)
            self.assertIn("after the Rotate event", err)


class OldVersionTest(unittest.TestCase):
    def test_v3_is_unsupported_with_its_own_exit_status(self):
        d, _ = variants()
        path = os.path.join(d, "v3", "old-bin.001")
        for cmd in ("dump", "list", "verify", "stats"):
            rc, out, err = run(cmd, path)
            self.assertEqual(rc, EXIT_UNSUPPORTED, (cmd, out, err))
            self.assertIn("unsupported binlog version 3", out + err)
            self.assertNotIn("corrupt", (out + err).lower())


class IncidentTest(unittest.TestCase):
    def incident_file(self, number):
        # A real file without checksums, with an Incident event inserted
        # before its Rotate (log_pos values follow the file's offsets).
        src = os.path.join(corpus_dir("s2-statement-nochecksum"),
                           "mariadb-bin.000001")
        data, evs = events(src)
        rot_at, rot_type, rot_size = evs[-1]
        self.assertEqual(rot_type, 4)
        msg = b"lost events"
        body = struct.pack("<HB", number, len(msg)) + msg
        size = 19 + len(body)
        inc = struct.pack("<IBIIIH", 1700000000, 26, 1, size, rot_at + size,
                          0) + body
        rot = bytearray(data[rot_at:rot_at + rot_size])
        struct.pack_into("<I", rot, 13, rot_at + size + rot_size)
        d = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
        path = os.path.join(d, "mariadb-bin.000001")
        with open(path, "wb") as f:
            f.write(data[:rot_at] + inc + bytes(rot))
        return path

    def test_lost_events_incident_passes(self):
        rc, out, err = run("verify", self.incident_file(1))
        self.assertEqual(rc, 0, out + err)

    def test_invalid_incident_number_is_a_problem(self):
        rc, out, err = run("verify", self.incident_file(7))
        self.assertEqual(rc, 1, out + err)
        self.assertIn("invalid incident number 7", out)


class MariaDbEncryptedTest(unittest.TestCase):
    def test_without_the_key_exit_4(self):
        for cmd in ("dump", "list", "verify"):
            rc, out, err = run(cmd, ENCRYPTED)
            self.assertEqual(rc, EXIT_UNSUPPORTED, (cmd, out, err))
            self.assertIn("MariaDB-encrypted binlog", out + err)
            self.assertIn("--mariadb_key_file", out + err)

    def test_with_the_key_file_every_event_reads(self):
        key = "--mariadb_key_file=" + os.path.join(ENCRYPTED, "keys.txt")
        rc, out, err = run("verify", key, ENCRYPTED)
        self.assertEqual(rc, 0, out + err)
        self.assertTrue(out.endswith("transactions: OK\n"), out)
        rc, out, err = run("dump", "--format=jsonl", "--decode-rows", key,
                           ENCRYPTED)
        self.assertEqual(rc, 0, err)
        events = jsonl(out)
        self.assertTrue(all(e["checksum"] == "ok" for e in events
                            if "checksum" in e))
        rows = [e["rows"] for e in events if e.get("type") == 23]
        self.assertEqual(rows, [[{"after": {"@1": 1, "@2": "secret one"}},
                                 {"after": {"@1": 2, "@2": "secret two"}}]])

    def test_bad_key_file_is_a_usage_error(self):
        d = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
        path = os.path.join(d, "keys.txt")
        with open(path, "w") as f:
            f.write("1;nothex\n")
        rc, out, err = run("list", "--mariadb_key_file=" + path, ENCRYPTED)
        self.assertEqual(rc, 2, err)
        self.assertIn("--mariadb_key_file", err)


class PayloadTest(unittest.TestCase):
    def test_inner_events_claim_no_checksum(self):
        d = os.path.join(tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR")),
                         "log")
        subprocess.run([GEN, f"--dir={d}", "--transactions=3", "--rows=2",
                        "--payload"], check=True, timeout=60)
        rc, out, err = run("dump", "--format=jsonl", d)
        self.assertEqual(rc, 0, err)
        inner = [e for e in jsonl(out) if "payload_index" in e]
        self.assertTrue(inner)
        for e in inner:
            self.assertEqual(e["checksum"], "none", e)
            self.assertEqual(e["payload_checksum"], "ok", e)
        rc, out, err = run("dump", d)
        lines = [l for l in out.splitlines() if "payload_index=" in l]
        self.assertTrue(lines)
        for l in lines:
            self.assertIn(" crc=none ", l)


if __name__ == "__main__":
    unittest.main()
