#!/usr/bin/env python3
"""Lists what mariadb-binlog printed for the corpus events that carry a
transaction's identity, for tests of the library's GTID and XID decoders.

Usage: manifest_ids.py PATH... > corpus_ids.tsv

Every PATH whose base name is manifest.json is read (the genrule passes the
whole corpus filegroup); the scenario is the name of its directory. Output
lines, tab-separated, sorted by scenario, then in manifest (file) order:

  file   scenario name checksum(CRC32|NONE)
  event  scenario name pos type_code desc

for the events of types 2 (Query), 16 (Xid), 38 (XA_prepare), 162 (MariaDB
Gtid) and 163 (Gtid_list). `desc` is mariadb-binlog's one-line description
with tabs turned into spaces ("GTID 0-1-5 trans", "Gtid list [0-1-43]",
"Xid = 12", "XID = X'...',X'',1", "Query thread_id=5 ... xid=6").
"""

import json
import os
import sys

TYPES = (2, 16, 38, 162, 163)


def main(argv):
    manifests = sorted(
        p for p in argv[1:] if os.path.basename(p) == "manifest.json")
    if not manifests:
        sys.stderr.write("manifest_ids.py: no manifest.json among the inputs\n")
        return 1
    out = sys.stdout
    for path in manifests:
        scenario = os.path.basename(os.path.dirname(path))
        with open(path, "r", encoding="utf-8") as f:
            m = json.load(f)
        for fl in m["files"]:
            out.write("\t".join([
                "file", scenario, fl["name"],
                fl["format_description"]["checksum"]]) + "\n")
            for e in fl["events"]:
                if e["type_code"] not in TYPES or "desc" not in e:
                    continue
                out.write("\t".join([
                    "event", scenario, fl["name"], str(e["pos"]),
                    str(e["type_code"]), e["desc"].replace("\t", " "),
                ]) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
