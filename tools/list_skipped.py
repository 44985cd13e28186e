#!/usr/bin/env python3
"""Lists the test cases a Bazel test pass skipped (GTEST_SKIP and the like).

Usage: list_skipped.py TESTLOGS_DIR < bazel_test_output

Reads the per-test summary lines of `bazel test --test_summary=short`
("//tests:foo_test   (cached) PASSED in 0.3s") from stdin, opens each
test's TESTLOGS_DIR/<package>/<name>/test.xml (JUnit XML, as googletest
writes it) and prints one line per skipped test case:

    skipped: //tests:io_error_test SmallFsTest.DiskFull...: <reason>

then a last line "N skipped". A test whose XML is missing or unreadable is
not counted (its pass/fail status is what bazel reported).
"""

import os
import re
import sys
import xml.etree.ElementTree as ET

SUMMARY = re.compile(r'^(//[^ ]+)\s+(\(cached\) )?(PASSED|FLAKY|FAILED)')


def main():
    testlogs = sys.argv[1]
    count = 0
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
            print('skipped: %s %s.%s: %s' % (label, case.get('classname', ''),
                                            case.get('name', ''), reason))
            count += 1
    print('%d skipped' % count)


if __name__ == '__main__':
    main()
