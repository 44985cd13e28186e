#!/usr/bin/env python3
"""Flattens the corpus manifests into lines a C++ test reads easily.

Usage: manifest_events.py PATH... > corpus_events.txt
Only PATHs named manifest.json are read. Output, space-separated:
  event SCENARIO FILE POS END_LOG_POS SIZE TYPE_CODE
  file SCENARIO FILE SIZE IN_USE(0/1) CHECKSUM(CRC32|NONE) TORN_POS(-1 if none)
"""
import json
import os
import sys

def main(argv):
    for path in sorted(p for p in argv[1:] if os.path.basename(p) == "manifest.json"):
        scenario = os.path.basename(os.path.dirname(path))
        with open(path, encoding="utf-8") as f:
            m = json.load(f)
        for fl in m["files"]:
            tail = fl.get("tail") or {}
            partial = tail.get("partial_event") or {}
            torn = partial.get("pos", -1)
            fd = fl["format_description"]
            print("file", scenario, fl["name"], fl["size"],
                  1 if fd["in_use_flag"] else 0, fd["checksum"], torn)
            for e in fl["events"]:
                print("event", scenario, fl["name"], e["pos"], e["end_log_pos"],
                      e["size"], e["type_code"])
    return 0

if __name__ == "__main__":
    sys.exit(main(sys.argv))
