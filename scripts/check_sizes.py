#!/usr/bin/env python3
"""Small rooms: no source file over 600 lines, no function over 120, no
Python class over 300.

Counts the lines of every Rust, Python and TypeScript source in the tree
(generated files and build outputs aside), the length of every Rust, Python
and TypeScript function (Rust: from the `fn` line to its closing brace;
Python: the `def` through its last line; TypeScript: a top-level `function`,
a React function component among them, or a top-level `const Name = (…) =>`
arrow, from its first line to its closing brace) and of every Python class. What was over a limit when this check came in
is listed in scripts/size-ceilings.txt with its size then: a ceiling it may
shrink under, never grow past. Anything else over a limit fails, naming the
file or function, its size and the limit.

    python3 scripts/check_sizes.py            # the check (exit 1 on a breach)
    python3 scripts/check_sizes.py --report   # every file and function over a limit
"""

import ast
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FILE_LIMIT, FN_LIMIT, CLASS_LIMIT = 600, 120, 300
CEILINGS = os.path.join(ROOT, "scripts", "size-ceilings.txt")
DIRS = ["crates", "src-tauri", "workers", "ui/src", "ui/e2e", "bench", "scripts", "tests", "fuzz"]
SKIP_DIRS = {"target", "node_modules", "dist", "gen", "__pycache__", ".venv"}
GENERATED = {"ui/src/bindings.ts"}
EXTS = (".rs", ".py", ".ts", ".tsx")
RUST_FN = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?((const|async|unsafe|extern\s+\"[^\"]*\")\s+)*fn\s+(\w+)")


def sources():
    for top in DIRS:
        for base, dirs, files in os.walk(os.path.join(ROOT, top)):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
            for f in sorted(files):
                path = os.path.relpath(os.path.join(base, f), ROOT)
                if f.endswith(EXTS) and path not in GENERATED:
                    yield path


def strip_rust(line):
    """The line without its string and char literals and `//` comment, so
    the braces counted are code's (block comments and raw strings spanning
    lines are rare enough here to ignore)."""
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])'", "''", line)
    return line.split("//", 1)[0]


def rust_functions(lines):
    """(name, first line, length) of each fn with a body."""
    out = []
    for i, line in enumerate(lines):
        m = RUST_FN.match(line)
        if not m:
            continue
        depth, opened = 0, False
        for j in range(i, len(lines)):
            code = strip_rust(lines[j])
            if not opened and ";" in code and "{" not in code:
                break  # a declaration without a body (trait item, extern)
            depth += code.count("{") - code.count("}")
            opened = opened or "{" in code
            if opened and depth <= 0:
                out.append((m.group(5), i + 1, j - i + 1))
                break
    return out


TS_FN = re.compile(
    r"^(export\s+)?(default\s+)?(async\s+)?function\s*\*?\s*(\w+)"
    r"|^(export\s+)?const\s+(\w+)\s*(:[^=]+)?=\s*(async\s+)?(\([^)]*\)|\w+)\s*(:[^=]+)?=>"
)


def strip_ts(line):
    """The line without its string literals and `//` comment (template
    literals on one line included), so the braces counted are code's."""
    line = re.sub(r"`(\\.|[^`\\])*`", "``", line)
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])*'", "''", line)
    return line.split("//", 1)[0]


def ts_functions(lines):
    """(name, first line, length) of each top-level function or arrow
    constant with a braced body: a component is one."""
    out = []
    for i, line in enumerate(lines):
        m = TS_FN.match(line)
        if not m:
            continue
        name = m.group(4) or m.group(6)
        depth, opened = 0, False
        for j in range(i, len(lines)):
            code = strip_ts(lines[j])
            if not opened and j > i + 10:
                break  # an expression-bodied arrow: no block of its own
            depth += code.count("{") - code.count("}")
            opened = opened or "{" in code
            if opened and depth <= 0:
                out.append((name, i + 1, j - i + 1))
                break
    return out


def python_classes(text, path):
    try:
        tree = ast.parse(text, path)
    except SyntaxError:
        return []
    return [(n.name, n.lineno, n.end_lineno - n.lineno + 1) for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]


def python_functions(text, path):
    try:
        tree = ast.parse(text, path)
    except SyntaxError:
        return []
    return [
        (n.name, n.lineno, n.end_lineno - n.lineno + 1)
        for n in ast.walk(tree)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]


def measure():
    """{key: (size, limit)} of everything over a limit; key is a path, or
    path::function for a function."""
    over = {}
    for path in sources():
        with open(os.path.join(ROOT, path), encoding="utf-8", errors="replace") as f:
            text = f.read()
        lines = text.splitlines()
        if len(lines) > FILE_LIMIT:
            over[path] = (len(lines), FILE_LIMIT)
        fns = (
            rust_functions(lines)
            if path.endswith(".rs")
            else python_functions(text, path)
            if path.endswith(".py")
            else ts_functions(lines)
        )
        classes = python_classes(text, path) if path.endswith(".py") else []
        for found, limit in ((fns, FN_LIMIT), (classes, CLASS_LIMIT)):
            for name, _, n in found:
                if n > limit:
                    key = f"{path}::{name}"
                    over[key] = (max(n, over.get(key, (0,))[0]), limit)
    return over


def ceilings():
    """The allowlist: `PATH[::FUNCTION] SIZE  # REASON`, a reason on every entry."""
    out = {}
    if os.path.exists(CEILINGS):
        for number, raw in enumerate(open(CEILINGS, encoding="utf-8"), start=1):
            if raw.lstrip().startswith("#") or not raw.strip():
                continue
            entry, _, reason = raw.partition("#")
            if not reason.strip():
                sys.exit(f"error: {CEILINGS}:{number}: {entry.strip()} has no reason (`# why it may stay this long`)")
            key, n = entry.strip().rsplit(None, 1)
            out[key] = int(n)
    return out


def main():
    over = measure()
    if "--report" in sys.argv:
        for key, (n, _limit) in sorted(over.items()):
            print(f"{key} {n}")
        return 0
    allowed = ceilings()
    breaches, shrunk = [], []
    for key, (n, limit) in sorted(over.items()):
        ceiling = allowed.get(key)
        kind = "file" if "::" not in key else "class" if limit == CLASS_LIMIT else "function"
        if ceiling is None:
            breaches.append(f"{key}: {n} lines, over the {limit}-line limit for a {kind}: split it")
        elif n > ceiling:
            breaches.append(f"{key}: {n} lines, grown past its ceiling of {ceiling} (limit {limit}): split it")
        elif n < ceiling:
            shrunk.append(f"{key}: {n} lines (ceiling {ceiling})")
    for key in sorted(set(allowed) - set(over)):
        shrunk.append(f"{key}: now within the limit")
    for s in shrunk:
        print(f"note: {s}; lower or remove its line in scripts/size-ceilings.txt")
    for b in breaches:
        print(f"error: {b}", file=sys.stderr)
    print(
        f"sizes: {len(over)} over a limit, {len(breaches)} past their ceiling "
        f"(files ≤ {FILE_LIMIT} lines, functions ≤ {FN_LIMIT}, Python classes ≤ {CLASS_LIMIT})"
    )
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
