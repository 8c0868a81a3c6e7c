"""Every name a module exports in ``__all__`` exists (``from module import *`` must not fail)."""

import importlib
import pkgutil

import pytest

import audit
import mechanisms
import scenarios

OWN_PACKAGES = {"audit", "mechanisms", "scenarios", "benchmarks"}


def _modules():
    for package in (audit, mechanisms, scenarios):
        yield package.__name__
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            yield info.name


@pytest.mark.parametrize("name", sorted(_modules()))
def test_every_exported_name_exists(name):
    try:
        module = importlib.import_module(name)
    except ImportError as error:  # an optional extra that is not installed; never our own
        missing = error if isinstance(error, ModuleNotFoundError) else error.__cause__
        if not isinstance(missing, ModuleNotFoundError) or (missing.name or "").split(".")[0] in OWN_PACKAGES:
            raise  # a library catalogue re-raises the missing module with an install hint, from it
        pytest.skip(f"{name}: {error}")
    missing = [export for export in getattr(module, "__all__", ()) if not hasattr(module, export)]
    assert not missing, f"{name}.__all__ names what the module does not define: {missing}"
