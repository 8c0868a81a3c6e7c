"""What an opendp-smartnoise 0.1.2+ release needs in its environment to draw its SQL noise here.

From 0.1.2, ``opendp.smartnoise.sql``'s Gaussian mechanism calls the native library of
opendp-smartnoise-core (0.2.0-0.2.3, the releases that ship it) through ctypes:
``lib.gaussian_mechanism(value, epsilon, delta, sensitivity, False, enforce_constant_time)``, six
arguments, while ``core/api.py`` declares five ``argtypes``.  ctypes passes the sixth, a
``c_bool``, as a variadic argument; libffi 3.4 (on this machine) refuses a variadic argument of a
type C would promote, and every noisy query raises ``RuntimeError: ffi_prep_cif_var failed``
(measured on Python 3.7-3.11 here; libffi 3.3, current when these releases shipped, accepted it).

:func:`declare_gaussian_arguments` adds the sixth ``c_bool`` to the declaration in the
environment's copy of ``api.py``.  The call is then the one the release makes, with the same six
values, to the same native function: on x86-64 a ``bool`` argument and a promoted ``int`` are the
same register, so the machine-level call is unchanged.  Nothing else in the library is touched.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["DECLARED", "FIXED", "declare_gaussian_arguments"]

#: The declaration in opendp-smartnoise-core 0.2.0-0.2.3's ``api.py`` (five arguments).
DECLARED = ("self.lib_smartnoise.gaussian_mechanism.argtypes = [\n"
            "                ctypes.c_double, ctypes.c_double, ctypes.c_double, ctypes.c_double, ctypes.c_bool\n"
            "            ]")
#: The same with the sixth argument the call passes.
FIXED = ("self.lib_smartnoise.gaussian_mechanism.argtypes = [\n"
         "                ctypes.c_double, ctypes.c_double, ctypes.c_double, ctypes.c_double, ctypes.c_bool,\n"
         "                ctypes.c_bool  # dpaudit: the sixth argument the call passes (audit/sweep/smartnoise_core_ffi.py)\n"
         "            ]")


def declare_gaussian_arguments(environment: Path) -> None:
    """Declare the six arguments of ``gaussian_mechanism`` in the environment's opendp-smartnoise-core.

    Raises
    ------
    RuntimeError
        If the environment has no ``opendp/smartnoise/core/api.py`` or its declaration is not the
        one of 0.2.0-0.2.3 (another release of the core: nothing is changed).
    """
    found = sorted(Path(environment).glob("lib/python*/site-packages/opendp/smartnoise/core/api.py"))
    if not found:
        raise RuntimeError(f"no opendp-smartnoise-core in {environment}: its Gaussian mechanism cannot be declared")
    text = found[0].read_text()
    if FIXED in text:
        return
    if text.count(DECLARED) != 1:
        raise RuntimeError(f"{found[0]}: the declaration of gaussian_mechanism is not the one of "
                           "opendp-smartnoise-core 0.2.0-0.2.3; left as it is")
    found[0].write_text(text.replace(DECLARED, FIXED))
    for cached in found[0].parent.glob("__pycache__/api.*.pyc"):
        cached.unlink()
