#!/usr/bin/env python3
"""binlogtool verify and the GTID index files (`<file>.gidx`) beside the
binlog files of a log //tools:binlog_gen writes: good ones verify; a
damaged one, or one crafted so that its CRCs check out (a GTID state, an
entry moved off its transaction start), is reported as a bad GTID index,
a finding of its own with exit status 5; an index of an older format
version, which readers rebuild, is a note; damage to the binlog files
still exits 1.

Started by binlogtool_gidx_test.sh (an sh_test, so python3 comes from
PATH).
"""

import os
import shutil
import struct
import subprocess
import tempfile
import unittest
import zlib

SRCDIR = os.environ["TEST_SRCDIR"]
TOOL = os.path.join(SRCDIR, "binlog_storage", "tools", "binlogtool")
GEN = os.path.join(SRCDIR, "binlog_storage", "tools", "binlog_gen")


def run(*args):
    r = subprocess.run([TOOL] + list(args), capture_output=True, timeout=120)
    if r.returncode < 0:
        raise AssertionError(f"binlogtool {args} died with signal "
                             f"{-r.returncode}: {r.stderr[-2000:]!r}")
    return r.returncode, r.stdout.decode("utf-8"), r.stderr.decode(
        "utf-8", errors="replace")


def tmpdir():
    return tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))


def gen(directory, *args):
    subprocess.run([GEN, f"--dir={directory}"] + list(args), check=True,
                   timeout=300, stdout=subprocess.DEVNULL)


class VerifyGtidIndexTest(unittest.TestCase):
    """verify checks each `<file>.gidx` against a scan of its binlog file:
    a bad one is reported as such (derived data) with exit status 5, and
    damage to the binlog files still exits 1."""

    @classmethod
    def setUpClass(cls):
        # Files of 9 MB: the log's index (an entry every 4 MiB) has entries.
        cls.log = os.path.join(tmpdir(), "log")
        gen(cls.log, "--bytes=20000000", "--max-file-size=9000000",
            "--sync=never")

    def copy_log(self):
        d = os.path.join(tmpdir(), "log")
        shutil.copytree(self.log, d)
        return d

    @staticmethod
    def records(data):
        """The index's header and its records' payloads."""
        header, rest, out = data[:44], data[44:], []
        while len(rest) >= 8:
            n = struct.unpack("<I", rest[:4])[0]
            out.append(rest[8:8 + n])
            rest = rest[8 + n:]
        return header, out

    @staticmethod
    def encode(header, payloads):
        """Records with chained CRCs that check out (not keyed)."""
        out = bytearray(header)
        chain = struct.unpack("<I", header[40:44])[0]
        for p in payloads:
            chain = zlib.crc32(p, chain)
            out += struct.pack("<II", len(p), chain) + p
        return bytes(out)

    def first_index(self, d):
        path = os.path.join(d, "binlog.000001.gidx")
        with open(path, "rb") as f:
            return path, f.read()

    def test_the_log_has_indexes_with_entries_and_they_verify(self):
        path, data = self.first_index(self.log)
        _, recs = self.records(data)
        self.assertGreaterEqual(len(recs), 1)
        rc, out, _ = run("verify", self.log)
        self.assertEqual(rc, 0, out)
        self.assertNotIn("GTID index", out)

    def test_a_damaged_index_is_a_finding_of_its_own(self):
        d = self.copy_log()
        path, data = self.first_index(d)
        bad = bytearray(data)
        bad[60] ^= 0x01  # inside the first record
        with open(path, "wb") as f:
            f.write(bad)
        rc, out, _ = run("verify", d)
        self.assertEqual(rc, 5, out)
        self.assertIn(f"{path}: bad GTID index: record 0 at byte 44 does "
                      "not check out", out)
        self.assertRegex(out, r"transactions: OK; 1 bad GTID index file\n$")

    def test_a_crafted_state_is_found(self):
        d = self.copy_log()
        path, data = self.first_index(d)
        header, recs = self.records(data)
        first = bytearray(recs[0])
        n = struct.unpack("<Q", first[12:20])[0]
        first[12:20] = struct.pack("<Q", n + 1)  # gtid_transactions
        with open(path, "wb") as f:
            f.write(self.encode(header, [bytes(first)] + recs[1:]))
        rc, out, _ = run("verify", d)
        self.assertEqual(rc, 5, out)
        self.assertIn(f"{path}: bad GTID index: entry 0 at offset ", out)
        self.assertIn(f"{n + 1} GTID transactions before it, a scan of the "
                      f"file has {n}", out)

    def test_an_entry_off_a_transaction_start_is_found(self):
        d = self.copy_log()
        path, data = self.first_index(d)
        header, recs = self.records(data)
        first = bytearray(recs[0])
        offset = struct.unpack("<Q", first[0:8])[0]
        # The event after the entry's GTID event (inside its transaction).
        with open(os.path.join(d, "binlog.000001"), "rb") as f:
            f.seek(offset + 9)
            size = struct.unpack("<I", f.read(4))[0]
        first[0:8] = struct.pack("<Q", offset + size)
        with open(path, "wb") as f:
            f.write(self.encode(header, [bytes(first)] + recs[1:]))
        rc, out, _ = run("verify", d)
        self.assertEqual(rc, 5, out)
        self.assertIn(f"{path}: bad GTID index: entry 0 at offset "
                      f"{offset + size}: a QUERY_EVENT event header; a scan of "
                      f"the file puts entry 0 at {offset}", out)

    def with_version(self, header, version):
        """`header` as a file of format `version` would have it (its CRC
        recomputed)."""
        h = bytearray(header)
        h[7] = version
        h[40:44] = struct.pack("<I", zlib.crc32(bytes(h[:40])))
        return bytes(h)

    def test_an_older_format_version_is_a_note_not_a_bad_index(self):
        d = self.copy_log()
        path, data = self.first_index(d)
        header, recs = self.records(data)
        self.assertEqual(header[7], 3)
        with open(path, "wb") as f:
            f.write(self.encode(self.with_version(header, 2), recs))
        rc, out, _ = run("verify", d)
        self.assertEqual(rc, 0, out)
        self.assertIn(f"{path}: note: GTID index of format version 2 (this "
                      "library writes version 3): GTID readers rebuild it",
                      out)
        self.assertNotIn("bad GTID index", out)
        self.assertRegex(out, r"transactions: OK\n$")
        # A newer version is not one readers of this version know.
        with open(path, "wb") as f:
            f.write(self.encode(self.with_version(header, 4), recs))
        rc, out, _ = run("verify", d)
        self.assertEqual(rc, 5, out)
        self.assertIn(f"{path}: bad GTID index: a GTID index of format "
                      "version 4", out)

    def test_files_given_on_the_command_line_have_theirs_checked(self):
        d = self.copy_log()
        path, data = self.first_index(d)
        with open(path, "wb") as f:
            f.write(data[:-3])  # torn
        rc, out, _ = run("verify", os.path.join(d, "binlog.000001"))
        self.assertEqual(rc, 5, out)
        self.assertIn(f"{path}: bad GTID index: ", out)

    def test_damage_to_the_binlog_still_exits_1(self):
        d = self.copy_log()
        binlog = os.path.join(d, "binlog.000001")
        with open(binlog, "r+b") as f:
            f.truncate(os.path.getsize(binlog) - 10)
        rc, out, _ = run("verify", d)
        self.assertEqual(rc, 1, out)
        self.assertIn(f"{binlog}.gidx: bad GTID index: built for ", out)
        self.assertRegex(out, r"1 problem; 1 bad GTID index file\n$")


if __name__ == "__main__":
    unittest.main()
