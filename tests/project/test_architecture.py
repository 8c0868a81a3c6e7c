"""The layout keeps its shape: no import cycle, no hidden import, layers only reach down.

Every module of ``audit/``, ``mechanisms/`` and ``scenarios/`` is parsed with :mod:`ast` (nothing
is imported) and its imports become edges of a graph between modules:

- a relative import is resolved against the importing module's package;
- ``from pkg import name`` is an import of ``pkg.name`` when that is a module, of ``pkg`` (its
  ``__init__``) otherwise; ``import a.b`` is an import of ``a.b``;
- importing ``a.b.c`` from outside package ``a.b`` also runs ``a/b/__init__.py`` (and ``a``'s,
  from outside ``a``), so for cycles it counts as importing those packages too;
- imports under ``if TYPE_CHECKING:`` never run and are left out; imports inside a function are
  kept, so a cycle hidden by a deferred import is still a cycle;
- ``name = lazy_module("a.b")`` (:mod:`audit.lazy`, a module imported at first use) is an import of
  ``a.b`` like any other, so a lazy import hides neither a cycle nor a layer violation.

Three rules are checked:

(a) no cycle between modules (each strongly connected component of the graph is listed, with
    one cycle through it);
(b) no import inside a function, except of the optional extras in :data:`OPTIONAL_EXTRAS`
    (an optional dependency is imported where it is used, so that the core works without it);
(c) layers only reach down: ``mechanisms`` imports neither ``scenarios`` nor ``audit``, and
    ``scenarios`` does not import ``audit``;

and no code of the repository (benchmarks and tests included) imports a module by the old path
it had before it moved (:data:`audit.moved.MOVED_MODULES`).

The tests at the end feed the same checks small synthetic packages, so each rule is shown to fail
when it should.
"""

from __future__ import annotations

import ast
import importlib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Mapping

import pytest

import audit
from audit.moved import MOVED_MODULES

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
#: The packages checked, lowest layer first: a package may import only those before it.
LAYERS = ("mechanisms", "scenarios", "audit")
#: Where old module paths must not be used.
EVERY_FOLDER = LAYERS + ("benchmarks", "tests")
#: Distributions that are optional extras in pyproject.toml (by import name): the one thing a
#: function may import, so that the core runs without them.
OPTIONAL_EXTRAS = frozenset({"matplotlib", "sklearn", "dask", "distributed", "dp_accounting", "torch",
                             "opacus", "diffprivlib", "opendp"})

@dataclass(frozen=True)
class Import:
    """One import statement's target, as the importing module sees it."""

    source: str  # importing module, e.g. "audit.engine"
    target: str  # imported module (one of ours) or the external name as written, e.g. "numpy.linalg"
    line: int
    in_function: bool
    internal: bool  # target is a module of the checked packages


@dataclass(frozen=True)
class Finding:
    rule: str  # "cycle", "function import", "layer" or "old path"
    key: str  # stable across line moves, for the allow-list
    text: str  # what a failing test prints


# -- reading the packages ---------------------------------------------------------------------------
def find_modules(root: Path, packages: Iterable[str]) -> dict[str, Path]:
    """Dotted module name → file, for every ``.py`` file under ``root/<package>``."""
    modules = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _is_lazy_import(node: ast.AST) -> bool:
    """``lazy_module("a.b")`` (or ``lazy.lazy_module(...)``) with the module's name written out."""
    if not isinstance(node, ast.Call) or not node.args or not isinstance(node.args[0], ast.Constant):
        return False
    function = node.func
    name = function.id if isinstance(function, ast.Name) else getattr(function, "attr", None)
    return name == "lazy_module" and isinstance(node.args[0].value, str)


def _import_nodes(tree: ast.AST) -> Iterator[tuple[ast.AST, bool]]:
    """Every Import/ImportFrom node that can run, with whether it sits inside a function."""
    def walk(nodes: Iterable[ast.AST], in_function: bool) -> Iterator[tuple[ast.AST, bool]]:
        for node in nodes:
            if isinstance(node, (ast.Import, ast.ImportFrom)) or _is_lazy_import(node):
                yield node, in_function
            elif isinstance(node, ast.If) and _is_type_checking(node.test):
                yield from walk(node.orelse, in_function)  # the body never runs
            else:
                yield from walk(ast.iter_child_nodes(node), in_function or isinstance(node, _FUNCTIONS))

    yield from walk([tree], False)


def module_imports(name: str, path: Path, modules: Mapping[str, Path]) -> list[Import]:
    """The imports of module ``name`` (file ``path``), resolved against ``modules`` (and the old
    module paths of :data:`MOVED_MODULES`, which are modules too, if no longer files)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node, in_function in _import_nodes(tree):
        if isinstance(node, ast.Call):  # lazy_module("a.b")
            targets = [node.args[0].value]
        elif isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            targets = [f"{prefix}.{alias.name}" if (f"{prefix}.{alias.name}" in modules
                                                    or f"{prefix}.{alias.name}" in MOVED_MODULES) else prefix
                       for alias in node.names]
        for target in dict.fromkeys(targets):
            found.append(Import(name, target, node.lineno, in_function, target in modules))
    return found


def import_graph(root: Path = ROOT, packages: Iterable[str] = LAYERS) -> tuple[dict[str, Path], list[Import]]:
    modules = find_modules(root, packages)
    imports = [item for name, path in modules.items() for item in module_imports(name, path, modules)]
    return modules, imports


# -- the rules --------------------------------------------------------------------------------------
def _strongly_connected(nodes: Iterable[str], edges: Mapping[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components (iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(sorted(component))
    return components


def _one_cycle(component: list[str], edges: Mapping[str, set[str]]) -> list[str]:
    """A shortest cycle through the component's first module (breadth-first), closed."""
    members, start = set(component), component[0]
    previous = {start: None}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for child in sorted(edges.get(node, set()) & members):
            if child == start:
                path = [node]
                while previous[path[-1]] is not None:
                    path.append(previous[path[-1]])
                return path[::-1] + [start]
            if child not in previous:
                previous[child] = node
                queue.append(child)
    return [start, start]


def _entered_packages(item: Import, modules: Mapping[str, Path]) -> set[str]:
    """The packages whose ``__init__`` runs on the way to the target: its ancestors that are not
    also the importer's (those are already being imported).  ``audit.report`` importing
    ``audit.render.text`` runs ``audit/render/__init__.py`` too."""
    parts = item.target.split(".")
    ancestors = {".".join(parts[:end]) for end in range(1, len(parts))}
    source = item.source.split(".")
    own = {".".join(source[:end]) for end in range(1, len(source) + 1)}
    return {package for package in ancestors - own if package in modules}


def cycles(modules: Mapping[str, Path], imports: Iterable[Import]) -> list[Finding]:
    """(a) One finding per group of modules that import each other, directly or not."""
    edges: dict[str, set[str]] = {}
    for item in imports:
        if item.internal:
            edges.setdefault(item.source, set()).update({item.target} | _entered_packages(item, modules))
    findings = []
    for component in _strongly_connected(sorted(modules), edges):
        if len(component) > 1 or component[0] in edges.get(component[0], ()):
            cycle = " → ".join(_one_cycle(component, edges))
            findings.append(Finding("cycle", "cycle: " + " ".join(component),
                                    f"import cycle among {', '.join(component)}: {cycle}"))
    return findings


def function_imports(imports: Iterable[Import]) -> list[Finding]:
    """(b) Imports inside a function, except of an optional extra."""
    findings = []
    for item in imports:
        if item.in_function and (item.internal or item.target.split(".")[0] not in OPTIONAL_EXTRAS):
            findings.append(Finding("function import", f"function import: {item.source} -> {item.target}",
                                    f"{item.source} (line {item.line}) imports {item.target} inside a "
                                    "function (move it to the top of the module)"))
    return findings


def layer_violations(modules: Mapping[str, Path], imports: Iterable[Import],
                     layers: tuple[str, ...] = LAYERS) -> list[Finding]:
    """(c) Imports from a package to one above it in ``layers``."""
    rank = {package: position for position, package in enumerate(layers)}
    findings = []
    for item in imports:
        source, target = item.source.split(".")[0], item.target.split(".")[0]
        if item.internal and rank.get(target, -1) > rank.get(source, len(layers)):
            findings.append(Finding("layer", f"layer: {item.source} -> {item.target}",
                                    f"{item.source} (line {item.line}) imports {item.target}: "
                                    f"{source} may not import {target}"))
    return findings


def old_paths(imports: Iterable[Import]) -> list[Finding]:
    """Imports of a module by the path it had before it moved."""
    return [Finding("old path", f"old path: {item.source} -> {item.target}",
                    f"{item.source} (line {item.line}) imports {item.target}, which moved to "
                    f"{', '.join(MOVED_MODULES[item.target])}")
            for item in imports if item.target in MOVED_MODULES]


def all_findings(root: Path = ROOT, packages: tuple[str, ...] = LAYERS) -> list[Finding]:
    modules, imports = import_graph(root, packages)
    return (cycles(modules, imports) + function_imports(imports)
            + layer_violations(modules, imports, packages))


def _report(findings: list[Finding]) -> str:
    return "\n".join(f"  {finding.text}" for finding in findings)


# -- the repository ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def findings() -> list[Finding]:
    return all_findings()


@pytest.mark.parametrize("rule", ["cycle", "function import", "layer"])
def test_repository_keeps_the_rule(findings, rule):
    new = [f for f in findings if f.rule == rule]
    assert not new, f"{len(new)} {rule} finding(s):\n{_report(new)}"


def test_nothing_imports_an_old_module_path():
    _, imports = import_graph(ROOT, EVERY_FOLDER)
    this = ".".join(Path(__file__).resolve().relative_to(ROOT).with_suffix("").parts)
    found = [f for f in old_paths(imports) if not f.key.startswith(f"old path: {this} ")]
    # (this file imports them on purpose, to show that they still work)
    assert not found, _report(found)


def test_the_graph_sees_the_real_imports():
    """Sanity: known edges are found, so an empty finding list is not an empty graph."""
    modules, imports = import_graph()
    edges = {(i.source, i.target) for i in imports if i.internal}
    assert ("audit.engine", "audit.report") in edges
    assert ("audit.report", "audit.render.text") in edges
    assert ("audit.cli", "audit.engine") not in edges and ("audit.cli", "audit.suite") in edges  # lazy, seen
    assert any(s.startswith("scenarios.") and t.startswith("mechanisms.") for s, t in edges)
    assert len(modules) > 60


# -- old module paths -------------------------------------------------------------------------------
@pytest.fixture
def forget_moved_modules():
    """Each test imports the old paths afresh (and leaves no stand-in behind)."""
    def forget():
        for name in MOVED_MODULES:
            sys.modules.pop(name, None)
            if hasattr(audit, name.rpartition(".")[2]):
                delattr(audit, name.rpartition(".")[2])

    forget()
    yield
    forget()


@pytest.mark.parametrize("old, name, home", [
    ("audit.output", "format_table", "audit.render.tables"),
    ("audit.output", "write_reports", "audit.render.files"),
    ("audit.output", "summary_markdown", "audit.render.markdown"),
    ("audit.output", "error_control_text", "audit.render.text"),
    ("audit.html", "report_html", "audit.render.html"),
    ("audit.plots", "save_figures", "audit.render.plots"),
    ("audit.plots", "figure_stem", "audit.render.text"),
])
def test_an_old_module_path_forwards_with_a_warning(forget_moved_modules, old, name, home):
    with pytest.warns(DeprecationWarning, match=rf"`{old}` has moved to .*`{home}`"):
        module = importlib.import_module(old)
    assert getattr(module, name) is getattr(importlib.import_module(home), name)
    with pytest.raises(AttributeError, match=rf"{old}' has moved to .*{home}.*'no_such_name'"):
        module.no_such_name  # noqa: B018


def test_from_import_of_an_old_module_path(forget_moved_modules):
    with pytest.warns(DeprecationWarning, match="`audit.plots` has moved"):
        from audit import plots
    with pytest.warns(DeprecationWarning, match="`audit.output` has moved"):
        from audit.output import load_report
    assert plots.PlotsUnavailable is importlib.import_module("audit.render.plots").PlotsUnavailable
    assert load_report is importlib.import_module("audit.render.files").load_report


def test_text_helpers_imported_from_audit_report_forward_with_a_warning():
    import audit.render.text
    import audit.report

    for name in ("TRADEOFF_MEANING", "accuracy_claim", "claim_label", "claim_scope", "draws_text",
                 "format_number", "statistic_text"):
        with pytest.warns(DeprecationWarning, match=rf"audit.report.{name} has moved: .* audit.render.text"):
            assert getattr(audit.report, name) is getattr(audit.render.text, name)
    with pytest.raises(AttributeError, match="no_such_name"):
        audit.report.no_such_name  # noqa: B018


# -- the checks can fail ----------------------------------------------------------------------------
def _package(root: Path, files: Mapping[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_a_cycle_is_found_and_listed(tmp_path):
    _package(tmp_path, {
        "pkg/__init__.py": "from .a import A\n",
        "pkg/a.py": "from .b import B\nA = 1\n",
        "pkg/b.py": "def f():\n    from . import c\n",  # hidden behind a function: still a cycle
        "pkg/c.py": "import pkg.a\n",
        "pkg/d.py": "from pkg import a\nfrom . import __version__\n",  # pkg.a, then pkg's __init__
    })
    modules, imports = import_graph(tmp_path, ("pkg",))
    found = cycles(modules, imports)
    assert [f.key for f in found] == ["cycle: pkg.a pkg.b pkg.c"]
    assert "pkg.a → pkg.b → pkg.c → pkg.a" in found[0].text
    assert ("pkg.d", "pkg.a") in {(i.source, i.target) for i in imports}
    assert ("pkg.d", "pkg") in {(i.source, i.target) for i in imports}


def test_a_cycle_through_a_package_init_is_found(tmp_path):
    """``a`` imports ``pkg.sub.x``, which runs ``pkg/sub/__init__.py``, which imports ``a``."""
    _package(tmp_path, {"pkg/__init__.py": "", "pkg/a.py": "from .sub.x import X\n",
                        "pkg/sub/__init__.py": "from ..a import *\n", "pkg/sub/x.py": "X = 1\n"})
    modules, imports = import_graph(tmp_path, ("pkg",))
    assert [f.key for f in cycles(modules, imports)] == ["cycle: pkg.a pkg.sub"]


def test_an_old_module_path_is_found(tmp_path):
    _package(tmp_path, {"pkg/__init__.py": "from audit import output\nimport audit.plots\n"
                                           "from audit.html import report_html\nfrom audit import render\n"})
    _, imports = import_graph(tmp_path, ("pkg",))
    assert [f.key for f in old_paths(imports)] == ["old path: pkg -> audit.output", "old path: pkg -> audit.plots",
                                                   "old path: pkg -> audit.html"]


def test_importing_the_own_package_init_is_a_cycle(tmp_path):
    """``from . import __version__`` in a module the package's __init__ imports: the old pattern."""
    _package(tmp_path, {"pkg/__init__.py": "__version__ = '1'\nfrom .engine import run\n",
                        "pkg/engine.py": "from . import __version__\ndef run():\n    pass\n"})
    modules, imports = import_graph(tmp_path, ("pkg",))
    assert [f.key for f in cycles(modules, imports)] == ["cycle: pkg pkg.engine"]


def test_an_import_inside_a_function_is_found(tmp_path):
    _package(tmp_path, {"pkg/__init__.py": "",
                        "pkg/m.py": ("import math\n"
                                     "def plot():\n    from matplotlib.figure import Figure\n"
                                     "def slow():\n    import difflib\n"
                                     "class K:\n    def method(self):\n        from . import n\n"
                                     "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.n\n"),
                        "pkg/n.py": ""})
    modules, imports = import_graph(tmp_path, ("pkg",))
    found = {f.key for f in function_imports(imports)}
    assert found == {"function import: pkg.m -> difflib", "function import: pkg.m -> pkg.n"}


def test_a_layer_violation_is_found(tmp_path):
    _package(tmp_path, {"low/__init__.py": "", "low/a.py": "def f():\n    import high.b\n",
                        "high/__init__.py": "", "high/b.py": "import low.a\n"})
    modules, imports = import_graph(tmp_path, ("low", "high"))
    found = layer_violations(modules, imports, ("low", "high"))
    assert [f.key for f in found] == ["layer: low.a -> high.b"]


def test_a_lazy_import_is_an_import(tmp_path):
    """``lazy_module("x")`` at a module's top is an edge (a cycle through it is found); inside a
    function it is a function import."""
    _package(tmp_path, {"pkg/__init__.py": "", "pkg/a.py": "from .lazy import lazy_module\nb = lazy_module('pkg.b')\n",
                        "pkg/b.py": "from . import a\n", "pkg/lazy.py": "def lazy_module(name):\n    return name\n",
                        "pkg/c.py": "from pkg import lazy\ndef f():\n    return lazy.lazy_module('pkg.b')\n"})
    modules, imports = import_graph(tmp_path, ("pkg",))
    assert [f.key for f in cycles(modules, imports)] == ["cycle: pkg.a pkg.b"]
    assert [f.key for f in function_imports(imports)] == ["function import: pkg.c -> pkg.b"]
