#!/usr/bin/env python3
"""End-to-end tests of the binlog_server binary: its flags, its unix socket
handling and its signals (the protocol itself is server_test's).

  FlagsTest     required flags, bad values and unknown flags are refused
  SocketTest    --socket refuses a regular file and a live server's
                socket, replaces a stale one, and is removed at exit
  BindTest      --bind=127.0.0.1,::1 serves both on one port; what is not
                an address literal is refused
  ServeTest     a client on 127.0.0.1 and on the socket gets the greeting;
                the mariadb client (when installed) runs a query; SIGTERM
                ends the server with status 0
  RelayRetentionTest  a relay (--source) of a served log with
                --binlog_max_total_size purges its copy to the last file
                and logs it
  TlsTest       unusable certificates are startup errors; the mariadb
                client over TLS verifying the server's certificate against
                the test CA (made at test time by make_test_pki), refusing
                a server its CA did not sign; under
                --require_secure_transport plaintext TCP gets 3159 and the
                unix socket is served

Every wait polls for a condition with a deadline. Started by
binlog_server_test.sh (an sh_test, so python3 comes from PATH).
"""

import os
import select
import shutil
import signal
import socket
import ssl
import struct
import subprocess
import tempfile
import time
import unittest

SRCDIR = os.environ["TEST_SRCDIR"]
SERVER = os.path.join(SRCDIR, "binlog_storage", "tools", "binlog_server")
GEN = os.path.join(SRCDIR, "binlog_storage", "tools", "binlog_gen")
MAKE_PKI = os.path.join(SRCDIR, "binlog_storage", "tests", "testutil", "make_test_pki")
DEADLINE = 30.0


class ServerBase(unittest.TestCase):
    def setUp(self):
        # Short paths: a unix socket path has at most 107 bytes.
        self.dir = tempfile.mkdtemp(prefix="bls_", dir="/tmp")
        self.log = os.path.join(self.dir, "log")
        r = subprocess.run([GEN, "--dir=" + self.log, "--transactions=20"],
                           capture_output=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.users = os.path.join(self.dir, "users")
        with open(self.users, "w") as f:
            f.write("# replication users\n")
            f.write(self.hash_user("repl", "mysql_native_password", "s3cret"))
            f.write(self.hash_user("sha2", "caching_sha2_password", "s3cret2"))
        os.chmod(self.users, 0o600)
        self.sock = os.path.join(self.dir, "s.sock")
        self.procs = []

    def tearDown(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait(timeout=DEADLINE)
            p.stdout.close()
            p.stderr.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def hash_user(self, user, plugin, password):
        """The users-file line --hash_user prints for `password`."""
        r = subprocess.run([SERVER, "--hash_user=" + user, "--auth_plugin=" + plugin],
                           input=(password + "\n").encode(), capture_output=True,
                           timeout=DEADLINE)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout.decode()

    def run_server(self, *flags):
        """Runs binlog_server to completion (it is expected to refuse)."""
        r = subprocess.run([SERVER] + list(flags), capture_output=True,
                           timeout=DEADLINE)
        return r.returncode, r.stderr.decode("utf-8", errors="replace")

    def start(self, *flags):
        """Starts binlog_server; returns it and its TCP port (None without
        --port) once it has printed every "listening" line."""
        p = subprocess.Popen([SERVER, "--dir=" + self.log, "--users=" + self.users]
                             + list(flags), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        self.procs.append(p)
        want = sum(1 for f in flags if f.startswith("--socket="))
        if any(f.startswith("--port=") for f in flags):
            binds = [f[len("--bind="):] for f in flags if f.startswith("--bind=")]
            want += len(binds[-1].split(",")) if binds else 1
        port, seen, buf = None, 0, b""
        end = time.monotonic() + DEADLINE
        while seen < want:
            left = end - time.monotonic()
            self.assertGreater(left, 0, "binlog_server did not start")
            ready, _, _ = select.select([p.stdout], [], [], left)
            if not ready:
                continue
            chunk = os.read(p.stdout.fileno(), 4096)
            if not chunk:
                self.fail("binlog_server exited: %r" % p.stderr.read())
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                line = line.decode()
                if line.startswith(("listening 127.0.0.1:", "listening [::1]:")):
                    port = int(line.rsplit(":", 1)[1])
                if line.startswith("listening "):
                    seen += 1
        return p, port

    def stop(self, p):
        p.send_signal(signal.SIGTERM)
        self.assertEqual(p.wait(timeout=DEADLINE), 0, p.stderr.read())

    def greeting(self, family, address):
        s = socket.socket(family, socket.SOCK_STREAM)
        s.settimeout(DEADLINE)
        s.connect(address)
        data = b""
        while len(data) < 5:
            chunk = s.recv(4096)
            self.assertTrue(chunk)
            data += chunk
        s.close()
        return data[4]  # the protocol version byte


class FlagsTest(ServerBase):
    def test_refuses_bad_command_lines(self):
        base = ["--dir=" + self.log, "--users=" + self.users]
        for args, why in [
            (["--users=" + self.users, "--port=0"], "--dir is required"),
            (["--dir=" + self.log, "--port=0"], "--users is required"),
            (base, "--port or --socket"),
            (base + ["--port=70000"], "--port must be"),
            (base + ["--port=0", "--max_connections=0"], "must be >= 1"),
            (base + ["--port=0", "--handshake_timeout=0s"], "must be > 0"),
            (base + ["--port=0", "--max_packet=10"], ">= 1024"),
            (base + ["--port=0", "--max_replicas=0"], "--max_replicas must be >= 1"),
            (base + ["--port=0", "--replica_expire_seconds=99999999999999"],
             "--replica_expire_seconds must be at most"),
            (base + ["--port=0", "--users=" + self.dir + "/none"],
             "cannot read --users"),
            (base + ["--port=0", "--binlog_max_total_size=1"],
             "retention options are for relay mode"),
            (base + ["--port=0", "--source=127.0.0.1:1", "--source_user=u",
                     "--server_id=5", "--binlog_max_total_size=1",
                     "--consumers=nopath"], "--consumers takes NAME=PATH"),
            (base + ["--port=0", "--source=127.0.0.1:1", "--source_user=u",
                     "--server_id=5", "--consumers=a=/tmp/a.pos"],
             "--consumers needs a retention limit"),
            (base + ["--port=0", "--source=127.0.0.1:1", "--source_user=u",
                     "--server_id=5", "--binlog_expire_logs_seconds=60",
                     "--retention_interval=0s"], "--retention_interval must be > 0"),
            (base + ["--port=0", "--max_replica_uuids_per_server_id=0"],
             "--max_replica_uuids_per_server_id must be >= 1"),
            (base + ["--port=0", "--source=127.0.0.1:3306,somewhere"],
             "--source must be HOST:PORT"),
            (base + ["--port=0", "--source=127.0.0.1:3306,127.0.0.1:3307",
                     "--source_failover_after=0s"],
             "--source_failover_after must be > 0"),
        ]:
            code, err = self.run_server(*args)
            self.assertEqual(code, 2, (args, err))
            self.assertIn(why, err, args)
        code, err = self.run_server(*(base + ["--port=0", "--no_such_flag=1"]))
        self.assertNotEqual(code, 0)
        self.assertIn("no_such_flag", err)

    def test_limits_are_flags(self):
        p, port = self.start("--port=0", "--max_connections=3",
                             "--max_unauthenticated_connections=2",
                             "--handshake_timeout=5s", "--auth_failure_delay=10ms",
                             "--max_handshake_packet=8192", "--max_packet=65536",
                             "--max_query_length=1000", "--max_session_variables=8",
                             "--max_session_variable_bytes=4096",
                             "--max_replicas=10", "--replica_expire_seconds=0")
        self.assertEqual(self.greeting(socket.AF_INET, ("127.0.0.1", port)), 10)
        self.stop(p)


class RelayRetentionTest(ServerBase):
    def test_relay_purges_its_copy_with_the_retention_flags(self):
        # A source log of several files served at rest, and a relay of it
        # whose size limit wants every file but the last gone (no replica
        # or consumer holds any): the copy keeps its last file only, and
        # the purge is logged on standard error.
        src = os.path.join(self.dir, "multi")
        r = subprocess.run([GEN, "--dir=" + src, "--transactions=60",
                            "--rotate_every=10"], capture_output=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(src, "binlog.index")) as f:
            source_files = [os.path.basename(l.strip()) for l in f if l.strip()]
        self.assertGreaterEqual(len(source_files), 3)
        self.log = src  # what start() serves
        p, port = self.start("--port=0")
        pw = os.path.join(self.dir, "pw")
        with open(pw, "w") as f:
            f.write("s3cret\n")
        os.chmod(pw, 0o600)
        copy = os.path.join(self.dir, "copy")
        os.mkdir(copy)
        relay = subprocess.Popen(
            [SERVER, "--dir=" + copy, "--users=" + self.users, "--port=0",
             "--source=127.0.0.1:%d" % port, "--source_user=repl",
             "--source_password_file=" + pw, "--server_id=9",
             "--binlog_max_total_size=1", "--retention_interval=100ms",
             "--retention_startup_grace=0s"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.procs.append(relay)
        index = os.path.join(copy, "binlog.index")
        end = time.monotonic() + DEADLINE
        names = []
        def gone():
            return not any(os.path.exists(os.path.join(copy, n))
                           for n in source_files[:-1])
        # The index is rewritten first, then the files are removed.
        while time.monotonic() < end:
            if os.path.exists(index):
                with open(index) as f:
                    names = [os.path.basename(l.strip()) for l in f if l.strip()]
                if names == source_files[-1:] and gone():
                    break
            time.sleep(0.05)  # polls the relay's files, another process
        self.assertEqual(names, source_files[-1:])
        for name in source_files[:-1]:
            self.assertFalse(os.path.exists(os.path.join(copy, name)), name)
        relay.send_signal(signal.SIGTERM)
        self.assertEqual(relay.wait(timeout=DEADLINE), 0)
        err = relay.stderr.read().decode()
        self.assertIn("retention: purged " + source_files[0], err)
        self.stop(p)


    def test_a_bad_replicas_file_is_an_error_exit(self):
        # The copy's saved replica positions cannot be read: the relay
        # stops and the server exits with status 1 and the reason (not a
        # signal).
        p, port = self.start("--port=0")
        pw = os.path.join(self.dir, "pw")
        with open(pw, "w") as f:
            f.write("s3cret\n")
        os.chmod(pw, 0o600)
        copy = os.path.join(self.dir, "badcopy")
        os.mkdir(copy)
        with open(os.path.join(copy, "binlog.replicas"), "w") as f:
            f.write("not the header\n")
        code, err = self.run_server(
            "--dir=" + copy, "--users=" + self.users, "--port=0",
            "--source=127.0.0.1:%d" % port, "--source_user=repl",
            "--source_password_file=" + pw, "--server_id=9",
            "--binlog_expire_logs_seconds=60")
        self.assertEqual(code, 1, err)
        self.assertIn("not a replicas file", err)
        self.stop(p)


class UsersFileTest(ServerBase):
    def test_hash_user_prints_the_stored_credential(self):
        # MariaDB's PASSWORD('pw').
        self.assertEqual(self.hash_user("u", "mysql_native_password", "pw"),
                         "u:mysql_native_password:*D821809F681A40A6E379B50D0463EFAE20BDD122\n")
        line = self.hash_user("u", "caching_sha2_password", "pw").rstrip("\n")
        user, plugin, auth = line.split(":", 2)
        self.assertEqual((user, plugin), ("u", "caching_sha2_password"))
        self.assertTrue(auth.startswith("$A$005$"), auth)
        self.assertEqual(len(auth), 7 + 20 + 43)
        # A new salt every time.
        self.assertNotEqual(self.hash_user("u", "caching_sha2_password", "pw").rstrip("\n"), line)
        r = subprocess.run([SERVER, "--hash_user=u", "--auth_plugin=sha256_password"],
                           input=b"pw\n", capture_output=True, timeout=DEADLINE)
        self.assertEqual(r.returncode, 2)
        self.assertIn(b"unknown authentication plugin", r.stderr)

    def test_refuses_plaintext_and_readable_users_files(self):
        old = os.path.join(self.dir, "old_users")
        with open(old, "w") as f:
            f.write("repl:s3cret\n")
        os.chmod(old, 0o600)
        code, err = self.run_server("--dir=" + self.log, "--users=" + old, "--port=0")
        self.assertEqual(code, 2, err)
        self.assertIn("plain-text passwords are no longer read", err)
        self.assertIn("--hash_user", err)
        for mode in (0o640, 0o604):
            os.chmod(self.users, mode)
            code, err = self.run_server("--dir=" + self.log, "--users=" + self.users,
                                        "--port=0")
            self.assertEqual(code, 2, err)
            self.assertIn("open to its group or other users", err)
            self.assertIn("chmod go-rwx", err)


class SocketTest(ServerBase):
    def test_refuses_a_regular_file(self):
        with open(self.sock, "w") as f:
            f.write("precious")
        code, err = self.run_server("--dir=" + self.log, "--users=" + self.users,
                                    "--socket=" + self.sock)
        self.assertEqual(code, 1, err)
        self.assertIn("not a socket", err)
        with open(self.sock) as f:
            self.assertEqual(f.read(), "precious")

    def test_refuses_a_live_server_and_replaces_a_stale_socket(self):
        p, _ = self.start("--socket=" + self.sock)
        code, err = self.run_server("--dir=" + self.log, "--users=" + self.users,
                                    "--socket=" + self.sock)
        self.assertEqual(code, 1, err)
        self.assertIn("another server is listening", err)
        # The first server still serves on its socket.
        self.assertEqual(self.greeting(socket.AF_UNIX, self.sock), 10)
        self.stop(p)
        self.assertFalse(os.path.exists(self.sock), "socket left behind")
        # A socket whose server is gone (bound, closed, not removed).
        stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        stale.bind(self.sock)
        stale.close()
        p, _ = self.start("--socket=" + self.sock)
        self.assertEqual(self.greeting(socket.AF_UNIX, self.sock), 10)
        self.stop(p)


class ServeTest(ServerBase):
    def test_serves_tcp_and_socket_and_stops_on_sigterm(self):
        p, port = self.start("--port=0", "--socket=" + self.sock)
        self.assertEqual(self.greeting(socket.AF_INET, ("127.0.0.1", port)), 10)
        self.assertEqual(self.greeting(socket.AF_UNIX, self.sock), 10)
        client = shutil.which("mariadb")
        if client:
            # The mariadb client (libmariadb): mysql_native_password, and
            # its caching_sha2_password plugin: over the unix socket the
            # full authentication in clear, over TCP with the server's RSA
            # public key, then the fast path.
            for where, user, pw in [
                    (["--socket=" + self.sock], "repl", "s3cret"),
                    (["--protocol=tcp", "--host=127.0.0.1", "--port=%d" % port], "repl",
                     "s3cret"),
                    (["--socket=" + self.sock], "sha2", "s3cret2"),
                    (["--protocol=tcp", "--host=127.0.0.1", "--port=%d" % port], "sha2",
                     "s3cret2")]:
                r = subprocess.run(
                    [client, "--no-defaults"] + where +
                    ["-u" + user, "-p" + pw, "-N", "-B", "-e",
                     "SHOW VARIABLES LIKE 'server_id'"],
                    capture_output=True, timeout=DEADLINE)
                self.assertEqual(r.returncode, 0, (where, user, r.stderr))
                self.assertTrue(r.stdout.decode().startswith("server_id\t"), r.stdout)
            r = subprocess.run(
                [client, "--no-defaults", "--socket=" + self.sock, "-usha2", "-pwrong",
                 "-e", "SELECT 1"], capture_output=True, timeout=DEADLINE)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn(b"1045", r.stderr)
        self.stop(p)
        self.assertFalse(os.path.exists(self.sock))


class BindTest(ServerBase):
    def test_binds_ipv4_and_ipv6_on_one_port(self):
        try:
            probe = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
            probe.bind(("::1", 0))
            probe.close()
        except OSError as e:
            self.skipTest("no IPv6 loopback (::1) on this machine: %s" % e)
        p, port = self.start("--port=0", "--bind=127.0.0.1, ::1")
        self.assertEqual(self.greeting(socket.AF_INET, ("127.0.0.1", port)), 10)
        self.assertEqual(self.greeting(socket.AF_INET6, ("::1", port)), 10)
        self.stop(p)

    def test_refuses_what_is_not_an_address(self):
        base = ["--dir=" + self.log, "--users=" + self.users, "--port=0"]
        for bind, why in [("localhost", "not an IPv4 or IPv6 address"),
                          ("127.0.0.1,10.0.0.300", "not an IPv4 or IPv6 address"),
                          (",", "--bind names no address")]:
            code, err = self.run_server(*(base + ["--bind=" + bind]))
            self.assertEqual(code, 2, (bind, err))
            self.assertIn(why, err, bind)


class TlsTest(ServerBase):
    def setUp(self):
        super().setUp()
        self.pki = os.path.join(self.dir, "pki")
        os.mkdir(self.pki, 0o700)
        r = subprocess.run([MAKE_PKI, self.pki], capture_output=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)

    def f(self, name):
        return os.path.join(self.pki, name)

    def tls_flags(self):
        return ["--ssl_cert=" + self.f("server.pem"), "--ssl_key=" + self.f("server.key"),
                "--ssl_ca=" + self.f("ca.pem")]

    def test_unusable_certificates_are_startup_errors(self):
        base = ["--dir=" + self.log, "--users=" + self.users, "--port=0"]
        for flags, code, why in [
            (["--ssl_cert=" + self.f("expired.pem"), "--ssl_key=" + self.f("server.key")],
             1, "expired"),
            (["--ssl_cert=" + self.f("server.pem"), "--ssl_key=" + self.f("client.key")],
             1, "does not match"),
            (["--ssl_cert=" + self.dir + "/none.pem", "--ssl_key=" + self.f("server.key")],
             1, "cannot load the certificate"),
            (["--ssl_cert=" + self.f("server.pem"), "--ssl_key=" + self.f("server.key"),
              "--ssl_ca=" + self.dir + "/none.pem"], 1, "cannot load the CA"),
            (["--ssl_cert=" + self.f("server.pem")], 2, "go together"),
            (["--ssl_ca=" + self.f("ca.pem")], 2, "--ssl_ca needs"),
        ]:
            got, err = self.run_server(*(base + flags))
            self.assertEqual(got, code, (flags, err))
            self.assertIn(why, err, flags)

    def mariadb(self, *args):
        client = shutil.which("mariadb")
        if not client:
            self.skipTest("the mariadb client is not installed (tools/setup.sh)")
        r = subprocess.run([client, "--no-defaults", "-urepl", "-ps3cret", "-N", "-B"]
                           + list(args), capture_output=True, timeout=DEADLINE)
        return r.returncode, r.stdout.decode(), r.stderr.decode()

    def test_mariadb_client_verifies_the_server_certificate(self):
        p, port = self.start("--port=0", *self.tls_flags())
        tcp = ["-h127.0.0.1", "-P%d" % port]
        code, out, err = self.mariadb(
            *tcp, "--ssl", "--ssl-ca=" + self.f("ca.pem"), "--ssl-verify-server-cert",
            "-e", "SHOW BINARY LOG STATUS")
        self.assertEqual(code, 0, err)
        self.assertTrue(out.startswith("binlog.000001\t"), out)
        # A client certificate signed by the CA is accepted too.
        code, out, err = self.mariadb(
            *tcp, "--ssl", "--ssl-ca=" + self.f("ca.pem"), "--ssl-verify-server-cert",
            "--ssl-cert=" + self.f("client.pem"), "--ssl-key=" + self.f("client.key"),
            "-e", "SELECT 1")
        self.assertEqual(code, 0, err)
        self.assertEqual(out.strip(), "1")
        # A client trusting another CA refuses the server.
        code, out, err = self.mariadb(
            *tcp, "--ssl", "--ssl-ca=" + self.f("other-ca.pem"), "--ssl-verify-server-cert",
            "-e", "SELECT 1")
        self.assertNotEqual(code, 0, out)
        self.assertIn("SSL", err)
        self.stop(p)

    def tls_version(self, port, version):
        """Opens TLS limited to `version` after a raw SSLRequest; returns the
        negotiated version or raises ssl.SSLError."""
        s = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE)
        try:
            head = b""
            while len(head) < 4:
                head += s.recv(4 - len(head))
            length = int.from_bytes(head[:3], "little")
            while length:
                length -= len(s.recv(length))
            # CLIENT_PROTOCOL_41 | CLIENT_SSL | CLIENT_SECURE_CONNECTION.
            payload = struct.pack("<IIB23s", 0x200 | 0x800 | 0x8000, 1 << 24, 33, b"")
            s.sendall(len(payload).to_bytes(3, "little") + b"\x01" + payload)
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.load_verify_locations(self.f("ca.pem"))
            ctx.set_ciphers("DEFAULT:@SECLEVEL=0")
            ctx.minimum_version = version
            ctx.maximum_version = version
            with ctx.wrap_socket(s, server_hostname="127.0.0.1") as t:
                return t.version()
        finally:
            s.close()

    def test_tls_1_2_is_the_minimum(self):
        p, port = self.start("--port=0", *self.tls_flags())
        self.assertEqual(self.tls_version(port, ssl.TLSVersion.TLSv1_2), "TLSv1.2")
        self.assertEqual(self.tls_version(port, ssl.TLSVersion.TLSv1_3), "TLSv1.3")
        for old in (ssl.TLSVersion.TLSv1, ssl.TLSVersion.TLSv1_1):
            with self.assertRaises(ssl.SSLError) as e:
                self.tls_version(port, old)
            # The server's refusal (an alert), not the client's own.
            self.assertIn("PROTOCOL_VERSION", str(e.exception).upper(), old)
        self.stop(p)

    def test_require_secure_transport(self):
        p, port = self.start("--port=0", "--socket=" + self.sock,
                             "--require_secure_transport", *self.tls_flags())
        tcp = ["-h127.0.0.1", "-P%d" % port]
        code, out, err = self.mariadb(*tcp, "--skip-ssl", "-e", "SELECT 1")
        self.assertNotEqual(code, 0, out)
        self.assertIn("ERROR 3159 (HY000)", err)
        self.assertIn("require_secure_transport", err)
        code, out, err = self.mariadb(
            *tcp, "--ssl", "--ssl-ca=" + self.f("ca.pem"), "--ssl-verify-server-cert",
            "-e", "SELECT 1")
        self.assertEqual(code, 0, err)
        code, out, err = self.mariadb("--socket=" + self.sock, "--skip-ssl", "-e", "SELECT 1")
        self.assertEqual(code, 0, err)
        self.assertEqual(out.strip(), "1")
        self.stop(p)


if __name__ == "__main__":
    unittest.main()
