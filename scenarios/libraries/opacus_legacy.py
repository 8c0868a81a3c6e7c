"""The Opacus catalogue for releases before 1.0 (0.9 to 0.15): ``PrivacyEngine(module, ...).attach(optimizer)``.

Opacus 0.x attaches a ``PrivacyEngine`` to the user's optimizer and trains on the user's own data
loader.  Each ``optimizer.step()`` clips every per-sample gradient to C, sums the batch's, adds
σC·Z (Z ~ N(0, I)) and, with the default ``loss_reduction="mean"``, divides the noise by the size
b of the batch just seen (the gradient the loss's mean gives is already the sum over b):

    θ ← θ − lr · (Σ_{i ∈ batch} clip_C(g_i) + σC·Z) / b.

``get_privacy_spent(δ)`` states (ε, δ)-DP from the RDP of the Poisson-subsampled Gaussian at
q = ``sample_rate`` composed over the steps taken (``opacus.privacy_analysis``: Mironov, Talwar &
Zhang 2019), for one record added or removed.  The catalogue's claim is that statement, computed by
the release's own ``privacy_analysis`` at δ = 10⁻⁵; where it reads the dataset (the steps an epoch
take, q = batch/sample size), the larger of its values on D and D′.

The batches are what the releases told users to build:

- **shuffled** (0.9–0.11, the only way; 0.12 on keep it, warning that with ``batch_size`` and
  ``sample_size`` "The returned privacy budget will be incorrect"): ``DataLoader(batch_size=B,
  shuffle=True)``, every record in one batch an epoch, the last batch smaller when B does not divide
  n.  The accountant assumes Poisson sampling at q = B/n (meta-pytorch/opacus#128, released in
  0.12.0, which added Poisson batches).  A record added to n = kB records makes a (k+1)-th step of
  one record, whose noise the mean divides by 1 instead of B: the noise's scale says whether the
  record is there, whatever its gradient.  (0.11 warns of a smaller last batch that "the privacy
  analysis will be a bit more pessimistic".)  Chua et al. (2024) study the shuffling itself.
- **Poisson** (0.12 on): ``UniformWithReplacementSampler(len(data), q)`` as the batch sampler, the
  engine built with ``sample_rate=q`` (and ``poisson=True`` from 0.14, which divides by the
  expected batch size q·``sample_size`` instead of b: meta-pytorch/opacus#164).

The release is the model's parameters after each epoch.

References
----------
Mironov, Talwar & Zhang (2019), "Rényi differential privacy of the sampled Gaussian mechanism";
Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha & Zhang (2024), "How private are DP-SGD
implementations?", ICML; Yousefpour et al. (2021), "Opacus: user-friendly differential privacy
library in PyTorch", arXiv:2109.12298.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import warnings

import numpy as np

from mechanisms.adapters.released import LibraryRelease
from mechanisms.claims import ApproxDP, Relation

from .. import scenario as _scenario
from .catalogue import Case, Entry, Library, NotInRelease, point_label, require_library
from .registry import register_library

__all__ = ["LIBRARY", "train", "claimed_epsilon", "steps_per_epoch", "entries", "public_api", "rdp_orders", "GRID",
           "OPACUS_128", "known_warnings"]


def _require(module: str):
    return require_library(module, catalogue="opacus", install="dpaudit sweep opacus==VERSION (0.9-0.15)")


torch = _require("torch")
opacus = _require("opacus")
if importlib.util.find_spec("opacus.optimizers") is not None:
    # Opacus 1.0 on: scenarios.libraries.opacus is its catalogue (make_private, DPOptimizer).
    raise ModuleNotFoundError("scenarios.libraries.opacus_legacy is the catalogue of Opacus releases before 1.0; the "
                              "installed release has opacus.optimizers (use scenarios.libraries.opacus)",
                              name="opacus.privacy_analysis")
PrivacyEngine = opacus.PrivacyEngine
privacy_analysis = _require("opacus.privacy_analysis")

ADD_REMOVE = Relation.ADD_REMOVE
#: The δ of every claim.
DELTA = 1e-5
#: meta-pytorch/opacus#128 (released in 0.12.0).
OPACUS_128 = ("meta-pytorch/opacus#128 (0.9-0.11 trained on the user's shuffled batches of fixed size with an "
              "accountant for Poisson sampling; 0.12.0 added Poisson batches and warns that the shuffled "
              "construction's budget is incorrect)")


# -- release function (its source goes into reproduction scripts: names np, torch, PrivacyEngine) --------
def rdp_orders():
    """The RDP orders Opacus 0.x's examples pass to the engine (1.0 made them ``DEFAULT_ALPHAS``)."""
    return [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))


def known_warnings():
    """The warnings (``warnings.filterwarnings`` message patterns) every run of a 0.x release gives:
    its engine's "Secure RNG turned off"; the last, smaller shuffled batch (0.9-0.11); the batch and
    sample sizes that make the budget "incorrect" and the ``sample_rate`` that overrides them (0.12
    on); torch's deprecation of the non-full backward hooks 0.x computes per-sample gradients with
    (the clipped gradients they give are exact on a linear model, measured with σ = 0)."""
    return ("Secure RNG turned off", "PrivacyEngine expected a batch of size .* but the last step received",
            "The sample rate will be defined from", "A ``sample_rate`` has been provided",
            "Using a non-full backward hook")


def train(data, random_state, *, noise_multiplier, max_grad_norm, batch_size, epochs, sample_rate=0.0,
          loss_reduction="mean", lr=1.0):
    """``epochs`` epochs of DP-SGD by Opacus 0.x's ``PrivacyEngine`` attached to SGD on a linear model
    f(x) = w·x + b started at 0, loss −y·f(x) per row (gradient −y·(x, 1)) reduced by ``loss_reduction``;
    rows of ``data`` are (x, y).  ``sample_rate`` 0: the shuffled ``DataLoader(batch_size=batch_size,
    shuffle=True)`` (the last batch smaller); else Poisson batches of ``UniformWithReplacementSampler``
    (0.12 on; ``poisson=True`` where the engine takes it).  The release is (w, b) after each epoch."""
    # Two seeds: the batches' generator and torch's default one (the noise) must not share a stream.
    batch_seed, noise_seed = (int(v) for v in random_state.randint(2**31, size=2))
    generator = torch.Generator().manual_seed(batch_seed)
    x = torch.tensor(data[:, :-1], dtype=torch.float32)
    y = torch.tensor(data[:, -1], dtype=torch.float32)
    dataset = torch.utils.data.TensorDataset(x, y)
    model = torch.nn.Linear(x.shape[-1], 1)
    torch.nn.init.zeros_(model.weight)
    torch.nn.init.zeros_(model.bias)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    accepted = inspect.signature(PrivacyEngine.__init__).parameters
    if sample_rate:
        from opacus.utils.uniform_sampler import UniformWithReplacementSampler
        sampler = UniformWithReplacementSampler(num_samples=len(dataset), sample_rate=sample_rate, generator=generator)
        loader = torch.utils.data.DataLoader(dataset, batch_sampler=sampler)
        batches = {"sample_rate": sample_rate, "sample_size": len(dataset),
                   **({"poisson": True} if "poisson" in accepted else {})}
    else:
        loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size, shuffle=True, generator=generator)
        batches = {"batch_size": batch_size, "sample_size": len(dataset)}
    with warnings.catch_warnings():  # what every run of these releases says; any other warning is shown
        for message in known_warnings():
            warnings.filterwarnings("ignore", message=message)
        engine = PrivacyEngine(model, alphas=rdp_orders(), noise_multiplier=noise_multiplier,
                               max_grad_norm=max_grad_norm, loss_reduction=loss_reduction, **batches)
        engine.attach(optimizer)
        torch.manual_seed(noise_seed)  # the engine's noise comes from torch's default generator, seeded from os.urandom
        trajectory = []
        for _ in range(epochs):
            for xb, yb in loader:
                optimizer.zero_grad()
                loss = -(model(xb).squeeze(-1) * yb)
                (loss.mean() if loss_reduction == "mean" else loss.sum()).backward()
                optimizer.step()
            trajectory.append(torch.cat([p.detach().ravel() for p in model.parameters()]).numpy().copy())
    return np.concatenate(trajectory)


# -- claims -----------------------------------------------------------------------------------------------
def steps_per_epoch(rows: int, batch_size: int = 0, sample_rate: float = 0.0) -> int:
    """The steps an epoch takes: ⌈n/B⌉ shuffled batches (the last one smaller), or the
    ``int(1/q)`` Poisson batches ``UniformWithReplacementSampler`` yields."""
    return int(1 / sample_rate) if sample_rate else -(-rows // batch_size)


def claimed_epsilon(q: float, sigma: float, steps: int, delta: float = DELTA) -> float:
    """What the release's ``PrivacyEngine.get_privacy_spent(delta)`` states after ``steps`` steps:
    the release's own ``privacy_analysis.get_privacy_spent`` of ``compute_rdp(q, σ, steps)`` at
    :func:`rdp_orders`."""
    orders = rdp_orders()
    rdp = privacy_analysis.compute_rdp(q, sigma, steps, orders)
    return float(privacy_analysis.get_privacy_spent(orders, rdp, delta)[0])


# -- the entry --------------------------------------------------------------------------------------------
_TEXT = ("opacus.PrivacyEngine (0.x) docstring: 'The main component of Opacus is the PrivacyEngine ... "
         "privacy_engine.attach(optimizer)  # That's it! Now it's business as usual'; get_privacy_spent: "
         "'Computes the (epsilon, delta) privacy budget spent so far' from the RDP of the sampled Gaussian at "
         "sample_rate (batch_size / sample_size unless given). Claim: that (ε, δ = 1e-5), for one record added "
         "or removed")

#: The shuffled batches of 0.x's tutorials with the default mean loss (n = 8 = 2B: D′'s third step
#: holds one record), and with the sum; then Poisson batches (0.12 on) with the mean and with the sum.
#: The mean's leak does not depend on σ (each parameter's standard deviation is σ·√(2/16 + 1) on D′
#: against σ·√(2/16) on D, a ratio of 3), the claim does: σ = 4 (0.9-0.13 state ε = 1.13, 0.14-0.15
#: 0.90).  The sum's claim is false too (the added step widens the spread by √(3/2) an epoch:
#: benchmarks/opacus_added_step.py), which a default sweep does not refute (docs/libraries/opacus.md).
GRID = (
    {"noise_multiplier": 4.0, "max_grad_norm": 1.0, "rows": 8, "batch_size": 4, "epochs": 1},
    {"noise_multiplier": 2.0, "max_grad_norm": 1.0, "rows": 8, "batch_size": 4, "epochs": 2,
     "loss_reduction": "sum"},
    # 39 rows at q = 1/2: an empty Poisson batch (which 0.12-0.13 cannot collate, meta-pytorch/opacus#164)
    # has probability 2^-39 a step.
    {"noise_multiplier": 2.0, "max_grad_norm": 1.0, "rows": 39, "sample_rate": 0.5, "epochs": 1,
     "loss_reduction": "mean"},
    {"noise_multiplier": 2.0, "max_grad_norm": 1.0, "rows": 39, "sample_rate": 0.5, "epochs": 1,
     "loss_reduction": "sum"},
)


def _build(point):
    n, sigma, clip, epochs = point["rows"], point["noise_multiplier"], point["max_grad_norm"], point["epochs"]
    batch, rate = point.get("batch_size", 0), point.get("sample_rate", 0.0)
    if rate and not importlib.util.find_spec("opacus.utils.uniform_sampler"):
        raise NotInRelease("Poisson batches (opacus.utils.uniform_sampler.UniformWithReplacementSampler, 0.12 on)")
    if rate:
        reported = claimed_epsilon(rate, sigma, epochs * steps_per_epoch(n, sample_rate=rate))
    else:  # q = B/sample_size and the steps read the dataset: the larger statement of D and D′
        reported = max(claimed_epsilon(batch / m, sigma, epochs * steps_per_epoch(m, batch)) for m in (n, n + 1))
    claim = ApproxDP(reported, DELTA, ADD_REMOVE)
    params = {"noise_multiplier": sigma, "max_grad_norm": clip, "batch_size": batch, "epochs": epochs,
              "sample_rate": rate, "loss_reduction": point.get("loss_reduction", "mean")}
    base = np.tile([0.5, 0.0], (n, 1))  # y = 0: rows whose gradient is 0
    extra = [([0.0, clip], "add a row with gradient norm C (at the clip norm)")]
    scenario = _scenario.from_pairs([(base, np.vstack([base, row]), label) for row, label in extra], ADD_REMOVE)
    label = point_label(point)
    mechanism = LibraryRelease(train, params, f"opacus.PrivacyEngine.attach({label})", claim, 2 * epochs + 1,
                               deterministic=False)
    layout = tuple((f"{name} after epoch {e + 1}", None) for e in range(epochs) for name in ("w", "b"))
    shuffled_mean = not rate and params["loss_reduction"] == "mean"
    return Case("PrivacyEngine.attach", label, {**point, "opacus_epsilon": reported, "delta": DELTA}, mechanism, claim,
                scenario, train, params, "fit", statistic="coordinates", layout=layout,
                known=OPACUS_128 if shuffled_mean else "")


def entries() -> tuple[Entry, ...]:
    """The whole catalogue."""
    api = ("opacus.PrivacyEngine", "opacus.PerSampleGradientClipper", "opacus.privacy_analysis.compute_rdp",
           "opacus.privacy_analysis.get_privacy_spent", "opacus.utils.uniform_sampler.UniformWithReplacementSampler")
    return (Entry("PrivacyEngine.attach", api, "model", _TEXT, ADD_REMOVE, GRID, _build),)


def public_api() -> tuple[str, ...]:
    """The installed release's DP-relevant public names: ``opacus.__all__`` (without ``utils`` and
    ``__version__``), the functions of ``privacy_analysis``, the classes of ``utils.clipping`` and
    ``utils.uniform_sampler`` (0.12 on) and ``opacus.layers``'s exports."""
    names = [f"opacus.{n}" for n in opacus.__all__ if n not in ("utils", "__version__")]
    names += [f"opacus.privacy_analysis.{n}" for n in ("compute_rdp", "get_privacy_spent")]
    for module in ("utils.clipping", "utils.uniform_sampler", "layers"):
        try:
            package = importlib.import_module(f"opacus.{module}")
        except ImportError:
            continue
        names += [f"opacus.{module}.{n}" for n in dir(package) if not n.startswith("_") and isinstance(
            getattr(package, n), type) and getattr(getattr(package, n), "__module__", "").startswith("opacus.")]
    return tuple(sorted(set(names)))


_CLIPPER = ("covered through another entry: PrivacyEngine.attach (the engine's clipper; a list max_grad_norm "
            "selects per-layer clipping)")
_LAYER = "not DP: a layer whose per-sample gradients the engine can compute; privacy comes from the engine"
_EXCLUDED = {
    "opacus.utils.clipping.NormClipper": "not DP: the abstract base class of the clippers",
    "opacus.utils.clipping.ConstantFlatClipper": _CLIPPER,
    "opacus.utils.clipping.ConstantPerLayerClipper": _CLIPPER,
    "opacus.utils.clipping.ClippingMethod": "not DP: an enumeration of clipping methods",
    "opacus.utils.clipping.ParamClipper": "not DP: the abstract base class of per-parameter clippers",
    "opacus.utils.clipping.ParameterClipper": "not DP: the abstract base class of per-parameter clippers",
    "opacus.utils.clipping.AutoClipper": "not yet written: experimental adaptive clipping (its thresholds are "
                                         "set from the unnoised per-sample norms)",
    "opacus.utils.uniform_sampler.DistributedPoissonBatchSampler": "not yet written: needs a torch.distributed "
                                                                   "process group",
}
for _name in ("DPLSTM", "DPMultiheadAttention", "DPGRU", "DPRNN", "DPLSTMCell", "DPGRUCell", "DPRNNCell",
              "RenameParamsMixin", "ParamRenamedModule", "SequenceBias", "DifferentiallyPrivateDistributedDataParallel",
              "DPRNNBase", "DPRNNCellBase", "RNNLinear", "LSTMLinear"):
    _EXCLUDED[f"opacus.layers.{_name}"] = _LAYER

LIBRARY = register_library(Library(
    name="opacus", distribution="opacus", entries=entries, public_api=public_api, excluded=_EXCLUDED,
    script_header=("import inspect\nimport warnings\n\nimport numpy as np\nimport torch\nfrom opacus import "
                   "PrivacyEngine\n"),
    helpers=(rdp_orders, known_warnings), seeded=True))
