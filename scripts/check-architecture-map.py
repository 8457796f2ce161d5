#!/usr/bin/env python3
"""Fails when docs/architecture.md does not name a module file of a crate or binary.

The map has one section per crate (`### crates/NAME`) and per binary (`### bins/NAME`); every
module file under that package's `src/` must be named in its section by its path below `src/`
(`engine.rs`, `report/svg.rs`; a folder module's `mod.rs` may be named as the folder,
`report/`). `lib.rs` and `main.rs` are the package itself and need no line.

Usage: scripts/check-architecture-map.py [--self-test]"""
import os
import re
import sys
import tempfile

DOC = os.path.join("docs", "architecture.md")


def sections(text):
    """Maps `crates/NAME` or `bins/NAME` to the text of its section."""
    found = {}
    parts = re.split(r"^### ", text, flags=re.M)
    for part in parts[1:]:
        heading, _, body = part.partition("\n")
        name = heading.strip().strip("`")
        found[name] = body
    return found


def module_files(package):
    src = os.path.join(package, "src")
    files = []
    for folder, _, names in os.walk(src):
        for name in names:
            if not name.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(folder, name), src).replace(os.sep, "/")
            if rel in ("lib.rs", "main.rs"):
                continue
            files.append(rel)
    return sorted(files)


def named(rel, body):
    """Whether the section names `rel` (as a word: `report/svg.rs`, not `xreport/svg.rs`)."""
    candidates = [rel]
    if rel.endswith("/mod.rs"):
        candidates.append(rel[: -len("mod.rs")])
    for candidate in candidates:
        if re.search(r"(?<![\w/.-])" + re.escape(candidate) + r"(?![\w])", body):
            return True
    return False


def missing(root):
    with open(os.path.join(root, DOC), encoding="utf-8") as handle:
        text = handle.read()
    by_package = sections(text)
    out = []
    for kind in ("crates", "bins"):
        base = os.path.join(root, kind)
        if not os.path.isdir(base):
            continue
        for name in sorted(os.listdir(base)):
            package = os.path.join(base, name)
            if not os.path.isdir(os.path.join(package, "src")):
                continue
            key = f"{kind}/{name}"
            body = by_package.get(key)
            files = module_files(package)
            if body is None:
                out.append(f"{key}: no `### {key}` section in {DOC}")
                continue
            for rel in files:
                if not named(rel, body):
                    out.append(f"{key}/src/{rel}: not named in the `### {key}` section of {DOC}")
    return out


def self_test():
    """A module file added without a line must be found; the same tree with its line passes."""
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "docs"))
        os.makedirs(os.path.join(root, "crates", "x", "src", "report"))
        for rel in ("lib.rs", "engine.rs", "report/mod.rs", "report/svg.rs"):
            with open(os.path.join(root, "crates", "x", "src", rel), "w", encoding="utf-8") as f:
                f.write("")
        doc = "# Map\n\n### `crates/x`\n\n`engine.rs` runs; `report/` writes, `report/svg.rs` draws.\n"
        with open(os.path.join(root, DOC), "w", encoding="utf-8") as handle:
            handle.write(doc)
        failures = []
        if missing(root):
            failures.append(f"a complete map was refused: {missing(root)}")
        with open(os.path.join(root, "crates", "x", "src", "added.rs"), "w", encoding="utf-8") as f:
            f.write("")
        found = missing(root)
        if found != [f"crates/x/src/added.rs: not named in the `### crates/x` section of {DOC}"]:
            failures.append(f"an unnamed module file was not the one found: {found}")
        # `svg.rs` alone, or a longer name containing it, does not name `report/svg.rs`.
        with open(os.path.join(root, DOC), "w", encoding="utf-8") as handle:
            handle.write(doc.replace("`report/svg.rs`", "`svg.rs`") + "`added.rs`\n")
        if missing(root) != [
            f"crates/x/src/report/svg.rs: not named in the `### crates/x` section of {DOC}"
        ]:
            failures.append(f"a bare file name named a nested module: {missing(root)}")
    for failure in failures:
        print(f"self-test: {failure}")
    if failures:
        sys.exit(1)
    print("self-test: an unnamed module file is found, a complete map passes")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return
    found = missing(".")
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} module files missing from {DOC}: name each in its package's section")
        sys.exit(1)
    print(f"{DOC} names every module file")


if __name__ == "__main__":
    main()
