"""Old module paths of the mechanisms package (issue 25) keep working, and nothing here uses them.

Each old path in :data:`mechanisms.moved.MOVED` imports, with a ``DeprecationWarning`` naming
the new path, as the *same* module object as its new home; ``mechanisms.dpsgd`` and
``mechanisms.literature`` are now packages that re-export every name the old modules exported.
Objects pickle under the new paths; pickles that name an old path still load.
"""

import ast
import importlib
import pickle
import pickletools
import re
import subprocess
import sys
from pathlib import Path

import pytest

import mechanisms
from audit import load_spec
from mechanisms import dpsgd, literature, zoo
from mechanisms.moved import MOVED
from mechanisms.dpsgd import DPSGD, GradientCanary
from mechanisms.literature import NumericalSVT, ReportNoisyMax3
from mechanisms.zoo import ClippedBoxMean, PerQueryLaplaceMechanism, RoundedGaussianRealQuery

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
CODE = ("audit", "mechanisms", "scenarios", "benchmarks", "tests")
THIS = Path(__file__).resolve()

#: ``__all__`` of the modules that became packages, as it was before the move.
OLD_DPSGD_ALL = ["DPSGD", "VIEWS", "SMALL_CONFIGURATION"]
OLD_LITERATURE_ALL = ["LiteratureLaplace", "TruncatedGeometric", "NoisyHist1", "NoisyHist2", "ReportNoisyMax1",
                      "ReportNoisyMax2", "ReportNoisyMax3", "ReportNoisyMax4", "Rappor", "OneTimeRappor",
                      "LaplaceParallel", "PrefixSum", "murmur3_32"]


def _forget(monkeypatch, old: str) -> None:
    """Make the next import of ``old`` go through the finder again (as in a fresh process)."""
    monkeypatch.delitem(sys.modules, old, raising=False)
    monkeypatch.delattr(mechanisms, old.rsplit(".", 1)[1], raising=False)


@pytest.mark.parametrize("old, new", sorted(MOVED.items()))
def test_old_path_is_the_new_module_and_warns_naming_it(monkeypatch, old, new):
    _forget(monkeypatch, old)
    with pytest.warns(DeprecationWarning, match=re.escape(f"`{old}` has moved to `{new}`")):
        module = importlib.import_module(old)
    assert module is importlib.import_module(new) is sys.modules[old]
    assert module.__name__ == new and module.__spec__.name == new  # the new module is untouched


@pytest.mark.parametrize("statement", ["import mechanisms.faulty_discrete as module",
                                       "from mechanisms import faulty_discrete as module",
                                       "from mechanisms.faulty_discrete import RoundedGaussianRealQuery"])
def test_every_import_form_works_and_the_warning_points_at_the_importing_line(monkeypatch, statement):
    _forget(monkeypatch, "mechanisms.faulty_discrete")
    namespace: dict = {}
    with pytest.warns(DeprecationWarning, match="mechanisms.zoo.faulty_discrete") as record:
        exec(compile(statement, "<user code>", "exec"), namespace)
    assert [warning.filename for warning in record] == ["<user code>"]
    if "module" in namespace:
        assert namespace["module"] is zoo.faulty_discrete
    else:  # same class object, so isinstance holds whichever path it came from
        assert namespace["RoundedGaussianRealQuery"] is RoundedGaussianRealQuery


def test_unknown_names_still_fail_as_usual():
    with pytest.raises(ModuleNotFoundError, match="mechanisms.no_such_module"):
        importlib.import_module("mechanisms.no_such_module")


def test_old_files_are_gone_and_their_new_modules_import():
    for old, new in MOVED.items():
        assert not (ROOT / (old.replace(".", "/") + ".py")).exists(), old
        assert (ROOT / (new.replace(".", "/") + ".py")).is_file(), new
    for old in ("mechanisms/dpsgd.py", "mechanisms/literature.py"):  # now packages of the same name
        assert not (ROOT / old).exists() and (ROOT / old).with_suffix("").joinpath("__init__.py").is_file()


@pytest.mark.parametrize("package, names, modules", [
    (dpsgd, OLD_DPSGD_ALL, [dpsgd.trainer]),
    (dpsgd, None, [dpsgd.accounting, dpsgd.canary, dpsgd.data, dpsgd.mlp, dpsgd.shuffle]),
    (literature, OLD_LITERATURE_ALL, [literature.noisy_answers, literature.noisy_max, literature.rappor]),
    (literature, None, [literature.base, literature.svt]),
    (zoo, None, [zoo.faulty, zoo.faulty_discrete, zoo.search_examples]),
], ids=["dpsgd.py", "dpsgd_*.py", "literature.py", "literature_*.py", "zoo"])
def test_packages_re_export_every_public_name_of_the_old_modules(package, names, modules):
    names = names if names is not None else [name for module in modules for name in module.__all__]
    for name in names:
        assert name in package.__all__, name
        assert any(getattr(package, name) is getattr(module, name, None) for module in modules), name


def _resolve(path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)  # [..., "__init__"] for a package
    base = parts[:len(parts) - node.level]
    return ".".join(base + ([node.module] if node.module else []))


def test_no_code_in_the_repository_uses_an_old_path():
    """Imports (absolute, relative, ``from mechanisms import old``) and dotted-name strings such as
    scenario files' ``callable = "mechanisms.faulty:..."`` (pytest would turn the warning into an
    error only on the paths a test happens to run)."""
    old_text = re.compile(r"\b(" + "|".join(re.escape(old) for old in MOVED) + r")\b")
    found = []
    for folder in CODE:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix not in (".py", ".toml") or path.resolve() == THIS or path == ROOT / "mechanisms" / "moved.py":
                continue
            text = path.read_text(encoding="utf-8")
            found += [f"{path.relative_to(ROOT)}: {match.group(1)}" for match in old_text.finditer(text)]
            if path.suffix != ".py":
                continue
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom):
                    module = _resolve(path, node)
                    names = [module] + [f"{module}.{alias.name}" for alias in node.names]
                else:
                    continue
                found += [f"{path.relative_to(ROOT)}:{node.lineno}: {name}" for name in names if name in MOVED]
    assert not found, found


OBJECTS = [NumericalSVT(), ReportNoisyMax3(), GradientCanary(), PerQueryLaplaceMechanism(1.0, d=3),
           RoundedGaussianRealQuery(), ClippedBoxMean([0.0, 0.0], [1.0, 2.0], n=10, sigma=1.0),
           DPSGD(q=0.5, steps=2, n=10)]


def test_objects_pickle_under_the_new_paths_and_load_in_a_fresh_process():
    """What joblib's workers do: unpickle in another interpreter, where importing an old path
    would be an error (``-W error::DeprecationWarning``)."""
    data = pickle.dumps(OBJECTS)
    strings = {arg for _, arg, _ in pickletools.genops(data) if isinstance(arg, str)}
    assert {type(o).__module__ for o in OBJECTS} <= strings and not strings & set(MOVED)
    code = ("import pickle, sys\n"
            "objects = pickle.loads(sys.stdin.buffer.read())\n"
            "print('|'.join(f'{type(o).__module__}.{type(o).__qualname__}' for o in objects))\n")
    result = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c", code], input=data,
                            capture_output=True, cwd=ROOT, check=True)
    assert result.stdout.decode().strip().split("|") == [
        f"{type(o).__module__}.{type(o).__qualname__}" for o in OBJECTS]
    assert all(repr(pickle.loads(pickle.dumps(o))) == repr(o) for o in OBJECTS)


@pytest.mark.parametrize("cls", [NumericalSVT, GradientCanary, PerQueryLaplaceMechanism, RoundedGaussianRealQuery,
                                 ClippedBoxMean], ids=lambda cls: cls.__name__)
def test_pickles_that_name_an_old_path_still_load(monkeypatch, cls):
    new = cls.__module__
    old = next(old for old, target in MOVED.items() if target == new)
    _forget(monkeypatch, old)
    written_before_the_move = pickle.dumps(cls, protocol=0).replace(f"c{new}\n".encode(), f"c{old}\n".encode())
    assert old.encode() in written_before_the_move
    with pytest.warns(DeprecationWarning, match=re.escape(new)):
        assert pickle.loads(written_before_the_move) is cls


def test_a_scenario_file_with_an_old_callable_loads_and_records_the_warning(tmp_path, monkeypatch):
    """Warnings raised while building a file's mechanism are kept in ``spec.warnings`` (which
    ``dpaudit run`` prints), so the user of an old file is told the new path."""
    _forget(monkeypatch, "mechanisms.literature_svt")
    path = tmp_path / "old.toml"
    path.write_text('[mechanism]\ncallable = "mechanisms.literature_svt:NumericalSVT"\n'
                    '[scenario]\nkind = "custom"\n[[scenario.pair]]\n'
                    f'base = {[1.0] * 10}\nneighbor = {[2.0] * 10}\n')
    spec = load_spec(path)
    assert isinstance(spec.mechanism, NumericalSVT)
    assert [w for w in spec.warnings if w.startswith("DeprecationWarning") and "`mechanisms.literature.svt`" in w]
