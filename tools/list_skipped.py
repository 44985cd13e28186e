#!/usr/bin/env python3
"""Lists the test cases a Bazel test pass skipped (GTEST_SKIP and the like).

Usage: list_skipped.py TESTLOGS_DIR [EXPECTED_SKIPS] < bazel_test_output

Reads the per-test summary lines of `bazel test --test_summary=short`
("//tests:foo_test   (cached) PASSED in 0.3s") from stdin, opens each
test's TESTLOGS_DIR/<package>/<name>/test.xml (JUnit XML, as googletest
writes it) and prints one line per skipped test case, with its reason:

    skipped: //tests:io_error_test SmallFsTest.DiskFull...: <reason>
    skipped (UNEXPECTED): //tests/tools:python_client_test ...: <reason>

A skip is expected when an entry of EXPECTED_SKIPS (default
tests/expected_skips.txt: "<label> <case pattern> <reason text>" per line,
# comments) has its label, matches its Suite.Name with fnmatch, and its
reason text is in the skip's reason. The last line is "N skipped, M
unexpected". A test whose XML is missing or unreadable is not counted (its
pass/fail status is what bazel reported).
"""

import fnmatch
import os
import re
import sys
import xml.etree.ElementTree as ET

SUMMARY = re.compile(r'^(//[^ ]+)\s+(\(cached\) )?(PASSED|FLAKY|FAILED)')


def read_expected(path):
    entries = []
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line or line.startswith('#'):
                    continue
                parts = line.split(None, 2)
                if len(parts) != 3:
                    sys.exit('%s: malformed entry: %s' % (path, line))
                entries.append(tuple(parts))
    except OSError as e:
        sys.exit('cannot read %s: %s' % (path, e))
    return entries


def is_expected(entries, label, case, reason):
    for e_label, e_case, e_reason in entries:
        if (e_label == label and fnmatch.fnmatchcase(case, e_case) and
                e_reason in reason):
            return True
    return False


def main():
    testlogs = sys.argv[1]
    expected_path = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), '..', 'tests',
        'expected_skips.txt')
    entries = read_expected(expected_path)
    count = 0
    unexpected = 0
    for line in sys.stdin:
        m = SUMMARY.match(line)
        if not m:
            continue
        label = m.group(1)
        package, _, name = label[2:].partition(':')
        xml_path = os.path.join(testlogs, package, name, 'test.xml')
        try:
            root = ET.parse(xml_path).getroot()
        except (OSError, ET.ParseError):
            continue
        for case in root.iter('testcase'):
            skipped = case.find('skipped')
            if case.get('result') != 'skipped' and skipped is None:
                continue
            reason = ''
            if skipped is not None:
                reason = skipped.get('message') or (skipped.text or '')
            reason = ' '.join(reason.split())
            case_name = '%s.%s' % (case.get('classname', ''),
                                   case.get('name', ''))
            ok = is_expected(entries, label, case_name, reason)
            print('skipped%s: %s %s: %s' % ('' if ok else ' (UNEXPECTED)',
                                            label, case_name, reason))
            count += 1
            if not ok:
                unexpected += 1
    print('%d skipped, %d unexpected' % (count, unexpected))


if __name__ == '__main__':
    main()
