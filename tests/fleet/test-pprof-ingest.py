#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Our pprof against what the profile stores' ingest paths check (docs/fleet.md, "What
Pyroscope and Parca require"). Neither server is packaged in Debian, so this decodes the
profile.proto wire format itself (no protobuf module) and applies the documented rules:

Parca (WriteRaw, pkg/parcacol ValidatePprofProfile): string_table[0] is ""; mapping,
function and location ids are 1..n in order; every string index, mapping id and
function id in range; sample types present when there are samples; every sample has one
value per sample type and non-zero location ids in range; labels have a key.

Pyroscope (/ingest?format=pprof, pkg/validation ValidateProfile and the pprof ingest
adapter): location and function ids non-zero; no '-' in a sample type name; the body is
the profile itself, gzip'd or not; a sample type containing "cpu" names the series
process_cpu (so "cpu" must be one of ours, and with its unit, nanoseconds).

And what both take from the profile: a period type, time_nanos (the trace's
wall-clock anchor) and duration_nanos set.

Usage: test-pprof-ingest.py ANALYZE TRACE WORKDIR
"""
import gzip
import os
import subprocess
import sys


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return v, i


def fields(b):
    """(field number, wire type, value) of one message: ints or bytes."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i)
            v = b[i:i + n]
            i += n
        elif wt == 1:
            v = int.from_bytes(b[i:i + 8], "little")
            i += 8
        elif wt == 5:
            v = int.from_bytes(b[i:i + 4], "little")
            i += 4
        else:
            raise ValueError("wire type %d" % wt)
        yield f, wt, v


def ints(wt, v):
    """A repeated integer field: packed (bytes) or one value."""
    if wt != 2:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


def message(b, repeated_ints=()):
    m = {}
    for f, wt, v in fields(b):
        if f in repeated_ints:
            m.setdefault(f, []).extend(ints(wt, v))
        else:
            m.setdefault(f, []).append(v)
    return m


def one(m, f, default=0):
    return m.get(f, [default])[-1]


def check(data):
    errors = []
    gz = data[:2] == b"\x1f\x8b"
    raw = gzip.decompress(data) if gz else data
    p = message(raw)
    strings = [s.decode("utf-8") for s in p.get(6, [])]
    nstr = len(strings)

    def bad(msg):
        errors.append(msg)

    def in_str(idx, what):
        if idx < 0 or idx >= nstr:
            bad("%s: string index %d out of range (%d strings)" % (what, idx, nstr))

    if not gz:
        bad("not gzip'd (both stores accept it; our files are .pb.gz)")
    if nstr == 0 or strings[0] != "":
        bad("string_table[0] must be the empty string")
    sample_types = [message(v) for v in p.get(1, [])]
    names = []
    for k, st in enumerate(sample_types):
        t, u = one(st, 1), one(st, 2)
        in_str(t, "sample_type %d type" % k)
        in_str(u, "sample_type %d unit" % k)
        name = strings[t] if t < nstr else ""
        names.append((name, strings[u] if u < nstr else ""))
        if "-" in name:
            bad("sample type %r contains '-' (Pyroscope refuses it)" % name)
        if name == "":
            bad("sample type %d has no name" % k)
    mappings = [message(v) for v in p.get(3, [])]
    for k, m in enumerate(mappings):
        if one(m, 1) != k + 1:
            bad("mapping %d has id %d: Parca wants 1..n in order" % (k, one(m, 1)))
        in_str(one(m, 5), "mapping filename")
        in_str(one(m, 6), "mapping build_id")
    functions = [message(v) for v in p.get(5, [])]
    for k, fn in enumerate(functions):
        if one(fn, 1) != k + 1:
            bad("function %d has id %d: Parca wants 1..n in order, Pyroscope non-zero" %
                (k, one(fn, 1)))
        for f, what in ((2, "name"), (3, "system_name"), (4, "filename")):
            in_str(one(fn, f), "function %s" % what)
    locations = [message(v) for v in p.get(4, [])]
    for k, loc in enumerate(locations):
        if one(loc, 1) != k + 1:
            bad("location %d has id %d: Parca wants 1..n in order, Pyroscope non-zero" %
                (k, one(loc, 1)))
        if one(loc, 2) > len(mappings):
            bad("location %d: mapping id %d out of range" % (k, one(loc, 2)))
        for ln in loc.get(4, []):
            fid = one(message(ln), 1)
            if fid > len(functions):
                bad("location %d: function id %d out of range" % (k, fid))
    samples = [message(v, repeated_ints=(1, 2)) for v in p.get(2, [])]
    if samples and not sample_types:
        bad("samples without sample types")
    for k, s in enumerate(samples):
        if len(s.get(2, [])) != len(sample_types):
            bad("sample %d has %d values for %d types" %
                (k, len(s.get(2, [])), len(sample_types)))
        for lid in s.get(1, []):
            if lid == 0 or lid > len(locations):
                bad("sample %d: location id %d (0 or out of range)" % (k, lid))
        for lb in s.get(3, []):
            lm = message(lb)
            if one(lm, 1) == 0:
                bad("sample %d: a label without a key" % k)
            in_str(one(lm, 1), "label key")
            in_str(one(lm, 2), "label str")
    if 11 not in p:
        bad("no period_type")
    else:
        pt = message(p[11][-1])
        in_str(one(pt, 1), "period_type type")
    if one(p, 9) <= 0:
        bad("no time_nanos (Pyroscope then takes the request's from=)")
    if one(p, 10) <= 0:
        bad("no duration_nanos")
    if ("cpu", "nanoseconds") not in names:
        bad("no cpu/nanoseconds sample type (Pyroscope names the series after it): %r" %
            names)
    return errors, names, len(samples), len(locations)


def self_test():
    """The checker finds what it must: a profile with a bad location id and a '-'."""
    def enc_varint(v):
        out = bytearray()
        while True:
            c = v & 0x7F
            v >>= 7
            out.append(c | (0x80 if v else 0))
            if not v:
                return bytes(out)

    def field(f, payload):
        if isinstance(payload, int):
            return enc_varint(f << 3) + enc_varint(payload)
        return enc_varint(f << 3 | 2) + enc_varint(len(payload)) + payload

    strings = [b"", b"cpu-time", b"nanoseconds"]
    prof = b"".join(field(6, s) for s in strings)
    prof += field(1, field(1, 1) + field(2, 2))
    prof += field(4, field(1, 7))  # location id 7 as the first: not sequential
    prof += field(2, field(1, 7) + field(2, 5))
    errors, _, _, _ = check(gzip.compress(prof))
    wanted = ["contains '-'", "location 0 has id 7", "no period_type", "no cpu/nanoseconds"]
    for w in wanted:
        if not any(w in e for e in errors):
            print("self-test: the checker missed %r in %r" % (w, errors))
            return False
    return True


def main():
    analyze, trace, work = sys.argv[1:4]
    if not self_test():
        return 1
    out = os.path.join(work, "ingest-check.pb.gz")
    r = subprocess.run([analyze, "-f", "pprof", "-o", out, trace], capture_output=True,
                       text=True)
    if r.returncode != 0 and "not built in" in (r.stderr or ""):
        print("SKIP: pprof is not built in (meson -Dpprof=enabled)")
        return 77
    if r.returncode != 0:
        print("inferscope-analyze -f pprof failed: %s" % r.stderr)
        return 1
    with open(out, "rb") as f:
        data = f.read()
    errors, names, nsamples, nloc = check(data)
    for e in errors:
        print("FAIL: %s" % e)
    if nsamples == 0 or nloc == 0:
        print("FAIL: %d samples, %d locations: nothing was checked" % (nsamples, nloc))
        return 1
    print("%s: sample types %r, %d samples, %d locations: %s" %
          (trace, names, nsamples, nloc, "ingestible" if not errors else "NOT ingestible"))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
