"""What synthcity and Opacus 0.x releases need in their environments on a machine whose torch is the CPU
build 2.13.0.

**synthcity.**

synthcity 0.2.12 requires ``torch<2.3`` and ``numpy<2``; an older torch would pull gigabytes of GPU
libraries, so its environment sees the interpreter's torch (``--system-site-packages``) and
installs synthcity with ``--no-deps``, then its requirements as measured to import and run the DP
plugins (:data:`SYNTHCITY_PINS`, also ``--no-deps``):

- numpy 1.26.4 (synthcity imports ``numpy.trapz``, which numpy 2.4 removed, and AIM's mirror
  descent fails in ``scipy.sparse.linalg.lsmr`` under numpy 2.3); pandas 2.3;
- lifelines 0.30 (0.29, which synthcity pins, wants numpy < 2 too, and either runs here);
- tsai 0.3.9 with fastai 2.7 and fastprogress 1.0.3 (synthcity's model factory imports tsai at
  module level; later fastprogress needs fasthtml);
- no torchvision: its wheels here are built for CUDA torch and do not load against the CPU build.
  synthcity imports it at module level (through tsai and fastai too) for its image and
  time-series models only, so :func:`write_torchvision_stand_in` writes a stand-in package whose
  every name raises when called; the tabular DP plugins never call it.

The decaf plugin (not DP) needs pytorch_lightning and decaf-synthetic-data, and is left out.

**Opacus 0.9-0.15**: 0.9.0-0.10.0 pin torch 1.6/1.7, torchvision and torchcsprng exactly (0.9.0 pins
36 packages, pytest and twine among them), 0.10.1-0.13 require torchvision (which only their examples
import, and which brings a torch of its own), 0.14-0.15 only torch >= 1.3, numpy and scipy.  pip
would replace the CPU torch, so every 0.x release is installed with ``--no-deps`` beside the
interpreter's torch, numpy and scipy.  Two names they import are gone from it
(:func:`write_opacus_0x_shims`):

- ``torch.nn.modules.module.ModuleAttributeError`` (0.11's ``opacus.layers.param_rename``): torch
  1.8 replaced that subclass of AttributeError by AttributeError itself.  A ``.pth`` file installs
  an import hook that adds the name, as an alias of AttributeError, when torch loads that module.
- ``torchcsprng`` (0.9-0.10 import it at module level; 0.11 made it optional): its wheels were
  built for torch 1.x.  A stand-in module whose generator raises when called: the engine needs it
  only with ``secure_rng=True``, which the catalogue never sets.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["SYNTHCITY_PINS", "TORCHVISION_STAND_IN", "write_torchvision_stand_in", "OPACUS_0X_ALIAS",
           "TORCHCSPRNG_STAND_IN", "write_opacus_0x_shims"]

#: The requirements of synthcity 0.2.12 as installed and measured to run its DP plugins
#: (``pip freeze --local`` of that environment, without synthcity and the GPU-only nccl).
SYNTHCITY_PINS = (
    "alembic==1.20.1", "autograd==1.9.1", "autograd-gamma==0.5.0", "colorlog==6.12.0", "fastai==2.7.19",
    "fastcore==1.7.29", "fastdownload==0.0.8", "fastprogress==1.0.3", "feather-format==0.4.1", "geomloss==0.3.1",
    "h5py==3.16.0", "lifelines==0.30.3", "llvmlite==0.50.0", "loguru==0.7.3", "Mako==1.4.3", "monai==1.6.1",
    "nflows==0.14", "numba==0.68.1", "numpy==1.26.4", "optuna==5.0.0", "pandas==2.3.3", "pgmpy==0.1.26",
    "pyarrow==26.0.1", "pycox==0.3.0", "pytz==2026.6", "redis==8.1.0", "shap==0.51.0", "slicer==0.0.8",
    "SQLAlchemy==2.1.9", "tenacity==9.2.1", "torchtuples==0.2.2", "tsai==0.3.9", "tzdata==2026.6",
    "xgboost-cpu==2.1.4", "xgbse==0.2.3", "texttable==1.7.2", "py7zr==1.1.4", "pybcj==1.0.8", "pyppmd==1.3.1",
    "inflate64==1.0.4", "multivolumefile==0.2.3", "brotli==1.2.1", "pycryptodomex==3.24.2", "backports.zstd==1.8.0",
)

TORCHVISION_STAND_IN = '''"""A stand-in for torchvision, written by dpaudit's synthcity environment
(audit/sweep/torch_stand_ins.py).

synthcity imports torchvision (and, through tsai and fastai, torchvision.models and
torchvision.transforms) at module level for its image and time-series models only.  The torchvision
wheels on this machine are built for CUDA torch and do not load against the CPU torch; the tabular
DP plugins never call torchvision.  Every submodule imports; every name in it raises when called.
"""
import importlib.abc
import importlib.machinery
import sys
import types

__version__ = "0.0.0+dpaudit-stand-in"


class _Placeholder:
    def __init__(self, name):
        self._name = name

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"{self._name}: torchvision is a stand-in in this environment")

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Placeholder(f"{self._name}.{name}")


class _Module(types.ModuleType):
    __all__ = []

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Placeholder(f"{self.__name__}.{name}")


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if fullname.startswith("torchvision."):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        module = _Module(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, _Finder())
__path__ = []
'''


def _site_packages(environment: Path) -> Path:
    found = sorted(Path(environment).glob("lib/python*/site-packages"))
    if not found:
        raise RuntimeError(f"no site-packages in the environment {environment}")
    return found[0]


def write_torchvision_stand_in(environment: Path) -> None:
    """Write :data:`TORCHVISION_STAND_IN` as the package ``torchvision`` of the virtual environment
    at ``environment`` (its ``lib/pythonX.Y/site-packages``)."""
    package = _site_packages(environment) / "torchvision"
    package.mkdir(exist_ok=True)
    (package / "__init__.py").write_text(TORCHVISION_STAND_IN)


OPACUS_0X_ALIAS = '''"""Written by dpaudit's Opacus 0.x environment (audit/sweep/torch_stand_ins.py): torch 1.8 removed
ModuleAttributeError, a subclass of AttributeError that Opacus 0.11 imports.  The name is restored
as AttributeError itself once torch.nn.modules.module is loaded (a .pth file runs before the
interpreter's own site-packages, where torch is, are on the path)."""
import importlib.abc
import importlib.util
import sys

_TARGET = "torch.nn.modules.module"


class _AliasAfterLoad(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname != _TARGET:
            return None
        sys.meta_path.remove(self)  # find the real module, then stand aside for good
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        load = spec.loader.exec_module

        def exec_module(module):
            load(module)
            if not hasattr(module, "ModuleAttributeError"):
                module.ModuleAttributeError = AttributeError

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _AliasAfterLoad())
'''

TORCHCSPRNG_STAND_IN = '''"""A stand-in for torchcsprng, written by dpaudit's Opacus 0.x environment
(audit/sweep/torch_stand_ins.py): Opacus 0.9-0.10 import it at module level, its wheels were built for
torch 1.x, and the engine calls it only with secure_rng=True."""


def create_random_device_generator(*args, **kwargs):
    raise RuntimeError("torchcsprng is a stand-in in this environment: secure_rng=True is not available")
'''


def write_opacus_0x_shims(environment: Path) -> None:
    """Write :data:`OPACUS_0X_ALIAS` (a module and the ``.pth`` line that imports it at start-up)
    and :data:`TORCHCSPRNG_STAND_IN` (the module ``torchcsprng``) into the environment at
    ``environment``."""
    site = _site_packages(environment)
    (site / "dpaudit_module_attribute_error.py").write_text(OPACUS_0X_ALIAS)
    (site / "dpaudit_module_attribute_error.pth").write_text("import dpaudit_module_attribute_error\n")
    (site / "torchcsprng.py").write_text(TORCHCSPRNG_STAND_IN)
