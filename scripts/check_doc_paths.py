#!/usr/bin/env python3
"""Fails when ARCHITECTURE.md or TESTING.md names a file or folder that is
not in the tree, so the maps a newcomer reads stay true when code moves.

Checked: every backticked path in either file that starts with one of the
repository's top-level folders (a crate's own path, `tests/worker.rs`, is
looked for in each crate). Also: every module of every crate is in the list
its lib.rs (or main.rs) opens with, tests aside — each crate keeps its own
map there, not this file;
every link and picture of README.md and docs/*.md points at a file that
exists, and every screenshot the README shows is one the end-to-end test
writes (ui/e2e/run.sh), so none goes stale; and ARCHITECTURE.md stays
under 2,000 words.
"""

import glob
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXTENSIONS = (
    ".rs",
    ".py",
    ".md",
    ".sql",
    ".c",
    ".cpp",
    ".sh",
    ".toml",
    ".json",
    ".ts",
    ".tsx",
    ".mjs",
    ".txt",
    ".csv",
    ".html",
)
CRATE_FOLDERS = [""] + [p.relative_to(ROOT).as_posix() + "/" for p in ROOT.glob("crates/*")] + ["src-tauri/"]
TOP = {p.name for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith(".")} | {".ci"}


def expand(word: str) -> list:
    m = re.search(r"\{([^{}]*)\}", word)
    if not m:
        return [word]
    out = []
    for part in m.group(1).split(","):
        out += expand(word[: m.start()] + part.strip() + word[m.end() :])
    return out


def exists(path: str) -> bool:
    """In the tree, or a build output git ignores (`ui/dist`, `target/…`)."""
    if glob.glob(str(ROOT / path)) or (ROOT / path).exists():
        return True
    ignored = subprocess.run(["git", "-C", str(ROOT), "check-ignore", "-q", path], check=False)
    return ignored.returncode == 0


def looks_like_path(word: str) -> bool:
    return bool(re.fullmatch(r"[\w.\-*/{},]+", word)) and ("/" in word or word.endswith(EXTENSIONS))


def backticked(name: str, text: str) -> list:
    missing = []
    for word in re.findall(r"`([^`\s]+)`", text):
        word = word.rstrip(".,:;")
        first = word.split("/", 1)[0]
        if "/" not in word or first not in TOP or not looks_like_path(word):
            continue
        # Build output and paths made at run time (`NAME` a placeholder).
        if "::" in word or first == "target" or re.search(r"[A-Z]{3,}", word):
            continue
        for path in expand(word):
            # A crate's own path (`tests/worker.rs`) is looked for in each crate.
            if not any(exists(base + path) for base in CRATE_FOLDERS):
                missing.append(f"{name}: `{path}`")
    return missing


def module_list(lib: str) -> list:
    """Every module of a crate's lib.rs (or main.rs) named in its opening
    doc, tests aside: each crate keeps its own map there."""
    text = (ROOT / lib).read_text(encoding="utf-8")
    doc = "\n".join(line for line in text.splitlines() if line.startswith("//!"))
    return [
        f"{lib}: module `{m}` is not in the crate's opening list"
        for m in re.findall(r"^(?:pub )?mod (\w+);", text, re.M)
        if f"[`{m}`]" not in doc and m != "tests" and not m.endswith("_tests")
    ]


def crate_roots() -> list:
    roots = sorted(p.relative_to(ROOT).as_posix() for p in ROOT.glob("crates/*/src/lib.rs"))
    roots += sorted(p.relative_to(ROOT).as_posix() for p in ROOT.glob("crates/*/src/main.rs"))
    return roots + ["src-tauri/src/lib.rs"]


def markdown_links() -> list:
    """Links and pictures (`](path)`) of README.md and docs/*.md that point nowhere."""
    missing = []
    for md in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)\s#]+)[^)]*\)", md.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):
                continue
            if not (md.parent / target).exists():
                missing.append(f"{md.relative_to(ROOT)}: link to {target}")
    return missing


def readme_screenshots() -> list:
    """README pictures under docs/screenshots/ the end-to-end test does not write."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    run = (ROOT / "ui/e2e/run.sh").read_text(encoding="utf-8")
    copied = re.search(r"for name in ([^;]+); do", run)
    names = set(copied.group(1).split()) if copied else set()
    return [
        f"README.md: docs/screenshots/{n}.png is not written by ui/e2e/run.sh"
        for n in re.findall(r"docs/screenshots/([\w-]+)\.png", readme)
        if n not in names
    ]


# The map a newcomer reads in ten minutes: ARCHITECTURE.md stays under this
# many words (counted as `wc -w` counts them).
ARCHITECTURE_WORDS = 2000


def architecture_length(arch: str) -> list:
    """ARCHITECTURE.md when it has grown past its length."""
    words = len(arch.split())
    if words < ARCHITECTURE_WORDS:
        return []
    return [
        f"ARCHITECTURE.md: {words} words, expected under {ARCHITECTURE_WORDS} (say less, or move detail into the crate's lib.rs or docs/)"
    ]


def main() -> int:
    arch = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    testing = (ROOT / "TESTING.md").read_text(encoding="utf-8")
    missing = backticked("ARCHITECTURE.md", arch) + backticked("TESTING.md", testing)
    for lib in crate_roots():
        missing += module_list(lib)
    missing += markdown_links() + readme_screenshots() + architecture_length(arch)
    if missing:
        print("doc paths: named but not in the tree:\n  " + "\n  ".join(missing), file=sys.stderr)
        return 1
    print("doc paths: every path ARCHITECTURE.md and TESTING.md name exists")
    return 0


if __name__ == "__main__":
    sys.exit(main())
