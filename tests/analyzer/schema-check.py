#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Prints 'valid' or 'invalid: ...' for each FILE against docs/trace-format.schema.json.
Usage: schema-check.py SCHEMA FILE...   Exit 77 when python3-jsonschema is missing."""
import json
import sys

try:
    import jsonschema
except ImportError:
    sys.exit(77)

schema = json.load(open(sys.argv[1]))
validator = jsonschema.Draft202012Validator(schema)
for path in sys.argv[2:]:
    try:
        doc = json.load(open(path))
    except ValueError as e:
        print(path, "invalid: not JSON:", e)
        continue
    err = next(iter(validator.iter_errors(doc)), None)
    print(path, "valid" if err is None else "invalid: " + err.message[:120])
