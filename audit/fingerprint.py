"""What determines an audit's draws, as a digest: the key a checkpoint is resumed under.

A checkpoint may only be resumed by the audit that wrote it: the same mechanism drawing the same
outputs, the same statistic, pairs, claim, seed and sample plan.  A mechanism's *name* says
nothing about its draws (edit a function and rerun: the name is unchanged), so
:func:`value_digest` digests what does determine them:

* a Python function: its code, recursively (bytecode, constants, nested code objects, the names
  it uses), its defaults and keyword defaults, the values in its closure, and the module-level
  globals it reads (a global function or class is digested as code, a global number, string,
  array or container as data, a module by name; for a module of your own the attributes the
  function may read from it, such as ``helpers.SCALE``, are digested too).  Only what the function
  reaches counts: the globals its instructions read (``LOAD_GLOBAL``), not every name it mentions,
  so another function of the same module, or one named like a method it calls (``rng.normal``
  beside a global ``normal``), is not part of its digest unless it calls it;
* a bound method: its function and its object; :func:`functools.partial`: its function and
  arguments;
* an object (a callable instance, a value in a closure): its class (the code of the class and its
  bases, unless they come from an installed library) and its state, as :mod:`pickle` would
  reduce it (``__reduce_ex__``), walked like any other value.  An object built from its
  constructor's arguments — a dataclass, a :class:`~mechanisms.parameters.FrozenParameters`
  reference mechanism — is digested through those arguments (the dataclass's ``init`` fields,
  the mechanism's parameters) and its class's code, which derives everything else from them; a
  cached property's stored value is left out for the same reason;
* numbers, strings, bytes, enums, NumPy arrays and scalars exactly; lists, tuples and dicts in
  order; sets and dict keys sorted by digest, so the digest does not depend on string hashing.

Code of an installed library (a module under the interpreter's ``stdlib`` or ``site-packages``)
is named, with the library's ``__version__``, rather than read: ``numpy.sum`` is "numpy.sum of
numpy 2.1".  Objects are still walked through their state, whoever defined their class.  Line
numbers and file names are left out, so moving a function within its file keeps the digest.

What cannot be digested (an object that refuses to be pickled and has no readable state, or one
too large to walk) is listed as *unverified*; the engine then refuses to resume a checkpoint
unless the user vouches that the mechanism is unchanged (``assume_unchanged=True``).
"""

from __future__ import annotations

import copyreg
import dataclasses
import dis
import enum
import functools
import hashlib
import os
import struct
import sys
import sysconfig
import threading
import types
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from mechanisms.parameters import FrozenParameters

__all__ = ["Digest", "value_digest", "reached_parts", "is_library_module"]

#: Values walked before a digest gives up (the rest is reported unverified).
MAX_NODES = 200_000
#: Names of a class's namespace that never change what its instances compute.
_CLASS_NOISE = frozenset({"__doc__", "__module__", "__qualname__", "__dict__", "__weakref__",
                          "__dataclass_fields__", "__dataclass_params__", "__match_args__",
                          "__annotations__", "__orig_bases__", "__parameters__", "__abstractmethods__",
                          "_abc_impl", "__firstlineno__", "__static_attributes__",
                          "__slotnames__"})  # copyreg caches __slotnames__ on a class once pickled
_LIBRARY_ROOTS = tuple(sorted({os.path.realpath(path) for key in ("stdlib", "platstdlib", "purelib", "platlib")
                               if (path := sysconfig.get_paths().get(key))}))


@dataclass(frozen=True)
class Digest:
    """A value's digest (hex SHA-256) and what in it could not be digested."""

    hexdigest: str
    unverified: tuple[str, ...] = ()


def value_digest(value: Any) -> Digest:
    """The digest of ``value`` as described in the module docstring."""
    walker = _Walker()
    try:
        walker.walk(value, "value")
    except RecursionError:
        walker.unverified.append("value: nested too deeply to digest")
        walker._emit("too-deep")
    return Digest(walker.hash.hexdigest(), tuple(dict.fromkeys(walker.unverified)))


def is_library_module(name: Optional[str]) -> bool:
    """Whether module ``name`` is part of the interpreter or an installed library (its code is then
    named, not read): built in, or with a file under the ``stdlib`` or ``site-packages`` paths."""
    if not name or name == "__main__":  # exec'd code, a script, a notebook: the user's
        return False
    top_name = name.partition(".")[0]
    if top_name in sys.builtin_module_names or top_name == "builtins":
        return True
    top = sys.modules.get(top_name)
    path = getattr(top, "__file__", None)
    if path is None:  # not imported, or a namespace package: read it
        return False
    path = os.path.realpath(path)
    return any(path.startswith(root + os.sep) for root in _LIBRARY_ROOTS)


def _library_version(module: Optional[str]) -> str:
    top = sys.modules.get((module or "").partition(".")[0])
    return str(getattr(top, "__version__", "")) if top is not None else ""


#: Instructions that read or write a module global, and those that read an attribute of an object.
_GLOBAL_OPS = frozenset({"LOAD_GLOBAL", "STORE_GLOBAL", "DELETE_GLOBAL", "LOAD_NAME", "STORE_NAME", "DELETE_NAME",
                         "LOAD_FROM_DICT_OR_GLOBALS"})
_ATTRIBUTE_OPS = frozenset({"LOAD_ATTR", "LOAD_METHOD", "STORE_ATTR", "DELETE_ATTR", "LOAD_SUPER_ATTR",
                            "IMPORT_FROM"})


def _code_names(code: types.CodeType) -> tuple[set[str], set[str]]:
    """The globals a code object and the code objects nested in it read (by their instructions, so
    ``rng.normal`` does not count as reading a global ``normal``), and the attribute names they read."""
    globals_read, attributes = set(), set()
    for instruction in dis.get_instructions(code):
        if instruction.opname in _GLOBAL_OPS:
            globals_read.add(instruction.argval)
        elif instruction.opname in _ATTRIBUTE_OPS:
            attributes.add(instruction.argval)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            nested_globals, nested_attributes = _code_names(const)
            globals_read |= nested_globals
            attributes |= nested_attributes
    return globals_read, attributes


class _Walker:
    """Feeds a canonical encoding of a value into one SHA-256 (see the module docstring)."""

    def __init__(self) -> None:
        self.hash = hashlib.sha256()
        self.unverified: list[str] = []
        self._seen: dict[int, int] = {}  # id -> order of first visit (cycles and shared objects)
        self._alive: list[Any] = []  # keeps visited objects alive so that ids stay unique
        self._nodes = 0

    # -- output --------------------------------------------------------------------------------
    def _emit(self, tag: str, payload: bytes = b"") -> None:
        self.hash.update(tag.encode() + b"\x00" + struct.pack("<Q", len(payload)) + payload)

    def _sub(self, value: Any, where: str) -> str:
        """The digest of ``value`` alone (for sorting members of sets and dict keys)."""
        sub = _Walker()
        sub._nodes = self._nodes
        sub.walk(value, where)
        self._nodes = sub._nodes
        self.unverified += sub.unverified
        return sub.hash.hexdigest()

    # -- walking -------------------------------------------------------------------------------
    def walk(self, value: Any, where: str) -> None:
        self._nodes += 1
        if self._nodes > MAX_NODES:
            if self._nodes == MAX_NODES + 1:
                self.unverified.append(f"{where}: more than {MAX_NODES:,} values to digest")
            self._emit("too-large")
            return
        if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
            self._emit(type(value).__name__, repr(value).encode() if not isinstance(value, bytes) else value)
            return
        if isinstance(value, enum.Enum):
            self._emit("enum", f"{type(value).__module__}.{type(value).__qualname__}.{value.name}".encode())
            return
        if isinstance(value, np.generic):
            self._emit("np-scalar", value.dtype.str.encode() + b"|" + value.tobytes())
            return
        if isinstance(value, (types.CodeType, types.ModuleType, range, slice)) or \
                value is Ellipsis or value is NotImplemented:
            self._leaf(value, where)
            return
        key = id(value)
        if key in self._seen:
            self._emit("ref", str(self._seen[key]).encode())
            return
        self._seen[key] = len(self._seen)
        self._alive.append(value)
        self._composite(value, where)

    def _leaf(self, value: Any, where: str) -> None:
        if isinstance(value, types.CodeType):
            self._code(value, where)
        elif isinstance(value, types.ModuleType):
            self._emit("module", f"{value.__name__} {_library_version(value.__name__)}".encode())
        else:
            self._emit("atom", repr(value).encode())

    def _composite(self, value: Any, where: str) -> None:
        if isinstance(value, np.ndarray):
            if value.dtype.hasobject:
                self._emit("object-array", str(value.shape).encode())
                for index, item in enumerate(value.ravel(order="C")):
                    self.walk(item, f"{where}[{index}]")
            else:
                array = np.ascontiguousarray(value)
                self._emit("array", f"{array.dtype.str}{array.shape}".encode() + b"|" + array.tobytes())
            return
        if isinstance(value, (list, tuple)):
            self._emit(type(value).__name__ if type(value) in (list, tuple) else "sequence", str(len(value)).encode())
            if type(value) not in (list, tuple):
                self._type(type(value), where)
            for index, item in enumerate(value):
                self.walk(item, f"{where}[{index}]")
            return
        if isinstance(value, (set, frozenset)):
            members = sorted(self._sub(item, f"{where} member") for item in value)
            self._emit("set", "".join(members).encode())
            return
        if isinstance(value, dict):
            self._mapping(value, where)
            return
        if isinstance(value, types.FunctionType):
            self._function(value, where)
            return
        if isinstance(value, types.MethodType):
            self._emit("method")
            self.walk(value.__func__, f"{where}.__func__")
            self.walk(value.__self__, f"{where}.__self__")
            return
        if isinstance(value, functools.partial):
            self._emit("partial")
            self.walk(value.func, f"{where}.func")
            self.walk(value.args, f"{where}.args")
            self.walk(value.keywords, f"{where}.keywords")
            return
        if isinstance(value, (staticmethod, classmethod)):
            self._emit(type(value).__name__)
            self.walk(value.__func__, f"{where}.__func__")
            return
        if isinstance(value, functools.cached_property):
            self._emit("cached_property")
            self.walk(value.func, f"{where}.func")
            return
        if isinstance(value, _LOCKS):  # synchronises, never changes what is computed
            self._emit("lock")
            return
        if isinstance(value, property):
            self._emit("property")
            for part in ("fget", "fset", "fdel"):
                self.walk(getattr(value, part), f"{where}.{part}")
            return
        if isinstance(value, type):
            self._type(value, where)
            return
        wrapped = getattr(value, "__wrapped__", None) if callable(value) else None
        if wrapped is not None and not isinstance(wrapped, type(value)):  # functools.lru_cache, wraps, ...
            self._emit("wrapper", f"{type(value).__module__}.{type(value).__qualname__}".encode())
            self.walk(wrapped, f"{where}.__wrapped__")
            return
        if isinstance(value, (types.BuiltinFunctionType, types.WrapperDescriptorType, types.MethodWrapperType,
                              types.MethodDescriptorType, types.ClassMethodDescriptorType, np.ufunc)):
            self._named(value, where)
            return
        self._object(value, where)

    def _mapping(self, value: dict, where: str) -> None:
        items = sorted((self._sub(k, f"{where} key"), k) for k in value) if not _str_keys(value) else \
            sorted((k, k) for k in value)
        self._emit("dict", str(len(items)).encode())
        for digest, key in items:
            self._emit("key", digest.encode())
            self.walk(value[key], f"{where}[{key!r}]")

    def _named(self, value: Any, where: str) -> None:
        """A built-in or library callable: its qualified name and its library's version."""
        module = getattr(value, "__module__", None) or type(value).__module__
        name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None) or type(value).__qualname__
        self._emit("named", f"{module}.{name} {_library_version(module)}".encode())
        owner = getattr(value, "__self__", None)  # a bound built-in method: its object matters
        if owner is not None and not isinstance(owner, (types.ModuleType, type)):
            self.walk(owner, f"{where}.__self__")

    def _function(self, function: types.FunctionType, where: str) -> None:
        if is_library_module(function.__module__):
            self._named(function, where)
            return
        self._function_own(function, where)
        reads = _reads(function)
        self._emit("globals", ",".join(label for label, _ in reads).encode())
        for label, value in reads:
            self.walk(value, f"{function.__qualname__}: {label}")

    def _function_own(self, function: types.FunctionType, where: str) -> None:
        """A function's own part: its name, code, defaults and closure (not the globals it reads)."""
        self._emit("function", f"{function.__module__}.{function.__qualname__}".encode())
        self._code(function.__code__, where)
        self.walk(function.__defaults__, f"{where} defaults")
        self.walk(function.__kwdefaults__, f"{where} keyword defaults")
        cells = []
        for name, cell in zip(function.__code__.co_freevars, function.__closure__ or ()):
            try:
                cells.append((name, cell.cell_contents))
            except ValueError:  # an empty cell (a name assigned later in the enclosing scope)
                cells.append((name, None))
        self.walk(tuple(value for _, value in cells), f"{where} closure")

    def _code(self, code: types.CodeType, where: str) -> None:
        self._emit("code", code.co_code)
        for attribute in ("co_argcount", "co_posonlyargcount", "co_kwonlyargcount", "co_flags", "co_nlocals"):
            self._emit(attribute, str(getattr(code, attribute)).encode())
        for attribute in ("co_names", "co_varnames", "co_freevars", "co_cellvars"):
            self._emit(attribute, ",".join(getattr(code, attribute)).encode())
        self._emit("co_exceptiontable", getattr(code, "co_exceptiontable", b""))
        self._emit("consts", str(len(code.co_consts)).encode())
        for const in code.co_consts:
            self.walk(const, f"{where} constant")

    def _type(self, cls: type, where: str) -> None:
        """A class: named if it comes from a library, else its code and that of its bases."""
        if is_library_module(cls.__module__):
            self._emit("library-type", f"{cls.__module__}.{cls.__qualname__} {_library_version(cls.__module__)}".encode())
            return
        self._emit("type", f"{cls.__module__}.{cls.__qualname__}".encode())
        for base in cls.__mro__[1:]:
            self._emit("base", f"{base.__module__}.{base.__qualname__}".encode())
        for klass in cls.__mro__:
            if klass is object or is_library_module(klass.__module__):
                continue
            members = sorted(name for name in vars(klass) if name not in _CLASS_NOISE)
            self._emit("namespace", ",".join(members).encode())
            for name in members:
                self.walk(vars(klass)[name], f"{klass.__qualname__}.{name}")

    def _object(self, value: Any, where: str, *, with_class: bool = True) -> None:
        """Any other object: its class (unless ``with_class`` is false), and its state as pickle
        would reduce it."""
        cls = type(value)
        if with_class:
            self._type(cls, where)
        if isinstance(value, FrozenParameters):  # built from its constructor's arguments
            self._emit("parameters")
            self.walk(value._params, f"{where} parameters")
            return
        if dataclasses.is_dataclass(value):
            fields = dataclasses.fields(value)
            self._emit("dataclass")
            for field in fields:  # fields set by __post_init__ are derived from these by the class's code
                if field.init:
                    self.walk(getattr(value, field.name, None), f"{where}.{field.name}")
            named, cached = {f.name for f in fields}, _cached_names(cls)
            extra = {k: v for k, v in getattr(value, "__dict__", {}).items() if k not in named and k not in cached}
            self._mapping(extra, where)
            return
        if hasattr(value, "__array__") and not isinstance(value, np.ndarray) and \
                not hasattr(value, "__dict__"):
            try:
                self.walk(np.asarray(value), where)
                return
            except Exception:  # noqa: BLE001 - fall back to pickling's view
                pass
        try:
            reduced = value.__reduce_ex__(4)
        except Exception as exc:  # noqa: BLE001 - anything unpicklable is reported, not guessed
            self.unverified.append(f"{where}: a {cls.__module__}.{cls.__qualname__} ({type(exc).__name__}: {exc})")
            self._emit("unverified", f"{cls.__module__}.{cls.__qualname__}".encode())
            return
        if isinstance(reduced, str):  # a global singleton, named
            self._emit("singleton", f"{cls.__module__}.{reduced}".encode())
            return
        self._emit("reduced", str(len(reduced)).encode())
        cached = _cached_names(cls)
        if cached and len(reduced) > 2 and isinstance(reduced[2], dict):  # values derived on demand
            reduced = reduced[:2] + ({k: v for k, v in reduced[2].items() if k not in cached},) + reduced[3:]
        constructor, arguments = reduced[0], reduced[1] if len(reduced) > 1 else ()
        if constructor is not copyreg.__newobj__ and constructor is not getattr(copyreg, "__newobj_ex__", None):
            self.walk(constructor, f"{where} constructor")
        self.walk(arguments, f"{where} arguments")
        for index, part in enumerate(reduced[2:], start=2):
            if index in (3, 4) and part is not None:  # list items, dict items: iterators
                part = list(part)
            self.walk(part, f"{where} state")


_LOCKS = (type(threading.Lock()), type(threading.RLock()))


def _reads(function: types.FunctionType) -> list[tuple[str, Any]]:
    """What a function reads outside itself, labelled, in a fixed order: each module global its code
    reads (``global SCALE``) and, for a module of the user's, each attribute it may read from it
    (``helpers.SCALE``)."""
    globals_read, attributes_read = _code_names(function.__code__)
    namespace = function.__globals__
    found: list[tuple[str, Any]] = []
    for name in sorted(name for name in globals_read if name in namespace):
        value = namespace[name]
        found.append((f"global {name}", value))
        if isinstance(value, types.ModuleType) and not is_library_module(value.__name__):
            found += [(f"{name}.{attribute}", getattr(value, attribute)) for attribute in sorted(attributes_read)
                      if hasattr(value, attribute) and not isinstance(getattr(value, attribute), types.ModuleType)]
    return found


def reached_parts(value: Any) -> dict[str, str]:
    """One digest per part of what ``value`` reaches, one level deep, so that a changed
    :func:`value_digest` can be traced to its part: a function's own code (bytecode, constants,
    defaults, closure) and each global it reads; an object's state and each member its own classes
    define (a method split like a function); a bound method, both.  Anything else is one part."""
    parts: dict[str, str] = {}

    def function(fn: types.FunctionType, prefix: str) -> None:
        name = prefix + fn.__qualname__
        if is_library_module(fn.__module__):
            parts[name] = value_digest(fn).hexdigest
            return
        walker = _Walker()
        walker._function_own(fn, name)
        parts[f"{name}'s code"] = walker.hash.hexdigest()
        for label, read in _reads(fn):
            parts[f"{name}: {label}"] = value_digest(read).hexdigest

    def member(item: Any, name: str) -> None:
        inner = getattr(item, "__func__", None) if isinstance(item, (staticmethod, classmethod)) else item
        if isinstance(inner, types.FunctionType):
            function(inner, "")
        elif isinstance(item, property) and isinstance(item.fget, types.FunctionType):
            function(item.fget, "")
        else:
            parts[name] = value_digest(item).hexdigest

    if isinstance(value, types.MethodType):
        if isinstance(value.__func__, types.FunctionType):
            function(value.__func__, "")
        value = value.__self__
    if isinstance(value, types.FunctionType):
        function(value, "")
        return parts
    if isinstance(value, (type, types.ModuleType)) or not hasattr(value, "__dict__") and not dataclasses.is_dataclass(value):
        parts.setdefault("value", value_digest(value).hexdigest)
        return parts
    cls = type(value)
    state = _Walker()
    state._object(value, "state", with_class=False)  # the class's members are split below
    parts["state"] = state.hash.hexdigest()
    for klass in cls.__mro__:
        if klass is object or is_library_module(klass.__module__):
            continue
        for name in sorted(name for name in vars(klass) if name not in _CLASS_NOISE):
            member(vars(klass)[name], f"{klass.__qualname__}.{name}")
    return parts


def _cached_names(cls: type) -> frozenset:
    """Names of ``cls``'s cached properties: their values, stored in an instance once read, are
    derived from the rest of its state and are left out of its digest."""
    return frozenset(name for klass in cls.__mro__ for name, member in vars(klass).items()
                     if isinstance(member, functools.cached_property))


def _str_keys(mapping: dict) -> bool:
    return all(type(key) is str for key in mapping)
