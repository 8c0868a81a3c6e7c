"""Opacus releases before 1.0 (0.9-0.15): their environment, the choice of their catalogue, and the
catalogue on a fake of the 0.x ``PrivacyEngine`` built on the installed torch.

CI installs none of these releases.  The fake (:func:`_install`) attaches to an optimizer as 0.x does:
each ``step()`` adds σC·Z to the gradients, divided by the size of the batch just seen with
``loss_reduction="mean"`` (``divisor="realized"``, every 0.x release on shuffled batches) or by the
expected batch size q·``sample_size`` (``"expected"``, 0.14's Poisson path).  It does not clip: every
row of the catalogue's pairs has gradient norm at most C, where clipping is the identity.  Its
accountant is the RDP of the subsampled Gaussian of Opacus 1.x (``opacus.accountants.analysis.rdp``,
the same functions as 0.x's ``opacus.privacy_analysis``), and ``style`` chooses the API: "0.11"
(batch_size and sample_size only) or "0.14" (``sample_rate``, ``poisson`` and
``opacus.utils.uniform_sampler``).  The audits of the real releases are in
``benchmarks/sweep_versions.py``.
"""

from __future__ import annotations

import functools
import importlib
import importlib.machinery
import sys
import types
import warnings

import numpy as np
import pytest

from audit.sweep import releases
from audit.sweep.plan import plan_rows
from audit.sweep.rows import audit_row
from audit.sweep.torch_stand_ins import write_opacus_0x_shims
from fake_modules import cases_and_absent, forget

torch = pytest.importorskip("torch")
rdp_analysis = pytest.importorskip("opacus.accountants.analysis.rdp")
uniform_sampler = pytest.importorskip("opacus.utils.uniform_sampler")


def _module(name: str, package: bool = False, **attrs) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=package)
    if package:
        module.__path__ = []
    module.__dict__.update(attrs)
    return module


def _fake(style: str, divisor: str) -> dict:
    """The modules of a fake Opacus 0.x."""

    class PrivacyEngine:
        def __init__(self, module, *, batch_size=None, sample_size=None, alphas, noise_multiplier, max_grad_norm,
                     loss_reduction="mean", **options):
            if set(options) - ({"sample_rate", "poisson"} if style == "0.14" else set()):
                raise TypeError(f"unexpected keyword arguments {sorted(options)}")
            self.module, self.sigma, self.clip, self.reduction = module, noise_multiplier, max_grad_norm, loss_reduction
            self.alphas = alphas
            self.sample_rate = options.get("sample_rate") or batch_size / sample_size
            self.expected = self.sample_rate * sample_size
            self.steps, self.seen = 0, 0
            torch.manual_seed(int.from_bytes(np.random.bytes(4), "big"))  # as 0.x: seeded from the OS

        def attach(self, optimizer):
            self.module.register_forward_pre_hook(lambda module, inputs: setattr(self, "seen", len(inputs[0])))
            step = optimizer.step

            def private_step(*args, **kwargs):
                self.steps += 1
                for p in self.module.parameters():
                    noise = torch.normal(0.0, self.sigma * self.clip, p.grad.shape)
                    if self.reduction == "mean":
                        noise /= self.seen if divisor == "realized" else self.expected
                    p.grad += noise
                return step(*args, **kwargs)

            optimizer.step = private_step

        def get_privacy_spent(self, target_delta):  # as 0.x: the RDP of one step at sample_rate, times the steps
            rdp = compute_rdp(self.sample_rate, self.sigma, 1, self.alphas) * self.steps
            return get_privacy_spent(self.alphas, rdp, target_delta)

    def compute_rdp(q, noise_multiplier, steps, orders):  # 0.x's positional signature; 1.x's are keywords
        return rdp_analysis.compute_rdp(q=q, noise_multiplier=noise_multiplier, steps=steps, orders=orders)

    def get_privacy_spent(orders, rdp, delta):
        return rdp_analysis.get_privacy_spent(orders=orders, rdp=rdp, delta=delta)

    analysis = _module("opacus.privacy_analysis", compute_rdp=compute_rdp, get_privacy_spent=get_privacy_spent)
    modules = {"opacus": _module("opacus", True, PrivacyEngine=PrivacyEngine, PerSampleGradientClipper=object,
                                 privacy_analysis=analysis, __all__=["PrivacyEngine", "PerSampleGradientClipper",
                                                                     "utils"]),
               "opacus.privacy_analysis": analysis, "opacus.utils": _module("opacus.utils", True)}
    if style == "0.14":
        modules["opacus.utils.uniform_sampler"] = _module(
            "opacus.utils.uniform_sampler", UniformWithReplacementSampler=uniform_sampler.UniformWithReplacementSampler)
    return modules


def _install(monkeypatch, style: str = "0.14", divisor: str = "realized"):
    """The fake in ``sys.modules`` (every real ``opacus`` module forgotten), and the legacy catalogue
    built on it afresh."""
    from scenarios.libraries import registry

    for name in [n for n in sys.modules if n == "opacus" or n.startswith("opacus.")]:
        forget(monkeypatch, sys.modules, name)
    for name, module in _fake(style, divisor).items():
        monkeypatch.setitem(sys.modules, name, module)
    forget(monkeypatch, sys.modules, "scenarios.libraries.opacus_legacy")
    forget(monkeypatch, sys.modules, "scenarios.libraries.opacus")
    forget(monkeypatch, registry._REGISTRY, "opacus")
    return importlib.import_module("scenarios.libraries.opacus_legacy")


@pytest.mark.parametrize("style", ["0.11", "0.14"])
def test_every_case_releases_on_the_fake_with_its_declared_width(monkeypatch, style):
    catalogue = _install(monkeypatch, style)
    cases, absent = cases_and_absent(catalogue.entries())
    # Poisson batches (opacus.utils.uniform_sampler) came in 0.12: those points only are absent from 0.11
    assert len(absent) == (2 if style == "0.11" else 0) and all("Poisson" in reason for _, reason in absent)
    assert len(cases) == len(catalogue.GRID) - len(absent)
    for case in cases:
        for pair in case.scenario.pairs:
            out = case.mechanism(pair.neighbor, 2, np.random.default_rng(0))
            assert out.shape == (2, case.mechanism.output_dim) and not out[:, -1].any(), case.key
    coverage = catalogue.LIBRARY.coverage(catalogue.entries())
    assert coverage.unaccounted == () and coverage.fraction >= 0.9


def test_the_claim_is_the_larger_statement_of_the_two_datasets(monkeypatch):
    catalogue = _install(monkeypatch, "0.11")
    case = catalogue.entries()[0].build(catalogue.GRID[0])  # n = 8, B = 4: 2 steps at q = 1/2; D′: 3 at 4/9
    on_d = catalogue.claimed_epsilon(0.5, 4.0, 2)
    on_neighbour = catalogue.claimed_epsilon(4 / 9, 4.0, 3)
    assert case.claim.epsilon == max(on_d, on_neighbour) == on_neighbour and case.claim.delta == 1e-5
    assert case.known == catalogue.OPACUS_128
    # A second route: dp-accounting's RDP of the same composed subsampled Gaussian at the same orders,
    # converted by its own code (the fake's privacy_analysis is Opacus 1.x's).  The best order here is
    # α = 17, an integer, where both compute the exact binomial series, so they agree to rounding; at
    # fractional orders dp-accounting sums absolute values, an upper bound, and cannot win.
    dp_accounting = pytest.importorskip("dp_accounting")
    accountant = dp_accounting.rdp.RdpAccountant(catalogue.rdp_orders())
    accountant.compose(dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(4 / 9, dp_accounting.GaussianDpEvent(4.0)), 3))
    eps, order = accountant.get_epsilon_and_optimal_order(1e-5)
    assert order == 17 and on_neighbour == pytest.approx(eps, rel=1e-9)


@pytest.mark.parametrize("style", ["0.11", "0.14"])
def test_the_claim_is_what_the_engine_states_after_training_on_either_dataset(monkeypatch, style):
    """The claim is the larger of what the engine's ``get_privacy_spent(1e-5)`` states after a
    release on D and on D′: the steps it counted (the loader's batches: ⌈n/B⌉ shuffled, int(1/q)
    Poisson, an epoch) at its sample rate (B/n, B/(n + 1); q)."""
    catalogue = _install(monkeypatch, style)
    engines = []
    init = catalogue.PrivacyEngine.__init__

    @functools.wraps(init)
    def recording_init(self, *args, **kwargs):
        init(self, *args, **kwargs)
        engines.append(self)

    monkeypatch.setattr(catalogue.PrivacyEngine, "__init__", recording_init)
    cases, _ = cases_and_absent(catalogue.entries())
    assert len(cases) == (2 if style == "0.11" else 4)
    for case in cases:
        stated = []
        for data in (case.scenario.pairs[0].base, case.scenario.pairs[0].neighbor):
            case.release(data, np.random.RandomState(0), **case.release_params)
            stated.append(float(engines[-1].get_privacy_spent(1e-5)[0]))
        assert case.claim.epsilon == pytest.approx(max(stated), rel=1e-12), (case.key, stated)


def test_a_release_is_seeded_by_its_random_state(monkeypatch):
    catalogue = _install(monkeypatch, "0.11")
    case = catalogue.entries()[0].build(catalogue.GRID[0])
    data = case.scenario.pairs[0].neighbor
    first = case.release(data, np.random.RandomState(5), **case.release_params)
    assert np.array_equal(first, case.release(data, np.random.RandomState(5), **case.release_params))
    assert not np.array_equal(first, case.release(data, np.random.RandomState(6), **case.release_params))


def test_a_release_silences_only_the_warnings_every_0x_run_gives(monkeypatch):
    """The engine's "Secure RNG turned off" and the last, smaller batch's warning (as 0.11 words
    them) are what every run says and are silenced; any other warning reaches the caller."""
    catalogue = _install(monkeypatch, "0.11")
    case = catalogue.entries()[0].build(catalogue.GRID[0])
    init = catalogue.PrivacyEngine.__init__

    @functools.wraps(init)
    def warning_init(self, *args, **kwargs):
        warnings.warn("Secure RNG turned off. This is perfectly fine for experimentation as it allows for much "
                      "faster training performance")
        warnings.warn("PrivacyEngine expected a batch of size 4 but the last step received a batch of size 1. "
                      "This means that the privacy analysis will be a bit more pessimistic.")
        warnings.warn("a warning no 0.x release gives", RuntimeWarning)
        init(self, *args, **kwargs)

    monkeypatch.setattr(catalogue.PrivacyEngine, "__init__", warning_init)
    with pytest.warns(RuntimeWarning, match="no 0.x release") as caught:
        case.release(case.scenario.pairs[0].neighbor, np.random.RandomState(0), **case.release_params)
    assert [str(w.message) for w in caught] == ["a warning no 0.x release gives"]


@pytest.mark.statistical
def test_the_realized_batch_divisor_is_refuted_on_shuffled_batches(monkeypatch, tmp_path):
    """The fake divides the last, one-record batch's noise by 1 instead of B = 4: each parameter's
    standard deviation is σ·√(2/16 + 1) on D′ against σ·√(2/16) on D, a ratio of 3 whatever σ.  At
    σ = 4 the claim is 0.90 here (the fake's accountant is 1.x's conversion).  The default budget
    (1,500 fits a side) refuted it at sweep seeds 2026, 1, 2 and 3 with ε ≥ 1.53 to 2.15; the small
    one (300) missed at seed 2026 (ε ≥ 0.87), too weak a test.  Seeded: the verdict is fixed."""
    catalogue = _install(monkeypatch, "0.11", "realized")
    case = catalogue.entries()[0].build(catalogue.GRID[0])
    assert case.release_params["noise_multiplier"] == 4.0
    row, = plan_rows((case,), library="opacus", budget="default", confidence=0.95, seed=2026)
    record = audit_row(row, library="opacus", version=None, out=tmp_path, checkpoints=False)
    assert record.get("status") != "error", record.get("error")
    assert record["verdict"] == "VIOLATED" and record["epsilon_lb"] > case.claim.epsilon, record


@pytest.mark.statistical
def test_poisson_batches_with_the_sum_are_not_refuted(monkeypatch, tmp_path):
    """Poisson batches and the summed loss: the subsampled Gaussian the RDP accountant accounts for,
    so the claim holds and the audit refutes it with probability at most 1 − 0.95 (seeded)."""
    catalogue = _install(monkeypatch, "0.14", "expected")
    case = catalogue.entries()[0].build(catalogue.GRID[3])
    assert case.release_params["sample_rate"] == 0.5 and case.release_params["loss_reduction"] == "sum"
    row, = plan_rows((case,), library="opacus", budget="small", confidence=0.95, seed=2026)
    record = audit_row(row, library="opacus", version=None, out=tmp_path, checkpoints=False)
    assert record.get("status") != "error" and record["verdict"] == "NOT_REFUTED", record


def test_the_registry_chooses_the_catalogue_for_releases_before_1_0(monkeypatch):
    from scenarios.libraries import registry

    assert registry._older_release("opacus") is None  # Opacus 1.x is installed here
    _install(monkeypatch, "0.11")
    assert registry._older_release("opacus") == "scenarios.libraries.opacus_legacy"
    lib = registry.library("opacus")
    assert lib.name == "opacus" and [e.name for e in lib.entries()] == ["PrivacyEngine.attach"]


def test_releases_before_1_0_install_without_requirements_and_with_the_shims(tmp_path):
    old = releases.release_environment("opacus", "0.11.0")
    assert old.no_deps and old.system_site and old.setup is write_opacus_0x_shims
    new = releases.release_environment("opacus", "1.5.2")
    assert not new.no_deps and new.setup is None
    site = tmp_path / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    write_opacus_0x_shims(tmp_path)
    assert (site / "dpaudit_module_attribute_error.pth").read_text().strip() == "import dpaudit_module_attribute_error"
    stand_in = {}
    exec(compile((site / "torchcsprng.py").read_text(), "torchcsprng.py", "exec"), stand_in)
    with pytest.raises(RuntimeError, match="secure_rng"):
        stand_in["create_random_device_generator"]("/dev/urandom")


def test_the_alias_hook_adds_module_attribute_error_once_torch_loads_the_module(tmp_path):
    """Run in a fresh interpreter: the hook (as the .pth runs it) must leave the real module loaded,
    with the alias, and then stand aside."""
    import subprocess

    site = tmp_path / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    write_opacus_0x_shims(tmp_path)
    code = (f"import sys; sys.path.insert(0, {str(site)!r}); import dpaudit_module_attribute_error; "
            "from torch.nn.modules.module import ModuleAttributeError, Module; "
            "assert ModuleAttributeError is AttributeError and Module.__module__ == 'torch.nn.modules.module'; "
            "assert not any(type(f).__name__ == '_AliasAfterLoad' for f in sys.meta_path); print('ok')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
