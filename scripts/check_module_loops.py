#!/usr/bin/env python3
"""Fails when the top-level modules of a Rust crate import each other in a
loop (a -> b -> ... -> a). A module's imports are the `crate::NAME` paths
in its files (tests excluded: everything after `#[cfg(test)]`), where NAME
is another top-level module of the same crate. Loops make rooms that cannot
be changed one at a time; shared types go in a leaf module instead.
"""

import pathlib
import re
import sys

ROOTS = sorted(
    [p.parent for p in pathlib.Path("crates").glob("*/src/lib.rs")]
    + [p.parent for p in pathlib.Path("crates").glob("*/src/main.rs")]
    + [pathlib.Path("src-tauri/src")]
)
CRATE_PATH = re.compile(r"\bcrate::([a-z_][a-z0-9_]*)")
USE_GROUP = re.compile(r"\buse\s+crate::\{([^;]*)\};", re.S)


def top_modules(src: pathlib.Path) -> dict:
    """Each top-level module and the files that belong to it."""
    mods = {}
    for f in src.rglob("*.rs"):
        rel = f.relative_to(src).parts
        if rel[0] in ("lib.rs", "main.rs", "bin"):
            continue
        name = rel[0][:-3] if rel[0].endswith(".rs") else rel[0]
        mods.setdefault(name, []).append(f)
    return mods


def imports(files, names) -> set:
    out = set()
    for f in files:
        text = f.read_text(encoding="utf-8")
        text = text.split("#[cfg(test)]", 1)[0]
        text = re.sub(r"//[^\n]*", "", text)
        found = set(CRATE_PATH.findall(text))
        for group in USE_GROUP.findall(text):
            found |= {m.group(1) for m in re.finditer(r"(?:^|[,{\s])([a-z_][a-z0-9_]*)(?:::|\s*[,}]|$)", group)}
        out |= found & names
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
    problems = []
    for src in ROOTS:
        mods = top_modules(src)
        names = set(mods)
        graph = {m: imports(files, names) - {m} for m, files in mods.items()}
        for comp in cycles(graph):
            edges = [f"{a} -> {b}" for a in comp for b in sorted(graph[a]) if b in comp]
            problems.append(f"{src}: modules import each other in a loop: {', '.join(edges)}")
    if problems:
        print("module loops:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 1
    print(f"module loops: none in {len(ROOTS)} crates' top-level modules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
