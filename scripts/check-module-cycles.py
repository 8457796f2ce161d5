#!/usr/bin/env python3
"""Fails when a module of a crate imports a module that imports it back (directly or through
others), or when a source file outside tests and benchmarks is over 800 lines.

Every file is read whole: `use` declarations wherever they stand (above or below `mod tests`,
inside functions, inside inline modules), grouped imports (`use crate::{a, b::{c, d}}`), and
paths written in expressions (`crate::a::f()`, `super::b::T`). A path is resolved the way the
compiler resolves it: `crate::` from the crate's root, `super::` from the enclosing module
(inline `mod x { .. }` blocks counted), `self::` and a bare name of a child module from the
current one. The path's module is the deepest module it names; an inline module belongs to the
file that holds it, so a file is one node of the graph.

A module that only declares a child (`mod child;`) does not import it; a parent that re-exports
or calls its child imports it, and a child that reads its parent imports the parent, so a parent
and child that lean on each other are a cycle like any other.

Usage: scripts/check-module-cycles.py [CRATE_DIR ...] (default: every crates/* and bins/*).
       scripts/check-module-cycles.py --self-test  (a planted cycle must be found, a clean tree
       must pass)."""
import os
import re
import sys
import tempfile

MAX_LINES = 800
IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def strip_comments_and_literals(text):
    """Blanks comments, string, byte-string, raw-string and char literals (newlines kept so that
    nothing inside them is read as code)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        nxt = text[i + 1] if i + 1 < n else ""
        if c == "/" and nxt == "/":
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
            continue
        if c == "/" and nxt == "*":
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(" " + "\n" * text.count("\n", i, j))
            i = j
            continue
        raw = re.match(r'(?:br|r|cr)(#*)"', text[i:]) if c in "brc" else None
        if raw and (i == 0 or not re.match(r"[A-Za-z0-9_]", text[i - 1])):
            hashes = raw.group(1)
            end = text.find('"' + hashes, i + raw.end())
            end = n if end < 0 else end + 1 + len(hashes)
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
            continue
        if c == '"' or (c in "bc" and nxt == '"' and (i == 0 or not re.match(r"[A-Za-z0-9_]", text[i - 1]))):
            j = i + (1 if c == '"' else 2)
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
            continue
        if c == "'":
            char = re.match(r"'(?:\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\}|.)|[^\\'])'", text[i:])
            if char:
                out.append("' '")
                i += char.end()
                continue
        out.append(c)
        i += 1
    return "".join(out)


def parse_use_tree(text, pos):
    """Parses a use tree at `pos`; returns ([(segments, alias)], position after it). A glob's
    alias is `*`; `a::{self}` is `a` under its own name."""
    paths = []
    prefix = []
    space = re.compile(r"\s*(::)?\s*")
    while True:
        pos = space.match(text, pos).end()
        if text.startswith("{", pos):
            pos += 1
            while True:
                pos = re.compile(r"\s*").match(text, pos).end()
                if text.startswith("}", pos):
                    pos += 1
                    break
                sub, after = parse_use_tree(text, pos)
                if after == pos:
                    break
                pos = after
                for segments, alias in sub:
                    if segments == ["self"]:
                        paths.append((prefix, alias if alias != "self" else (prefix[-1] if prefix else alias)))
                    else:
                        paths.append((prefix + segments, alias))
                pos = re.compile(r"\s*,?").match(text, pos).end()
            return paths, pos
        if text.startswith("*", pos):
            return [(prefix, "*")], pos + 1
        m = re.compile(IDENT).match(text, pos)
        if not m:
            return ([(prefix, prefix[-1])] if prefix else []), pos
        prefix = prefix + [m.group(0)]
        pos = m.end()
        m = re.compile(r"\s*::").match(text, pos)
        if m:
            pos = m.end()
            continue
        alias = prefix[-1]
        m = re.compile(r"\s+as\s+(" + IDENT + ")").match(text, pos)
        if m:
            pos = m.end()
            alias = m.group(1)
        return [(prefix, alias)], pos


def file_modules(src):
    """Maps each file module's path (a tuple of names) to its file."""
    found = {}
    for folder, _, files in os.walk(src):
        for name in files:
            if not name.endswith(".rs"):
                continue
            path = os.path.join(folder, name)
            parts = os.path.relpath(path, src)[:-3].split(os.sep)
            if parts[-1] in ("lib", "main", "mod"):
                parts = parts[:-1]
            found[tuple(parts)] = path
    return found


MOD_BLOCK = re.compile(r"\bmod\s+(" + IDENT + r")\s*\{")
USE = re.compile(r"\buse\s+")
PATH = re.compile(r"(?<![A-Za-z0-9_:])(crate|super|self)((?:\s*::\s*" + IDENT + r")+)")
BARE = re.compile(r"(?<![A-Za-z0-9_:.])(" + IDENT + r")\s*::\s*(" + IDENT + r")")


def scan_file(module, text):
    """Yields (inline module path, kind, segments) for each path the file names, and the inline
    modules it declares."""
    inline = set()
    stack = []  # (depth at which the inline module's brace closes, name)
    depth = 0
    events = []
    i = 0
    n = len(text)
    tokens = re.compile(r"[{}]|\bmod\s+" + IDENT + r"\s*\{|\buse\s+|(?<![A-Za-z0-9_:])(?:crate|super|self)(?:\s*::\s*" + IDENT + r")+|(?<![A-Za-z0-9_:.])" + IDENT + r"\s*::\s*" + IDENT)
    while i < n:
        m = tokens.search(text, i)
        if not m:
            break
        tok = m.group(0)
        current = module + tuple(name for _, name in stack)
        if tok == "{":
            depth += 1
            i = m.end()
        elif tok == "}":
            depth -= 1
            while stack and stack[-1][0] > depth:
                stack.pop()
            i = m.end()
        elif tok.startswith("mod"):
            name = MOD_BLOCK.match(tok).group(1)
            depth += 1
            stack.append((depth, name))
            inline.add(current + (name,))
            i = m.end()
        elif tok.startswith("use"):
            paths, end = parse_use_tree(text, m.end())
            for segments, alias in paths:
                events.append((current, alias, segments))
            i = max(end, m.end())
        else:
            segments = [s.strip() for s in re.split(r"::", tok)]
            events.append((current, None, segments))
            i = m.end()
    return events, inline


def resolve(current, segments, modules, imports, depth=0):
    """The module that defines what a path names (the deepest module it walks through, with
    `use` re-exports followed to the module that defines the item), or None for a path outside
    the crate."""
    if not segments or depth > 16:
        return None
    first = segments[0]
    rest = segments[1:]
    if first == "crate":
        base = ()
    elif first == "self":
        base = current
    elif first == "super":
        base = current[:-1]
        while rest and rest[0] == "super":
            base = base[:-1]
            rest = rest[1:]
    elif current + (first,) in modules:
        base = current + (first,)
    elif (current, first) in imports:
        origin, path = imports[(current, first)]
        return resolve(origin, path + rest, modules, imports, depth + 1)
    else:
        return None
    for index, seg in enumerate(rest):
        if base + (seg,) in modules:
            base = base + (seg,)
            continue
        if (base, seg) in imports:
            origin, path = imports[(base, seg)]
            found = resolve(origin, path + rest[index + 1 :], modules, imports, depth + 1)
            return base if found is None else found
        break
    return base


def module_graph(src):
    files = file_modules(src)
    scanned = {}
    modules = set(files)
    for module, path in files.items():
        with open(path, encoding="utf-8") as handle:
            text = strip_comments_and_literals(handle.read())
        events, inline = scan_file(module, text)
        scanned[module] = events
        modules |= inline
    # What each module's `use` declarations bring into it by name, so that a path through a
    # re-export (`crate::Error` where the root has `pub use error::Error`) reaches the module
    # that defines the item.
    imports = {}
    for events in scanned.values():
        for current, alias, segments in events:
            if alias is not None and alias not in ("*", "_", "self"):
                imports[(current, alias)] = (current, segments)

    def file_of(mod):
        while mod not in files:
            mod = mod[:-1]
        return mod

    graph = {module: set() for module in files}
    for module, events in scanned.items():
        for current, _, segments in events:
            target = resolve(current, segments, modules, imports)
            if target is None:
                continue
            target = file_of(target)
            if target != module:
                graph[module].add(target)
                EVIDENCE.setdefault((src, module, target), "::".join(segments))
    return graph


# One path per edge, shown beside the edges of a cycle: (src, from, to) -> path as written.
EVIDENCE = {}


def name(module):
    return "/".join(module) or "(root)"


def cycles(graph, src=None):
    """Every elementary cycle's shortest form, once per set of strongly connected modules: the
    strongly connected components (Tarjan) with more than one member, each shown by one cycle
    through all it can reach."""
    index = {}
    low = {}
    on_stack = set()
    stack = []
    components = []
    counter = [0]

    def strong(v):
        work = [(v, iter(sorted(graph.get(v, ()))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        while work:
            node, children = work[-1]
            advanced = False
            for w in children:
                if w not in graph:
                    continue
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    advanced = True
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    found = []
    for component in sorted(components):
        members = set(component)
        edges = sorted(
            f"{name(a)} -> {name(b)} ({EVIDENCE.get((src, a, b), '?')})"
            for a in component
            for b in sorted(graph[a])
            if b in members
        )
        found.append((component, edges))
    return found


def long_files(src):
    out = []
    for folder, _, files in os.walk(src):
        for file in files:
            path = os.path.join(folder, file)
            if file.endswith(".rs") and file != "tests.rs":
                with open(path, encoding="utf-8") as handle:
                    n = sum(1 for _ in handle)
                if n > MAX_LINES:
                    out.append(f"{path} ({n} lines)")
    return out


def check(roots):
    failed = False
    for root in roots:
        src = os.path.join(root, "src")
        if not os.path.isdir(src):
            continue
        for component, edges in cycles(module_graph(src), src):
            print(f"{root}: modules import each other: {', '.join(name(m) for m in component)}")
            for edge in edges:
                print(f"    {edge}")
            failed = True
        for path in long_files(src):
            print(f"over {MAX_LINES} lines, split it by responsibility: {path}")
            failed = True
    return failed


def self_test():
    """A planted cycle whose imports stand below `mod tests;`, in a function and in a group must be
    found; the same tree without the back edge must pass."""
    planted = {
        "lib.rs": "pub mod a;\npub mod b;\npub mod c;\nmod d;\n",
        "a.rs": "#[cfg(test)]\nmod tests;\nuse crate::{b::B, c};\npub struct A;\n",
        "b.rs": "#[cfg(test)]\nmod tests;\npub struct B;\nfn f() { use super::c::C; }\n",
        "c.rs": "// use crate::a;\nconst S: &str = \"crate::a::A\";\npub struct C;\nfn g() -> crate::a::A { crate::a::A }\n",
        "d/mod.rs": "mod e;\npub(crate) struct D;\n",
        "d/e.rs": "mod inner { use super::super::D; }\n",
    }
    clean = dict(planted)
    clean["c.rs"] = "// use crate::a;\nconst S: &str = \"crate::a::A\";\npub struct C;\n"
    failures = []
    for label, tree, want in (("planted", planted, True), ("clean", clean, False)):
        with tempfile.TemporaryDirectory() as top:
            src = os.path.join(top, "crates", "x", "src")
            for rel, body in tree.items():
                path = os.path.join(src, rel)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w", encoding="utf-8") as handle:
                    handle.write(body)
            graph = module_graph(src)
            found = cycles(graph)
            got = bool(found)
            if got != want:
                failures.append(f"{label} tree: wanted a cycle {want}, found {found}")
            if label == "planted" and found and set(found[0][0]) != {("a",), ("b",), ("c",)}:
                failures.append(f"planted tree: the cycle is a, b, c, found {found}")
            if ("d",) not in graph.get(("d", "e"), set()):
                failures.append(f"{label} tree: d/e's `super::super` inside an inline module was not resolved")
    for failure in failures:
        print(f"self-test: {failure}")
    if failures:
        sys.exit(1)
    print("self-test: the planted cycle is found, the clean tree passes")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return
    roots = sys.argv[1:] or sorted(
        os.path.join(kind, entry) for kind in ("crates", "bins") for entry in os.listdir(kind)
    )
    if check(roots):
        sys.exit(1)
    print("no module cycles, no source file over 800 lines")


if __name__ == "__main__":
    main()
