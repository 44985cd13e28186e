#!/usr/bin/env python3
"""Turns MariaDB corpus manifest.json files into one TSV for C++ tests.

Usage: manifest_to_tsv.py PATH... > corpus_manifest.tsv
       manifest_to_tsv.py --ids PATH... > corpus_ids.tsv   (see ids_main)

Every PATH whose base name is manifest.json is read; other paths are ignored
(the genrule passes the whole corpus filegroup). The scenario is the name of
the directory holding the manifest. Output lines, tab-separated, sorted by
scenario and then in manifest order:

  file     scenario name size server_version checksum in_use(0/1)
           created_at_startup(0/1) parsed_end
  group    scenario name start end complete(0/1) terminator gtid
  partial  scenario name pos available_bytes declared_size
  index    scenario entry
  type     scenario type_code type_name   (each distinct pair once)

`terminator` is "-" for an incomplete group. See
tests/data/mariadb/README.md for what the manifest fields mean.
"""

import json
import os
import sys


def load_manifests(paths):
    """(scenario, manifest) for every manifest.json among `paths`, sorted;
    None if there is none."""
    manifests = sorted(
        p for p in paths if os.path.basename(p) == "manifest.json")
    if not manifests:
        sys.stderr.write(
            "manifest_to_tsv.py: no manifest.json among the inputs\n")
        return None
    out = []
    for path in manifests:
        with open(path, "r", encoding="utf-8") as f:
            out.append((os.path.basename(os.path.dirname(path)), json.load(f)))
    return out


# Event types whose descriptions --ids lists: Query, Xid, XA_prepare,
# MariaDB Gtid and Gtid_list.
ID_TYPES = (2, 16, 38, 162, 163)


def ids_main(paths):
    """What mariadb-binlog printed for the events that carry a transaction's
    identity, for the tests of the library's GTID and XID decoders. Lines:

      file   scenario name checksum(CRC32|NONE)
      event  scenario name pos type_code desc

    for the events of ID_TYPES; `desc` is mariadb-binlog's one-line
    description with tabs turned into spaces ("GTID 0-1-5 trans",
    "Gtid list [0-1-43]", "Xid = 12", "Query thread_id=5 ... xid=6").
    """
    manifests = load_manifests(paths)
    if manifests is None:
        return 1
    out = sys.stdout
    for scenario, m in manifests:
        for fl in m["files"]:
            out.write("\t".join([
                "file", scenario, fl["name"],
                fl["format_description"]["checksum"]]) + "\n")
            for e in fl["events"]:
                if e["type_code"] not in ID_TYPES or "desc" not in e:
                    continue
                out.write("\t".join([
                    "event", scenario, fl["name"], str(e["pos"]),
                    str(e["type_code"]), e["desc"].replace("\t", " "),
                ]) + "\n")
    return 0


def main(argv):
    if len(argv) > 1 and argv[1] == "--ids":
        return ids_main(argv[2:])
    manifests = load_manifests(argv[1:])
    if manifests is None:
        return 1
    out = sys.stdout
    for scenario, m in manifests:
        for entry in m.get("index_entries", []):
            out.write("\t".join(["index", scenario, entry]) + "\n")
        types = set()
        for fl in m["files"]:
            for e in fl["events"]:
                types.add((e["type_code"], e["type"]))
        for code, name in sorted(types):
            out.write("\t".join(["type", scenario, str(code), name]) + "\n")
        for fl in m["files"]:
            fd = fl["format_description"]
            out.write("\t".join([
                "file", scenario, fl["name"], str(fl["size"]),
                fd["server_version"], fd["checksum"],
                "1" if fd["in_use_flag"] else "0",
                "1" if fd.get("created_at_startup") else "0",
                str(fl["parsed_end"]),
            ]) + "\n")
            for g in fl["groups"]:
                out.write("\t".join([
                    "group", scenario, fl["name"], str(g["start"]),
                    str(g["end"]), "1" if g["complete"] else "0",
                    g["terminator"] or "-", g["gtid"],
                ]) + "\n")
            tail = fl.get("tail") or {}
            partial = tail.get("partial_event")
            if partial:
                out.write("\t".join([
                    "partial", scenario, fl["name"], str(partial["pos"]),
                    str(partial["available_bytes"]),
                    str(partial["declared_size"]),
                ]) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
