"""Import rules of ARCH.md for mechanisms/ and scenarios/: imports at module level only (optional
extras excepted) and no import cycle between modules."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("mechanisms", "scenarios")
#: Optional extras, imported where they are used so that the package works without them.
OPTIONAL = {"dp_accounting", "diffprivlib", "opendp", "torch", "opacus", "matplotlib", "sklearn", "dask",
            "distributed"}


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = _modules()


def _imported(name: str, path: Path, node: ast.AST) -> list[str]:
    """The own modules a module-level import statement of module ``name`` loads."""
    if isinstance(node, ast.Import):
        targets = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom):
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        base = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else [])) \
            if node.level else node.module
        targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]
    else:
        return []
    return [target for target in targets if target in MODULES]


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_are_at_module_level_except_optional_extras(name):
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    inner = []
    for function in ast.walk(tree):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(function):
                if isinstance(node, ast.Import):
                    roots = {alias.name.split(".")[0] for alias in node.names}
                elif isinstance(node, ast.ImportFrom):
                    roots = {(node.module or "").split(".")[0]} if not node.level else {"."}
                else:
                    continue
                if not roots <= OPTIONAL:
                    inner.append(f"line {node.lineno}: {ast.unparse(node)}")
    assert not inner, inner


def test_no_import_cycle():
    graph = {name: set() for name in MODULES}
    for name, path in MODULES.items():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            graph[name].update(_imported(name, path, node))
    # Tarjan's strongly connected components: a cycle is a component of more than one module
    index, low, stack, on_stack, cycles, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
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
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert not cycles, cycles
