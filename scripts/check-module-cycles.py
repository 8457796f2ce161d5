#!/usr/bin/env python3
"""Fails when a module of a crate imports a module that imports it back (directly or through
others), or when a source file outside tests and benchmarks is over 800 lines.

A module's imports are the `crate::NAME` paths (and, inside a folder module, `super::NAME`)
outside its `#[cfg(test)] mod tests`. Usage: scripts/check-module-cycles.py [CRATE_DIR ...]
(default: every crates/* and bins/*)."""
import os
import re
import sys

MAX_LINES = 800


def modules_of(src):
    graph = {}
    for folder, _, files in os.walk(src):
        for name in files:
            if not name.endswith(".rs"):
                continue
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, src)[:-3]
            parts = rel.split(os.sep)
            if parts[-1] in ("lib", "main", "mod"):
                parts = parts[:-1]
            if not parts or parts[-1] == "tests":
                continue
            top = parts[0]
            text = open(path, encoding="utf-8").read()
            text = re.split(r"#\[cfg\(test\)\]\s*mod tests", text)[0]
            deps = set(re.findall(r"\bcrate::([a-z_][a-z0-9_]*)", text))
            key = top
            if len(parts) > 1:
                key = "/".join(parts)
                siblings = set(re.findall(r"\bsuper::([a-z_][a-z0-9_]*)", text))
                deps |= {"/".join(parts[:-1] + [s]) for s in siblings}
            graph.setdefault(key, set()).update(d for d in deps if d != key)
    return graph


def cycles(graph):
    found = set()
    for start in graph:
        stack = [(start, [start])]
        seen = set()
        while stack:
            node, path = stack.pop()
            for nxt in graph.get(node, ()):
                if nxt == start:
                    found.add(" -> ".join(path + [start]))
                elif nxt not in seen and nxt in graph:
                    seen.add(nxt)
                    stack.append((nxt, path + [nxt]))
    return sorted(found)


def long_files(src):
    out = []
    for folder, _, files in os.walk(src):
        for name in files:
            path = os.path.join(folder, name)
            if name.endswith(".rs") and name != "tests.rs":
                with open(path, encoding="utf-8") as handle:
                    n = sum(1 for _ in handle)
                if n > MAX_LINES:
                    out.append(f"{path} ({n} lines)")
    return out


def main():
    roots = sys.argv[1:] or sorted(
        os.path.join(kind, name)
        for kind in ("crates", "bins")
        for name in os.listdir(kind)
    )
    failed = False
    for root in roots:
        src = os.path.join(root, "src")
        if not os.path.isdir(src):
            continue
        for cycle in cycles(modules_of(src)):
            print(f"{root}: modules import each other: {cycle}")
            failed = True
        for path in long_files(src):
            print(f"over {MAX_LINES} lines, split it by responsibility: {path}")
            failed = True
    if failed:
        sys.exit(1)
    print("no module cycles, no source file over 800 lines")


if __name__ == "__main__":
    main()
