"""Imports between spca_cli modules go one way: no module imports, directly or through others,
a module that imports it back.

The rule counts every ``import`` and ``from ... import`` of a spca_cli module, wherever it is
written: at module level (including class bodies and ``if``/``try`` blocks, which run at import
time) and inside functions alike. A function-level (lazy) import defers when a module is loaded,
not the dependency on it, so one that points back up is still a circle in the design: the two
modules can only be understood, tested and changed together, and the day it moves to the top
of the file Python meets a half-initialised module. A shared piece belongs in a module below
both of its users (``corpus/kinds.py``, ``solvers/_choices.py``, ``epsilon_net.py``,
``solvers/_base.with_notes``). The solver registry is a table below the solver modules: it
names each solver's function by its module, imported at the first call, and a solver may read
the table (auto's budget note takes the option's name from it).

Edges are the modules named in the source: ``from spca_cli.corpus import read`` is an edge to
``spca_cli.corpus.read``, ``from spca_cli.corpus import load_input`` one to the package
``spca_cli.corpus``. The parent packages that Python runs before a submodule are not edges:
their ``__init__`` files (``spca_cli``, ``spca_cli.corpus``, ``spca_cli.solvers``) import their
public names on first use, above everything they name.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "spca_cli"


def _modules():
    """Every spca_cli module's dotted name -> its file."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(name, path):
    """``[(imported module, at module level?)]`` of one module, relative imports resolved."""
    is_package = path.name == "__init__.py"
    found = []

    def target(node):
        if isinstance(node, ast.Import):
            return [alias.name for alias in node.names]
        base = node.module or ""
        if node.level:
            anchor = name.split(".") if is_package else name.split(".")[:-1]
            anchor = anchor[:len(anchor) - node.level + 1]
            base = ".".join([*anchor, base] if base else anchor)
        # a name that is a submodule is an edge to it; any other name is the module's own
        return [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base
                for alias in node.names]

    def visit(node, module_level):
        for child in ast.iter_child_nodes(node):
            inside = module_level and not isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.extend((t, inside) for t in target(child) if t in MODULES and t != name)
            visit(child, inside)

    visit(ast.parse(path.read_text(encoding="utf-8")), True)
    return found


def _graph(*, lazy):
    return {name: sorted({t for t, top in _imports(name, path) if top or lazy})
            for name, path in MODULES.items()}


def _cycles(graph):
    """The strongly connected components of more than one module (Tarjan), each sorted, with
    one circle through it spelled out."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def connect(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return [f"{' <-> '.join(c)} (e.g. {_circle(graph, c)})" for c in found]


def _circle(graph, component):
    """One circle inside ``component``: a -> b -> ... -> a."""
    members, start = set(component), component[0]
    path, seen = [start], {start}
    while True:
        step = next(w for w in graph[path[-1]] if w in members)
        if step in seen:
            return " -> ".join(path[path.index(step):] + [step])
        path.append(step)
        seen.add(step)


def test_the_walk_sees_every_module_and_both_kinds_of_import():
    assert {"spca_cli.cli", "spca_cli.corpus.read", "spca_cli.solvers.registry",
            "spca_cli.limits", "spca_cli.kernels.counts"} <= set(MODULES)
    kinds = dict(_imports("spca_cli.corpus.sources", MODULES["spca_cli.corpus.sources"]))
    assert kinds["spca_cli.corpus.kinds"] is True  # at module level
    assert kinds["spca_cli.distributed.corpus"] is False  # inside a function
    auto = "spca_cli.solvers.exact"  # auto's incumbent imports the cheap solvers when it runs
    assert "spca_cli.solvers.tpower" in _graph(lazy=True)[auto]
    assert "spca_cli.solvers.tpower" not in _graph(lazy=False)[auto]


def test_the_walk_finds_a_circle():
    graph = {"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}
    assert _cycles(graph) == ["a <-> b <-> c (e.g. a -> b -> c -> a)"]


def test_no_cycle_among_module_level_imports():
    assert _cycles(_graph(lazy=False)) == []


@pytest.mark.parametrize("pair", [("spca_cli.corpus.read", "spca_cli.corpus.sources"),
                                  ("spca_cli.solvers.registry", "spca_cli.limits"),
                                  ("spca_cli.solvers.exact", "spca_cli.solvers.registry")])
def test_former_circles_go_one_way(pair):
    graph = _graph(lazy=True)
    upper, lower = pair
    assert lower in graph[upper] and upper not in graph[lower]


def test_no_cycle_when_function_level_imports_count():
    assert _cycles(_graph(lazy=True)) == []
