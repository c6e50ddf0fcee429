#!/usr/bin/env python3
"""Fails when the modules of a Rust crate import each other in a loop
(a -> b -> ... -> a), at every level: the top-level modules of a crate, and
the child modules of every module that has children (`gpu_session::run`
and `gpu_session::write`, say). A module's imports are the module paths its
files name (tests excluded: everything after `#[cfg(test)]`): `crate::a::b`,
`super::b`, `self::b`, a child declared with `mod b;` named as `b::…`, and
the same inside `use …::{…}` groups. A file of `a::d` naming `a::b::c` is
an edge `d -> b` among `a`'s children. Loops make
rooms that cannot be changed one at a time; shared types go in a leaf
module instead.
"""

import pathlib
import re
import sys

ROOTS = sorted(
    [p.parent for p in pathlib.Path("crates").glob("*/src/lib.rs")]
    + [p.parent for p in pathlib.Path("crates").glob("*/src/main.rs")]
    + [pathlib.Path("src-tauri/src")]
)
PATH = re.compile(r"\b((?:crate|super|self)(?:::[A-Za-z_][A-Za-z0-9_]*)+)")
GROUP = re.compile(r"\b((?:crate|super|self)(?:::[a-z_][a-z0-9_]*)*)::\{([^;]*?)\}", re.S)
MOD_DECL = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+([a-z_][a-z0-9_]*)\s*;", re.M)


def module_of(src: pathlib.Path, f: pathlib.Path) -> tuple:
    """The module path of a file: src/a/b.rs and src/a/b/mod.rs are (a, b)."""
    parts = list(f.relative_to(src).parts)
    if parts[0] == "bin":
        return None
    last = parts.pop()
    if last not in ("mod.rs", "lib.rs", "main.rs"):
        parts.append(last[:-3])
    return tuple(parts)


def code_of(f: pathlib.Path) -> str:
    text = f.read_text(encoding="utf-8").split("#[cfg(test)]", 1)[0]
    return re.sub(r"//[^\n]*", "", text)


def resolve(here: tuple, path: list) -> tuple:
    """`crate::…`, `super::…` and `self::…` as a path from the crate root."""
    head, rest = path[0], path[1:]
    if head == "crate":
        out = []
    elif head == "self":
        out = list(here)
    else:
        out = list(here[:-1])
        while rest and rest[0] == "super":
            out, rest = out[:-1], rest[1:]
    return tuple(out + rest)


def references(here: tuple, text: str) -> set:
    """Every path the file names, from the crate root."""
    found = [p.split("::") for p in PATH.findall(text)]
    for prefix, group in GROUP.findall(text):
        for item in re.split(r"[,\s]+", group):
            item = item.strip("{} ")
            if item and item != "self":
                found.append(prefix.split("::") + item.split("::"))
    out = {resolve(here, p) for p in found}
    for child in MOD_DECL.findall(text):
        for m in re.finditer(rf"(?<![:\w]){child}::([A-Za-z_][A-Za-z0-9_]*)", text):
            out.add(here + (child, m.group(1)))
    return out


def graphs(src: pathlib.Path) -> dict:
    """{parent module: {child: set of siblings it imports}} for the crate."""
    files = {f: module_of(src, f) for f in src.rglob("*.rs")}
    modules = {m for m in files.values() if m is not None}
    out = {}
    for f, here in files.items():
        if not here:
            continue
        for ref in references(here, code_of(f)):
            while ref and ref not in modules:
                ref = ref[:-1]
            common = 0
            while common < min(len(here), len(ref)) and here[common] == ref[common]:
                common += 1
            if common < len(here) and common < len(ref):
                parent = here[:common]
                graph = out.setdefault(parent, {})
                graph.setdefault(here[common], set()).add(ref[common])
    return out


def cycles(graph: dict) -> list:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main() -> int:
    problems, levels = [], 0
    for src in ROOTS:
        for parent, graph in sorted(graphs(src).items()):
            levels += 1
            where = f"{src}" + (f" ({'::'.join(parent)})" if parent else "")
            for comp in cycles(graph):
                edges = [f"{a} -> {b}" for a in comp for b in sorted(graph[a]) if b in comp]
                problems.append(f"{where}: modules import each other in a loop: {', '.join(edges)}")
    if problems:
        print("module loops:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 1
    print(f"module loops: none in {len(ROOTS)} crates, {levels} levels of modules (top-level and nested)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
