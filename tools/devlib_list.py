#!/usr/bin/env python3
"""List the device functions HIP's own headers declare (issue 17 item 7).

Reads the AMD HIP headers (Debian's ROCm, /usr/include/hip by default) and
writes one line per device function overload:

    <header>\t<name>\t<signature>

with the signature normalised (one space between tokens, parameter names
dropped, default arguments kept as `= default`). The list is what hipkit's
device headers are measured against (tests/devlib/test_devlib_funcs.c
reads it), so it is checked in: tests/devlib/hip_device_functions.txt.

Only what a kernel can call by name is listed: functions at namespace scope
whose declaration carries __device__ (directly or through HIP's
__DEVICE__/__HOST_DEVICE__ macros), not members, constructors or operators,
and not HIP's implementation helpers (__ocml_*, __ockl_*, __llvm_*,
__hip_*, __make_mantissa*, ...). Both branches of every #if are read: the
clang branch and the gcc branch declare the same names, and the list keeps
each distinct signature once.

With --cuda-simd CUDA_INCLUDE it lists instead CUDA's SIMD-in-a-word
intrinsics (__vadd2 ... __vsubss4, from crt/device_functions.h), which HIP
lacks but CUDA sources use: tests/devlib/cuda_simd_functions.txt.

Usage: tools/devlib_list.py [--hip-include DIR] [-o FILE]
       tools/devlib_list.py --cuda-simd /usr/local/cuda/include [-o FILE]
"""

import argparse
import os
import re
import sys

# The headers of the device library, relative to the HIP include folder.
HEADERS = [
    "amd_detail/amd_math_functions.h",
    "amd_detail/amd_device_functions.h",
    "amd_detail/amd_hip_fp16.h",
    "hip_bfloat16.h",
    "amd_detail/amd_hip_atomic.h",
    "amd_detail/amd_hip_unsafe_atomics.h",
    "amd_detail/amd_warp_functions.h",
]

DEVICE_MARKERS = {"__device__", "__DEVICE__", "__HOST_DEVICE__"}
# Words that qualify a declaration without being part of its type.
QUALIFIERS = {
    "static", "inline", "constexpr", "__forceinline__", "__host__", "extern",
    "__attribute__", "__inline__", "__noinline__", "__DEVICE__", "__device__",
    "__HOST_DEVICE__", "__CG_QUALIFIER__", "__CG_STATIC_QUALIFIER__", "__device_builtin__",
    "__DEVICE_FUNCTIONS_DECL__",
}
SIMD_NAME = re.compile(r"^__v[a-z]+[24]$")
# Macros that stand for a type.
RENAME = {"__RETURN_TYPE": "bool"}
# HIP's implementation, not its interface.
INTERNAL = re.compile(
    r"^(__ocml_|__ockl_|__llvm_|__hip_|__make_mantissa|__amdgcn_|__builtin_|__clamp_01|"
    r"__get_|__hsail_|__irif_|__oclc_|__lastbit_u32|__hip_ds_|__shfl_[a-z_]*_internal)"
)

TOKEN = re.compile(
    r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|[A-Za-z_][A-Za-z_0-9]*|0[xX][0-9a-fA-F]+[uUlL]*|'
    r"[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?[fFuUlL]*|::|->|<<|>>|&&|\|\||[<>!=]=|\S"
)


def strip_source(text):
    """Comments and preprocessor lines out; every #if branch is kept."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r"\\\n", " ", text)
    return "\n".join(l for l in text.split("\n") if not l.lstrip().startswith("#"))


def skip_group(toks, i):
    """Index after the bracket group that opens at toks[i]."""
    pairs = {"(": ")", "{": "}", "[": "]"}
    close = pairs[toks[i]]
    depth = 0
    for j in range(i, len(toks)):
        if toks[j] == toks[i]:
            depth += 1
        elif toks[j] == close:
            depth -= 1
            if depth == 0:
                return j + 1
    return len(toks)


def split_params(toks):
    """Parameters of a (...) group, each without its name, defaults kept."""
    params, cur, depth = [], [], 0
    for t in toks:
        if t in "(<[":
            depth += 1
        elif t in ")>]":
            depth -= 1
        if t == "," and depth == 0:
            params.append(cur)
            cur = []
        else:
            cur.append(t)
    if cur:
        params.append(cur)
    out = []
    for p in params:
        default = ""
        if "=" in p:
            default = " = default"
            p = p[: p.index("=")]
        # a trailing identifier after a type is the parameter's name
        if len(p) > 1 and re.match(r"^[A-Za-z_]\w*$", p[-1]) and p[-1] not in (
                "int", "long", "short", "char", "unsigned", "signed", "float", "double", "bool",
                "void", "const", "volatile"):
            p = p[:-1]
        out.append(" ".join(p).replace(" *", "*").replace(" &", "&") + default)
    if out == ["void"]:
        out = []
    return out


def declarations(toks, markers=DEVICE_MARKERS):
    """(name, signature) of every namespace-scope device function."""
    i, n = 0, len(toks)
    stmt = []
    while i < n:
        t = toks[i]
        if t in (";", "}"):
            stmt = []
            i += 1
            continue
        if t == "{":
            head = stmt
            stmt = []
            # namespaces and extern "C" blocks are transparent
            if head[:1] == ["namespace"] or (head[:1] == ["extern"] and len(head) == 2) or not head:
                i += 1
                continue
            i = skip_group(toks, i)
            if i < n and toks[i] == ";":
                i += 1
            continue
        if t == "(" and stmt and stmt[-1] == "__attribute__":
            j = skip_group(toks, i)
            i = j
            continue
        if t == "(" and len(stmt) == 1 and re.match(r"^__?[A-Z][A-Z0-9_]*$", stmt[0]) \
                and stmt[0] not in markers:
            # a macro that expands to declarations (__DEF_FUN1(double, acos)):
            # HIP's integer-argument overloads of the math functions
            i = skip_group(toks, i)
            stmt = []
            continue
        if t == "(" and stmt and re.match(r"^[A-Za-z_]\w*$", stmt[-1]):
            j = skip_group(toks, i)
            name = stmt[-1]
            head = stmt[:-1]
            k = j
            while k < n and toks[k] in ("const", "noexcept", "__attribute__"):
                k = skip_group(toks, k + 1) if toks[k] == "__attribute__" else k + 1
            is_def = k < n and toks[k] in ("{", ";")
            marked = any(w in markers for w in head)
            if is_def and marked and "operator" not in head and "typedef" not in head:
                yield name, head, toks[i + 1 : j - 1]
            stmt = []
            if k < n and toks[k] == "{":
                i = skip_group(toks, k)
            else:
                i = k + 1 if k < n else n
            continue
        stmt.append(t)
        i += 1


def signature(name, head, params):
    template = ""
    if "template" in head:
        ti = head.index("template")
        tj = ti + 1
        depth = 0
        for tj in range(ti + 1, len(head)):
            depth += head[tj] == "<"
            depth -= head[tj] == ">"
            if depth == 0:
                break
        template = " ".join(head[ti : tj + 1]) + " "
        head = head[:ti] + head[tj + 1 :]
    ret = [RENAME.get(w, w) for w in head if w not in QUALIFIERS and not w.startswith('"')]
    if not ret:
        return None  # a constructor
    return "%s%s %s(%s)" % (template, " ".join(ret).replace(" *", "*"), name,
                            ", ".join(split_params(params)))


def hip_version(inc):
    path = os.path.join(inc, "hip_version.h")
    try:
        text = open(path, encoding="utf-8", errors="replace").read()
    except OSError:
        return "unknown"
    m = re.search(r'#define\s+HIP_VERSION_GITHASH\s+"([^"]*)"', text)
    parts = [re.search(r"#define\s+HIP_VERSION_%s\s+(\d+)" % k, text) for k in ("MAJOR", "MINOR", "PATCH")]
    ver = ".".join(p.group(1) for p in parts if p)
    return ver + (" (%s)" % m.group(1) if m else "")


def collect(inc, headers, markers, keep):
    rows, seen = [], set()
    for rel in headers:
        path = os.path.join(inc, rel)
        text = open(path, encoding="utf-8", errors="replace").read()
        toks = TOKEN.findall(strip_source(text))
        for name, head, params in declarations(toks, markers):
            if not keep(name, head):
                continue
            sig = signature(name, head, params)
            if sig is None or (name, sig) in seen:
                continue
            seen.add((name, sig))
            rows.append((os.path.basename(rel), name, sig))
    return rows


def cuda_version(inc):
    try:
        text = open(os.path.join(inc, "cuda.h"), encoding="utf-8", errors="replace").read()
    except OSError:
        return "unknown"
    m = re.search(r"#define\s+CUDA_VERSION\s+(\d+)", text)
    return "%d.%d" % (int(m.group(1)) // 1000, int(m.group(1)) % 1000 // 10) if m else "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hip-include", default="/usr/include/hip")
    ap.add_argument("--cuda-simd", metavar="CUDA_INCLUDE")
    ap.add_argument("-o", "--output", default="-")
    args = ap.parse_args()
    if args.cuda_simd:
        headers = ["crt/device_functions.h"]
        rows = collect(args.cuda_simd, headers, {"__DEVICE_FUNCTIONS_DECL__"},
                       lambda name, head: SIMD_NAME.match(name) and "__device_builtin__" in head)
        what = "CUDA's SIMD-in-a-word intrinsics"
        origin = "%s, CUDA %s" % (args.cuda_simd, cuda_version(args.cuda_simd))
    else:
        headers = HEADERS
        rows = collect(args.hip_include, headers, DEVICE_MARKERS,
                       lambda name, head: not INTERNAL.match(name))
        what = "HIP device functions"
        origin = "%s, HIP %s" % (args.hip_include, hip_version(args.hip_include))
    out = sys.stdout if args.output == "-" else open(args.output, "w", encoding="utf-8")
    out.write("# %s, generated by tools/devlib_list.py; do not edit.\n" % what)
    out.write("# from %s: %s\n" % (origin, " ".join(headers)))
    out.write("# %d overloads of %d names; header<TAB>name<TAB>signature\n"
              % (len(rows), len({r[1] for r in rows})))
    for r in rows:
        out.write("\t".join(r) + "\n")
    if out is not sys.stdout:
        out.close()


if __name__ == "__main__":
    main()
