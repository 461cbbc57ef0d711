#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Parses a JUnit XML file as CI systems do and prints what they would show, as JSON.

Fails (exit 1) when the file is not well-formed XML or its counts disagree with its
test cases: the attributes are what GitLab and Jenkins display.
"""
import json
import sys
import xml.etree.ElementTree as ET


def main(path):
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    out = {"root": root.tag, "suites": len(suites), "cases": [], "errors": []}
    for s in suites:
        cases = s.findall("testcase")
        failed = [c for c in cases if c.find("failure") is not None]
        if int(s.get("tests")) != len(cases):
            out["errors"].append("tests=%s but %d testcases" % (s.get("tests"), len(cases)))
        if int(s.get("failures")) != len(failed):
            out["errors"].append("failures=%s but %d failed" % (s.get("failures"), len(failed)))
        out["tests"] = int(s.get("tests"))
        out["failures"] = int(s.get("failures"))
        out["properties"] = {p.get("name"): p.get("value") for p in s.iter("property")}
        so = s.find("system-out")
        out["system_out"] = so.text if so is not None else None
        for c in cases:
            f = c.find("failure")
            out["cases"].append({
                "classname": c.get("classname"),
                "name": c.get("name"),
                "failed": f is not None,
                "message": f.get("message") if f is not None else None,
            })
    if root.tag == "testsuites":
        if int(root.get("tests")) != sum(int(s.get("tests")) for s in suites):
            out["errors"].append("testsuites tests attribute disagrees")
    json.dump(out, sys.stdout)
    return 1 if out["errors"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
