#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generates the interposers of the whole CUDA runtime API from the toolkit's headers.

  gen-cuda-hooks.py --include DIR --handwritten cuda-fns.h --map-in libinferscope.map
                    --out-dir DIR -- CC [CC_ARGS...]

The hand-written hooks (hook-cuda-*.c, listed in cuda-fns.h) decode the arguments the
analyzer uses; every other function the runtime headers declare gets a generated hook
that records its name, duration, result and correlation id (and its stream, when it
takes one). The headers are read through the C preprocessor the build uses, twice:

  * as a program includes them, which gives every function and its prototype;
  * with CUDA_API_PER_THREAD_DEFAULT_STREAM, where the headers rename the calls that
    have a per-thread default stream variant to their _ptsz/_ptds symbols: the names
    that appear only then are the variants, with the prototype of their plain call.

Only the functions a given toolkit declares are generated, so an older toolkit gets a
smaller table; deprecated functions are hooked like the others (their attribute is
dropped from our definition). A declaration this script cannot take apart stops the
build with the header, the line and what was expected.

A generated hook is exported only under the runtime's own symbol versions, as hidden
versions (cudaStreamCreate@libcudart.so.13, @libcudart.so.12, @libcudart.so.11.0): a
program's call, which names the version of the runtime it linked, binds to the hook,
but dlsym(RTLD_DEFAULT, name) skips hidden versions and still answers what the runtime
answers - its own function, or NULL for a function the loaded runtime lacks. (The
first node also takes references without a version.)

Outputs, in --out-dir:
  cuda-gen-fns.h     ISC_CUDA_GEN_FUNCS(X): one X(name, flags) row per generated hook
  cuda-gen-hooks.c   the hooks
  libinferscope.map  the version script: the runtime's version nodes, then the input's
                     (libinferscope.map) exports as unversioned definitions
  cuda-functions.txt every interposed function, hand-written or generated, one a line:
                     "name origin flags" (tests compare it with libcudart's symbols)
"""
import argparse
import os
import re
import subprocess
import sys

HEADERS = ("cuda_runtime_api.h", "cuda_profiler_api.h")
PER_THREAD = "CUDA_API_PER_THREAD_DEFAULT_STREAM"
# The symbol versions of libcudart 13, 12 and 11. The toolkit's own (from
# CUDART_VERSION) goes first, also when it is none of these: the first node also binds
# references without a version (it is our version index 2).
KNOWN_VERSIONS = ("libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0")
RUNTIME_VERSIONS = list(KNOWN_VERSIONS)
VERSION_PROBE = "isc_cudart_version_probe"
IDENT = re.compile(r"[A-Za-z_]\w*")
NAME = re.compile(r"(?:__)?cuda\w*$")


class ParseError(Exception):
    pass


def die(msg):
    sys.stderr.write("gen-cuda-hooks.py: error: %s\n" % msg)
    sys.exit(1)


def preprocess(cc, include, per_thread):
    src = "".join("#include <%s>\n" % h for h in HEADERS)
    src += "int %s = CUDART_VERSION;\n" % VERSION_PROBE
    cmd = list(cc) + ["-E", "-x", "c", "-isystem", include]
    if per_thread:
        cmd.append("-D" + PER_THREAD)
    cmd.append("-")
    try:
        p = subprocess.run(cmd, input=src, capture_output=True, text=True)
    except OSError as e:
        die("cannot run the preprocessor %s: %s" % (cmd[0], e))
    if p.returncode != 0:
        die("the preprocessor failed on the CUDA headers under %s:\n%s" % (include, p.stderr))
    return p.stdout


def statements(text, include):
    """Top-level declarations of the toolkit's headers: (text, file, line) each.

    Linemarkers say where each line came from; bodies of inline functions are
    skipped; statements end at a top-level ';' (or the '}' closing a body)."""
    prefix = os.path.realpath(include) + os.sep
    marker = re.compile(r'^# (\d+) "([^"]*)"')
    cur_file, cur_line, ours = "", 0, False
    buf, start, depth = [], None, 0
    for raw in text.split("\n"):
        m = marker.match(raw)
        if m:
            cur_line, cur_file = int(m.group(1)), m.group(2)
            ours = os.path.realpath(cur_file).startswith(prefix)
            continue
        line_no = cur_line
        cur_line += 1
        if raw.startswith("#"):
            continue  # #pragma and friends
        for ch in raw + " ":
            if not buf and ch.isspace():
                continue
            if not buf:
                start = (cur_file, line_no, ours)
            buf.append(ch)
            if ch in "({[":
                depth += 1
            elif ch in ")}]":
                depth -= 1
                if ch == "}" and depth == 0:
                    head = "".join(buf).split("{", 1)[0]
                    if strip_attributes(head)[0].endswith(")"):
                        buf = []  # the body of an inline function
            elif ch == ";" and depth == 0:
                if start[2]:
                    yield " ".join("".join(buf).split()), start[0], start[1]
                buf = []


def split_top(s, sep):
    out, depth, cur = [], 0, []
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == sep and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur).strip())
    return out


def strip_attributes(s):
    """Removes __attribute__((...)) groups; returns (text, deprecated)."""
    deprecated = False
    while True:
        i = s.find("__attribute__")
        if i < 0:
            return " ".join(s.split()), deprecated
        j = s.index("(", i)
        depth, k = 0, j
        while True:
            depth += {"(": 1, ")": -1}.get(s[k], 0)
            k += 1
            if depth == 0:
                break
        deprecated |= "deprecated" in s[j:k]
        s = s[:i] + " " + s[k:]


def param_name(p):
    """The name a parameter declaration gives, or None."""
    m = re.search(r"\(\s*\*\s*([A-Za-z_]\w*)\s*\)", p)  # a function pointer
    if m:
        return m.group(1)
    p = re.sub(r"\[[^\]]*\]\s*$", "", p).strip()  # an array
    ids = IDENT.findall(p)
    if len(ids) < 2 or not re.search(r"[A-Za-z_]\w*$", p):
        return None
    return ids[-1]


def parse_function(stmt):
    """extern RET NAME(PARAMS); -> dict, or None when stmt declares no cuda function."""
    body = stmt[:-1].strip()
    if not body.startswith("extern "):
        return None
    m = re.search(r"\b((?:__)?cuda\w*)\s*\(", body)
    if m is None:
        return None
    name = m.group(1)
    ret, deprecated = strip_attributes(body[len("extern ") : m.start()])
    if ret == "" or "(" in ret:
        raise ParseError("%s: expected 'extern RETURN_TYPE %s(...)'" % (name, name))
    open_at = m.end() - 1
    depth, k = 0, open_at
    while k < len(body):
        depth += {"(": 1, ")": -1}.get(body[k], 0)
        if depth == 0:
            break
        k += 1
    if depth != 0:
        raise ParseError("%s: unbalanced parentheses in its parameter list" % name)
    params_text = body[open_at + 1 : k].strip()
    rest, rest_deprecated = strip_attributes(body[k + 1 :])
    if rest != "":
        raise ParseError("%s: unexpected '%s' after the parameter list" % (name, rest))
    params_text, _ = strip_attributes(params_text)
    params = [] if params_text in ("", "void") else split_top(params_text, ",")
    names = []
    for i, p in enumerate(params):
        if p == "...":
            raise ParseError("%s: variadic functions cannot be forwarded" % name)
        n = param_name(p)
        if n is None:
            raise ParseError("%s: parameter %d ('%s') has no name to forward" % (name, i + 1, p))
        names.append(n)
    stream = [
        n for p, n in zip(params, names) if re.fullmatch(r"(const\s+)?cudaStream_t\s+\w+", p)
    ]
    return {
        "name": name,
        "ret": ret,
        "params": ", ".join(params) if params else "void",
        "args": ", ".join(names),
        "stream": stream[0] if len(stream) == 1 else None,
        "deprecated": deprecated or rest_deprecated,
    }


def version_node(text):
    """libcudart's version node for the CUDART_VERSION the headers define, or None."""
    # the expansion may be spread over lines, with linemarkers between them
    plain = "\n".join(line for line in text.split("\n") if not line.startswith("#"))
    m = re.search(r"\b%s\s*=\s*(\d+)\s*;" % VERSION_PROBE, plain)
    if m is None:
        return None
    major = int(m.group(1)) // 1000
    return "libcudart.so.11.0" if major == 11 else "libcudart.so.%d" % major


def declarations(cc, include, per_thread):
    found = {}
    text = preprocess(cc, include, per_thread)
    node = version_node(text)
    if node is not None and not per_thread:
        RUNTIME_VERSIONS[:] = [node] + [v for v in KNOWN_VERSIONS if v != node]
    for stmt, path, line in statements(text, include):
        try:
            f = parse_function(stmt)
        except ParseError as e:
            die("%s:%d: cannot parse a declaration of the CUDA runtime: %s\n  %s"
                % (path, line, e, stmt[:300]))
        if f is not None and NAME.match(f["name"]):
            f["where"] = "%s:%d" % (os.path.basename(path), line)
            found.setdefault(f["name"], f)
    return found


def handwritten(path):
    rows = re.findall(r"^\s*X\((\w+),\s*(\w+)\)", open(path).read(), re.M)
    if not rows:
        die("%s: no X(name, flags) rows" % path)
    return rows


def variant_base(name):
    for suffix in ("_ptsz", "_ptds"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def flags_of(f, variant):
    async_ = variant_base(f["name"]).endswith("Async")
    return {(False, False): "0", (True, False): "A", (False, True): "P", (True, True): "AP"}[
        (async_, variant)
    ]


HOOK = """
static {ret} isc_hook_{name}({params})
{{
	struct isc_cuda_call c_;
	{fn_t} *real_ = ({fn_t} *)isc_cuda_real(ISC_FN_{name}, RA);
	if (__builtin_expect(real_ == NULL, 0)) {{
		{missing}
	}}
	if (!isc_cuda_enter(&c_, ISC_FN_{name})) {{
		return real_({args});
	}}
	{ret} r_ = real_({args});
	struct isc_cuda_info info_ = {{ {info} }};
	isc_cuda_leave(&c_, {result}, &info_);
	return r_;
}}
"""


def write_hooks(path, gen, include):
    out = [
        "/* Generated by preload/hooks/cuda/gen-cuda-hooks.py from the CUDA headers under",
        " * %s: do not edit. One hook per runtime function that no hand-written" % include,
        " * hook (preload/hooks/cuda/hook-cuda-*.c) covers: name, duration, result, correlation id, stream. */",
        "#include <cuda_profiler_api.h>",
        "#include <cuda_runtime_api.h>",
        "#include <stdbool.h>",
        "#include <stddef.h>",
        "",
        '#include "preload/hooks/cuda/cuda-hook.h"',
        "",
        "/* The real functions' types. */",
    ]
    for f in gen:
        out.append("typedef %s isc_gen_%s_fn(%s);" % (f["ret"], f["name"], f["params"]))
    for f in gen:
        is_err = f["ret"] == "cudaError_t"
        if is_err:
            missing = "return ISC_CUDA_NO_RUNTIME;"
        else:
            # never reached by a program that linked the function: a zero value
            missing = "%s z_;\n\t\t__builtin_memset(&z_, 0, sizeof(z_));\n\t\treturn z_;" % f["ret"]
        info = ".stream = %s, .has_stream = true" % f["stream"] if f["stream"] else "0"
        out.append(
            HOOK.format(
                ret=f["ret"],
                name=f["name"],
                params=f["params"],
                fn_t="isc_gen_%s_fn" % f["name"],
                missing=missing,
                args=f["args"],
                info=info,
                result="r_" if is_err else "0",
            ).rstrip("\n")
        )
        for k, v in enumerate(RUNTIME_VERSIONS):
            alias = "isc_v%d_%s" % (k, f["name"])
            out.append('extern isc_gen_%s_fn %s __attribute__((alias("isc_hook_%s"), '
                       'visibility("default")));' % (f["name"], alias, f["name"]))
            out.append('__asm__(".symver %s, %s@%s");' % (alias, f["name"], v))
    write(path, "\n".join(out) + "\n")


def version_script(map_in):
    """The runtime's version nodes for the generated hooks. No anonymous node (it cannot
    be combined with named ones) and no 'local: *': the exports of map_in stay
    unversioned definitions, which bind any version of a reference (execve@GLIBC_2.2.5);
    the rest is hidden by -fvisibility=hidden and --exclude-libs."""
    listed = re.findall(r"^\s*([A-Za-z_]\w*);", open(map_in).read(), re.M)
    if not listed:
        die("%s: no exported symbol listed" % map_in)
    out = ["/* Generated by preload/hooks/cuda/gen-cuda-hooks.py: do not edit. The generated CUDA",
           " * hooks are hidden versions of these nodes; the %d exports of %s"
           % (len(listed), os.path.basename(map_in)),
           " * are unversioned definitions. */"]
    for k, v in enumerate(RUNTIME_VERSIONS):
        out.append("%s {%s};" % (v, " local: isc_v*; " if k == 0 else " "))
    return "\n".join(out) + "\n"


def write(path, text):
    """Writes only when the content changes, so that a rerun rebuilds nothing."""
    try:
        if open(path).read() == text:
            return
    except OSError:
        pass
    with open(path, "w") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--include", required=True)
    ap.add_argument("--handwritten", required=True)
    ap.add_argument("--map-in", required=True)
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("cc", nargs="+")
    a = ap.parse_args()

    for h in HEADERS:
        if not os.path.exists(os.path.join(a.include, h)):
            die("%s not found under %s (set -Dcudatoolkit_dir or $CUDA_HOME)" % (h, a.include))
    plain = declarations(a.cc, a.include, False)
    per_thread = declarations(a.cc, a.include, True)
    if "cudaMalloc" not in plain:
        die("%s declares %d runtime functions and no cudaMalloc: not the CUDA runtime headers"
            % (os.path.join(a.include, HEADERS[0]), len(plain)))
    funcs = dict(plain)
    for name, f in per_thread.items():
        if name not in plain:
            base = variant_base(name)
            if base == name or base not in plain:
                die("%s (%s) appears only with %s but is no _ptsz/_ptds variant of a "
                    "declared function" % (name, f["where"], PER_THREAD))
            funcs[name] = f
    hand = handwritten(a.handwritten)
    hand_names = {n for n, _ in hand}
    gen = []
    for name in sorted(funcs):
        if name in hand_names:
            continue
        f = funcs[name]
        f["variant"] = name not in plain
        f["flags"] = flags_of(f, f["variant"])
        gen.append(f)

    os.makedirs(a.out_dir, exist_ok=True)
    rows = ["/* Generated by preload/hooks/cuda/gen-cuda-hooks.py: do not edit. */",
            "#define ISC_CUDA_GEN_FUNCS(X) \\"]
    rows += ["\tX(%s, %s) \\" % (f["name"], f["flags"]) for f in gen]
    rows.append("\t/* end */")
    rows.append("")
    rows.append("/* libcudart's symbol versions, the toolkit's first (ISC_CUDA_VERSIONED). */")
    rows.append("#define ISC_CUDA_NODES(X, name) %s"
                % " ".join('X(name, %d, "%s")' % (k, v) for k, v in enumerate(RUNTIME_VERSIONS)))
    write(os.path.join(a.out_dir, "cuda-gen-fns.h"), "\n".join(rows) + "\n")
    write_hooks(os.path.join(a.out_dir, "cuda-gen-hooks.c"), gen, a.include)

    write(os.path.join(a.out_dir, "libinferscope.map"), version_script(a.map_in))

    listing = ["%s handwritten %s" % (n, fl) for n, fl in hand]
    listing += ["%s generated %s%s" % (f["name"], f["flags"],
                                      " deprecated" if f["deprecated"] else "") for f in gen]
    write(os.path.join(a.out_dir, "cuda-functions.txt"), "\n".join(listing) + "\n")


if __name__ == "__main__":
    main()
