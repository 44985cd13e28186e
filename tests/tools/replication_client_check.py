#!/usr/bin/env python3
"""Reads a binlog from binlog_server with python-mysql-replication (an
independent implementation of the replication protocol) and checks that
every transaction arrives once, in order, with intact checksums.

  replication_client_check.py --port=N --user=U --password=P
      (--file=NAME --pos=N | --gtid=SET) --uuid=UUID --first=A --last=B
      [--ssl_ca=PEM | --ssl_disabled]

With --ssl_ca the connections (the replication stream and the control
connection) use TLS and verify the server's certificate against that CA
and the address 127.0.0.1. Without it PyMySQL uses TLS if the server offers
it, unverified ("preferred"); --ssl_disabled makes it plaintext.

Exit 0 when the GTIDs received are exactly UUID:A..B in order (each
transaction a Gtid event, its Query events and an Xid event), 1 otherwise;
77 when the library is not installed (the caller skips).
"""

import argparse
import sys

try:
    from pymysqlreplication import BinLogStreamReader
    from pymysqlreplication.event import GtidEvent, QueryEvent, XidEvent
except ImportError:
    sys.exit(77)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--user", required=True)
    ap.add_argument("--password", required=True)
    ap.add_argument("--file")
    ap.add_argument("--pos", type=int)
    ap.add_argument("--gtid")
    ap.add_argument("--uuid", required=True)
    ap.add_argument("--first", type=int, required=True)
    ap.add_argument("--last", type=int, required=True)
    ap.add_argument("--ssl_ca")
    ap.add_argument("--ssl_disabled", action="store_true")
    a = ap.parse_args()
    settings = {"host": "127.0.0.1", "port": a.port, "user": a.user, "passwd": a.password}
    if a.ssl_ca:
        settings["ssl"] = {"ca": a.ssl_ca, "check_hostname": True}
    if a.ssl_disabled:
        settings["ssl_disabled"] = True
    kwargs = dict(connection_settings=settings, server_id=4242, blocking=False,
                  verify_checksum=True)
    if a.ssl_ca:
        kwargs["ctl_connection_settings"] = dict(settings)
    if a.gtid is not None:
        kwargs["auto_position"] = a.gtid
    else:
        kwargs["log_file"] = a.file
        kwargs["log_pos"] = a.pos
        kwargs["resume_stream"] = True
    stream = BinLogStreamReader(**kwargs)
    gnos = []
    in_txn = False
    problems = []
    try:
        events = list(stream)
    except Exception as e:  # the server's refusal (3159), a TLS failure
        print("error: %s" % (e,))
        return 1
    for ev in events:
        if isinstance(ev, GtidEvent):
            if in_txn:
                problems.append("Gtid event inside a transaction")
            uuid, gno = ev.gtid.split(":")
            if uuid != a.uuid:
                problems.append("unexpected uuid " + uuid)
            gnos.append(int(gno))
            in_txn = True
        elif isinstance(ev, QueryEvent):
            if not in_txn:
                problems.append("Query event outside a transaction")
        elif isinstance(ev, XidEvent):
            if not in_txn:
                problems.append("Xid event outside a transaction")
            in_txn = False
    stream.close()
    want = list(range(a.first, a.last + 1))
    if gnos != want:
        problems.append("received GNOs %s, want %d..%d" % (gnos, a.first, a.last))
    if in_txn:
        problems.append("stream ended inside a transaction")
    if problems:
        print("\n".join(problems))
        return 1
    print("ok: %d transactions" % len(gnos))
    return 0


if __name__ == "__main__":
    sys.exit(main())
