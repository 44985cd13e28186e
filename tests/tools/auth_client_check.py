#!/usr/bin/env python3
"""Authenticates to binlog_server with PyMySQL (an independent
implementation of the client protocol, including caching_sha2_password's
fast path, its full authentication in clear over a unix socket and with the
server's RSA public key over plaintext TCP) and runs one statement.

  auth_client_check.py (--port=N | --socket=PATH) --user=U --password=P
      [--expect_denied] [--ssl_ca=PEM]

With --ssl_ca the connection uses TLS, verifying the server's certificate
against that CA and the address 127.0.0.1 (the full authentication then
sends the password in clear, as over the socket).

Exit 0 when the connection and `SHOW VARIABLES LIKE 'server_id'` succeed
(with --expect_denied: when the server refuses with 1045), 1 otherwise; 77
when PyMySQL or the cryptography package (RSA) is not installed.
"""

import argparse
import sys

try:
    import pymysql
    import cryptography  # noqa: F401  (PyMySQL's RSA for caching_sha2_password)
except ImportError:
    sys.exit(77)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int)
    ap.add_argument("--socket")
    ap.add_argument("--user", required=True)
    ap.add_argument("--password", required=True)
    ap.add_argument("--expect_denied", action="store_true")
    ap.add_argument("--ssl_ca")
    a = ap.parse_args()
    where = {"unix_socket": a.socket} if a.socket else {"host": "127.0.0.1", "port": a.port}
    if a.ssl_ca:
        where["ssl"] = {"ca": a.ssl_ca, "check_hostname": True}
    try:
        conn = pymysql.connect(user=a.user, password=a.password, connect_timeout=10,
                               autocommit=None, **where)
    except pymysql.err.OperationalError as e:
        if a.expect_denied and e.args[0] == 1045:
            print("denied as expected:", e)
            return 0
        print("connect failed:", e)
        return 1
    if a.expect_denied:
        print("connected, but a refusal was expected")
        return 1
    with conn.cursor() as c:
        c.execute("SHOW VARIABLES LIKE 'server_id'")
        rows = c.fetchall()
    conn.close()
    if len(rows) != 1 or rows[0][0] != "server_id":
        print("unexpected answer:", rows)
        return 1
    print("ok", rows[0][1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
