"""Any release of a library: each swept in an isolated virtual environment, created on demand and cached.

``dpaudit sweep LIB==VERSION`` sweeps one release; ``dpaudit sweep LIB --versions A..B`` every
final release from A to B (inclusive; ``A..`` and ``..B`` are open, ``last:N`` the newest N).
The release that is installed where dpaudit runs is swept in-process.  Any other release is swept
by ``python -m audit sweep`` inside a virtual environment of its own under :func:`cache_folder`
(``~/.cache/dpaudit/envs``, or ``$DPAUDIT_ENVS``), built once with ``python -m venv`` and pip:

- the interpreter and the pins the release needs (:func:`release_environment`): old OpenDP needs
  numpy < 2, diffprivlib 0.4-0.5.1 scikit-learn 1.0.2, which has wheels only up to Python 3.10;
- the distribution the release ships under, when it is not the library's: SmartNoise SQL before
  1.0 is ``opendp-smartnoise`` (:data:`FORMER_NAMES`: a range lists the releases of both names);
- dpaudit's own dependencies (:data:`DPAUDIT_DEPENDENCIES`); dpaudit itself is this checkout, on
  ``PYTHONPATH``, so every release is swept by the same, unchanged catalogue, which adapts to the
  release's API (an entry or parameter the release lacks is a row "not in this release").

A library whose releases need other pins registers a rule with :func:`register_release_rule`.  A rule
may install the release and its pins without their declared requirements (``no_deps``: synthcity
pins a torch older than the CPU build installed here) and finish with a ``setup`` step
(:mod:`audit.sweep.torch_stand_ins`).

**Error control across releases.**  A range of k releases is one family: each release's sweep runs
at confidence 1 − (1 − C)/k, so the probability that any claim that holds is reported VIOLATED in
any release is at most 1 − C.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence

from .smartnoise_core_ffi import declare_gaussian_arguments
from .torch_stand_ins import SYNTHCITY_PINS, write_opacus_0x_shims, write_torchvision_stand_in

__all__ = ["Environment", "DPAUDIT_DEPENDENCIES", "cache_folder", "parse_release", "available_releases",
           "select_releases", "release_environment", "register_release_rule", "ensure_environment",
           "sweep_in_environment", "version_key"]

#: What dpaudit needs in each environment (pyproject.toml's dependencies; scipy from 1.12 for
#: scipy.special.betainccinv).
DPAUDIT_DEPENDENCIES = ("numpy>=1.24", "scipy>=1.12", "statsmodels>=0.14", "joblib>=1.3", "tqdm>=4.60",
                        "threadpoolctl>=3.1", "jinja2>=3.1", "tomli>=2.0; python_version < '3.11'")
#: The source root whose ``audit`` package the environments run (this checkout).
SOURCE_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Environment:
    """How to build the environment of one release: its interpreter (``"python3.10"``, or a path),
    the pins installed with it, and whether it sees the packages of the running interpreter (for a
    release that needs torch, which is large and already installed)."""

    python: str
    pins: tuple[str, ...] = ()
    system_site: bool = False
    #: Install the release without its declared requirements (which would replace the interpreter's
    #: torch), and the pins as given, also without theirs.
    no_deps: bool = False
    #: ``setup(environment_folder)``, run once the packages are installed.
    setup: Optional[Callable[[Path], None]] = None
    #: The distribution the release ships under, when it may differ from the one the caller names
    #: (SmartNoise SQL before 1.0 is ``opendp-smartnoise``, from 1.0 ``smartnoise-sql``, whichever
    #: catalogue is installed); None for the caller's.
    distribution: Optional[str] = None


def version_key(version: str) -> tuple:
    """A sort key of a release number: its numeric release segment (padded, so 1.5 = 1.5.0), then a
    final release after its pre- and dev-releases (``1.0rc1 < 1.0``), then the suffix's text."""
    match = re.match(r"v?(\d+(?:\.\d+)*)(.*)", version.strip())
    if match is None:
        return ((), 0, version)
    numbers = tuple(int(part) for part in match.group(1).split("."))
    numbers = numbers + (0,) * max(0, 6 - len(numbers))
    suffix = match.group(2)
    return (numbers, 0 if suffix and not suffix.startswith((".post", "post")) else 1, suffix)


def _final(version: str) -> bool:
    return re.fullmatch(r"\d+(\.\d+)*", version) is not None


def _current() -> str:
    return f"python{sys.version_info.major}.{sys.version_info.minor}"


def _diffprivlib(version: str) -> Environment:
    if version_key(version) < version_key("0.5.2"):
        # 0.4-0.5.1 import scikit-learn internals that 1.1 removed (0.5.2 carries its own copy of
        # _logistic_loss_and_grad); 1.0.2 has wheels up to Python 3.10.  0.4's histogram2d/histogramdd
        # pass histogramdd(normed=), which numpy 1.24 removed: numpy 1.23.
        return Environment("python3.10", ("scikit-learn==1.0.2", "numpy==1.23.5", "scipy==1.12.0"))
    if version_key(version) < version_key("0.6.4"):
        return Environment(_current(), ("scikit-learn<1.6", "numpy<2"))
    return Environment(_current(), ("scikit-learn<1.7",))


def _opendp(version: str) -> Environment:
    # Releases before 0.10 predate numpy 2; from 0.11, with the Polars its `polars` extra pins (the
    # catalogue's make_private_lazyframe entry needs it).
    if version_key(version) < version_key("0.10"):
        return Environment(_current(), ("numpy<2",))
    return Environment(_current(), (f"opendp[polars]=={version}",) if version_key(version) >= version_key("0.11") else ())


def _opacus(version: str) -> Environment:
    # torch is large and installed here: the environment sees it, and pip installs only Opacus.  0.9.0-0.10.0
    # pin torch 1.6/1.7 and 0.10.1-0.13 require torchvision (either would replace torch): the 0.x releases are
    # installed without their requirements, which the interpreter has, with shims for two names today's torch
    # lacks (audit/sweep/torch_stand_ins.py).
    if version_key(version) < version_key("1.0"):
        return Environment(sys.executable, (), system_site=True, no_deps=True, setup=write_opacus_0x_shims)
    return Environment(sys.executable, (), system_site=True)


def _smartnoise_synth(version: str) -> Environment:
    # Its releases pull in Opacus and torch (its GAN synthesizers): the environment sees the installed
    # torch, and pip installs the release with the Opacus and OpenDP it pins.
    return Environment(sys.executable, (), system_site=True)


def _synthcity(version: str) -> Environment:
    # synthcity pins torch < 2.3 and numpy < 2: the environment sees the CPU torch installed here, and
    # synthcity and the requirements measured to run its DP plugins are installed without their own
    # (audit/sweep/torch_stand_ins.py), with a stand-in for the CUDA-only torchvision.
    return Environment(sys.executable, SYNTHCITY_PINS, system_site=True, no_deps=True,
                       setup=write_torchvision_stand_in)


#: SmartNoise SQL's releases before 1.0 ship as ``opendp-smartnoise`` (module ``opendp.smartnoise.sql``).
SMARTNOISE_SQL_LEGACY = "opendp-smartnoise"
#: Distribution → the distributions its earlier releases shipped under (their releases are its releases).
FORMER_NAMES = {"smartnoise-sql": (SMARTNOISE_SQL_LEGACY,)}


def _smartnoise_sql(version: str) -> Environment:
    # opendp-smartnoise's last release is 0.1.4.2; smartnoise-sql's first on the index is 1.0.0.
    # Named here for both: with opendp-smartnoise installed, the catalogue (and so the caller) names it.
    if version_key(version) >= version_key("0.2"):
        return Environment(_current(), distribution="smartnoise-sql")
    # opendp-smartnoise 0.1.x (October 2020 - July 2021): its AST uses np.int (removed in numpy 1.24),
    # its PandasReader runs pandasql (which fails on SQLAlchemy 2); its SQL noise (from 0.1.2) calls
    # the native library of opendp-smartnoise-core, whose last release that ships it is 0.2.3 (0.2.4
    # and later exit at import), with protobuf modules that protobuf 4 refuses, and whose declaration
    # of that call libffi 3.4 refuses (audit/sweep/smartnoise_core_ffi.py).  numpy 1.23 and scipy 1.12
    # (dpaudit's floor) meet on Python 3.10.
    return Environment("python3.10", ("numpy==1.23.5", "scipy==1.12.0", "pandas==1.5.3", "sqlalchemy<2",
                                      "protobuf==3.20.3", "opendp-smartnoise-core==0.2.3"),
                       setup=declare_gaussian_arguments, distribution=SMARTNOISE_SQL_LEGACY)


_RULES: dict[str, Callable[[str], Environment]] = {"diffprivlib": _diffprivlib, "opendp": _opendp,
                                                   "opacus": _opacus, "smartnoise-synth": _smartnoise_synth,
                                                   "synthcity": _synthcity, "smartnoise-sql": _smartnoise_sql}


def register_release_rule(library: str, rule: Callable[[str], Environment]) -> None:
    """Use ``rule(version) -> Environment`` for the releases of ``library``."""
    if not callable(rule):
        raise TypeError(f"`rule` must be callable, got {rule!r}")
    _RULES[library] = rule


def release_environment(library: str, version: str) -> Environment:
    """The environment a release of ``library`` is swept in (the running Python, no pins, by default)."""
    rule = _RULES.get(library)
    return rule(version) if rule is not None else Environment(_current())


def cache_folder() -> Path:
    """Where environments are cached: ``$DPAUDIT_ENVS``, else ``~/.cache/dpaudit/envs``."""
    return Path(os.environ.get("DPAUDIT_ENVS") or Path.home() / ".cache" / "dpaudit" / "envs")


def parse_release(text: str) -> tuple[str, Optional[str]]:
    """``"opendp==0.14.0"`` → ``("opendp", "0.14.0")``; ``"opendp"`` → ``("opendp", None)``."""
    name, sep, version = text.partition("==")
    if sep and not version.strip():
        raise ValueError(f"`library` {text!r}: give a release after '==', e.g. {name}==1.0")
    return name.strip(), (version.strip() if sep else None)


def _index_versions(distribution: str) -> list[str]:
    """``pip index versions DISTRIBUTION``'s list (ValueError with pip's last line if none)."""
    found = subprocess.run([sys.executable, "-m", "pip", "index", "versions", distribution,
                            "--disable-pip-version-check"], capture_output=True, text=True)
    match = re.search(r"Available versions:\s*(.+)", found.stdout)
    if found.returncode != 0 or match is None:
        tail = (found.stderr.strip().splitlines() or ["no answer"])[-1]
        raise ValueError(f"cannot list the releases of {distribution!r} (pip index versions: {tail})")
    return [v.strip() for v in match.group(1).split(",")]


def available_releases(distribution: str) -> list[str]:
    """The releases of ``distribution`` on the package index pip uses, oldest first (``pip index
    versions``), with those it shipped under another name (:data:`FORMER_NAMES`: asked for either
    name, the releases of both)."""
    current = next((now for now, former in FORMER_NAMES.items() if distribution in former), distribution)
    releases = set(_index_versions(distribution))
    for other in (current, *FORMER_NAMES.get(current, ())):
        if other == distribution:
            continue
        try:
            releases.update(_index_versions(other))
        except ValueError:  # an index without the other name: the named one's releases
            continue
    return sorted(releases, key=version_key)


def select_releases(spec: str, releases: Sequence[str]) -> list[str]:
    """The final releases that ``spec`` (``A..B``, ``A..``, ``..B`` inclusive, or ``last:N``) picks
    from ``releases``, oldest first.

    Raises
    ------
    ValueError
        For a malformed spec, an end that is not a release, or a spec that picks nothing.
    """
    final = sorted((v for v in releases if _final(v)), key=version_key)
    if spec.startswith("last:"):
        count = spec.removeprefix("last:")
        if not count.isdigit() or int(count) < 1:
            raise ValueError(f"`versions` {spec!r}: last:N needs a positive whole N")
        chosen = final[-int(count):]
    else:
        low, sep, high = spec.partition("..")
        if not sep:
            raise ValueError(f"`versions` must be A..B, A.., ..B or last:N, got {spec!r}")
        for end in (low, high):
            if end and end not in releases:
                raise ValueError(f"`versions` {spec!r}: {end!r} is not a release (releases: {', '.join(final)})")
        chosen = [v for v in final if (not low or version_key(v) >= version_key(low))
                  and (not high or version_key(v) <= version_key(high))]
    if not chosen:
        raise ValueError(f"`versions` {spec!r} picks no final release of {', '.join(final)}")
    return chosen


def _interpreter(name: str) -> str:
    """An interpreter by path or name (``python3.10``), also among pyenv's installed versions."""
    if Path(name).is_file():
        return name
    version = name.removeprefix("python")
    candidates = sorted(Path.home().glob(f".pyenv/versions/{version}*/bin/{name}"))
    for found in [shutil.which(name), *map(str, candidates)]:
        if found and subprocess.run([found, "-V"], capture_output=True).returncode == 0:
            return found
    raise FileNotFoundError(f"no {name} interpreter for this release: install one (e.g. `pyenv install {version}`)")


def _requirement_name(requirement: str) -> str:
    return re.match(r"[A-Za-z0-9_.-]*", requirement).group(0).lower().replace("_", "-")


def _unpinned(dependencies: Sequence[str], pins: Sequence[str]) -> list[str]:
    """``dependencies`` without those a release's ``pins`` name: a release's pin wins (diffprivlib 0.4
    needs numpy 1.23, below dpaudit's own floor; what dpaudit runs there is checked by its sweep)."""
    pinned = {_requirement_name(pin) for pin in pins}
    return [d for d in dependencies if _requirement_name(d) not in pinned]


def ensure_environment(library: str, distribution: str, version: str, *, folder: Optional[Path] = None,
                       log: Callable[[str], None] = lambda line: None) -> Path:
    """The interpreter of the environment holding ``distribution==version`` (built if not cached).

    An environment is reused when its stamp records the same install command; a build is locked
    against a concurrent one of the same environment.

    Raises
    ------
    RuntimeError
        If the environment cannot be built (no interpreter, no wheel, a resolver conflict): the
        message has pip's last line.
    """
    env = release_environment(library, version)
    distribution = env.distribution or distribution
    python_name = _current() if env.python == sys.executable else Path(env.python).name
    folder = Path(folder) if folder is not None else cache_folder()
    tag = f"{distribution}-{version}-{python_name.removeprefix('python')}" + ("-site" if env.system_site else "")
    path = folder / tag
    python = path / "bin" / "python"
    pip = ["pip", "install", "--disable-pip-version-check", "--quiet"]
    own = _unpinned(DPAUDIT_DEPENDENCIES, env.pins)
    if env.no_deps:  # the release and its pins without their declared requirements; dpaudit's with theirs
        installs = [[*pip, "--no-deps", *env.pins, f"{distribution}=={version}"], [*pip, *own]]
    else:
        installs = [[*pip, *env.pins, f"{distribution}=={version}", *own]]
    command = installs[0] if len(installs) == 1 else installs  # the stamp of the one-step builds is unchanged
    if env.setup is not None:
        command = [*installs, [f"{env.setup.__module__}.{env.setup.__name__}"]]
    stamp = path / "dpaudit-ready.json"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"{tag}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stamp.is_file() and json.loads(stamp.read_text()).get("command") == command and python.exists():
            return python
        try:
            interpreter = _interpreter(env.python)
        except FileNotFoundError as exc:
            raise RuntimeError(str(exc)) from None
        log(f"dpaudit: building the environment of {distribution}=={version} in {path} (once)")
        venv = [interpreter, "-m", "venv", "--clear", *(["--system-site-packages"] if env.system_site else []), str(path)]
        steps = [venv, *([str(python), "-m", *install] for install in installs)]
        for step in steps:
            done = subprocess.run(step, capture_output=True, text=True)
            if done.returncode != 0:
                tail = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
                raise RuntimeError(f"cannot build the environment of {distribution}=={version}: {tail}")
        if env.setup is not None:
            env.setup(path)
        stamp.write_text(json.dumps({"command": command, "python": interpreter}))
    return python


def sweep_in_environment(python: Path, library: str, arguments: Sequence[str], out: Path) -> tuple[int, Optional[dict], str]:
    """Run ``python -m audit sweep LIBRARY ARGUMENTS --out OUT`` in an environment; its exit status,
    the document it wrote (None if none) and the last line it printed on stderr."""
    out = Path(out).resolve()  # the sweep runs in the source root: an output path relative to here moves
    out.mkdir(parents=True, exist_ok=True)
    (out / "sweep.json").unlink(missing_ok=True)  # never read an earlier run's report as this one's
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(SOURCE_ROOT), os.environ.get("PYTHONPATH")])))
    done = subprocess.run([str(python), "-m", "audit", "sweep", library, *arguments, "--out", str(out)],
                          env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=str(SOURCE_ROOT))
    path = Path(out) / "sweep.json"
    document = json.loads(path.read_text()) if path.is_file() else None
    lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
    ours = [line for line in lines if line.startswith("dpaudit")]  # not a library's noise at exit
    return done.returncode, document, (ours or lines or [""])[-1]
