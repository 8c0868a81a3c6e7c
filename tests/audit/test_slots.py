"""Slots (audit/slots.py): keys exactly as reports have always written them, a parser that
inverts them, labels for people, and what each claim kind allows."""

from __future__ import annotations

import math

import numpy as np
import pytest

from audit.report import JointViolation, Violation
from audit.selection import DELTA_GRID
from audit.slots import MU, TRADEOFF, Quantity, Slot, curve_slots, headline_slots, states_mu
from mechanisms.claims import ZCDP, ApproxDP, GaussianDP, ProfileClaim, PureDP, RenyiDP

CLAIMS = {
    "approx": ApproxDP(1.0, 1e-5),
    "pure": PureDP(0.7),
    "gdp": GaussianDP(0.5),
    "zcdp": ZCDP(0.3),
    "renyi": RenyiDP((2.0, 8.0), (0.4, 1.1), reference_delta=1e-6),
    "profile": ProfileClaim.from_table([0.0, 0.5, 2.0], [0.2, 1e-3, 1e-7]),
    # A profile that never reaches its reference δ: ε = ∞ there, and the δ slot sits at ε = ∞.
    "profile-inf": ProfileClaim.from_table([0.0, 1.0], [0.5, 0.1], reference_delta=1e-5),
}


def _every_slot(claim) -> tuple[Slot, ...]:
    return headline_slots(claim) + curve_slots(claim, DELTA_GRID) + (TRADEOFF,)


# --- the keys reports have always written (frozen copies of the old formulas) ---------------

def _old_headline_keys(claim) -> tuple[str, ...]:
    if hasattr(claim, "mu"):
        return ("mu",)
    return (f"epsilon@{float(claim.reference_delta)!r}", f"delta@{float(claim.epsilon)!r}", "mu")


def _old_curve_keys(claim) -> list[str]:
    return [f"epsilon@{float(d)!r}" for d in DELTA_GRID] + [f"delta@{float(claim.epsilon)!r}", "mu"]


def _old_claimed_value(slot: str, claim):
    kind, _, value = slot.partition("@")
    if kind == "epsilon":
        return float(claim.epsilon_at(float(value)))
    if kind == "delta":
        return float(np.asarray(claim.delta_at(float(value))))
    return float(claim.mu) if hasattr(claim, "mu") else None


@pytest.mark.parametrize("name", CLAIMS)
def test_keys_are_the_strings_reports_always_wrote(name):
    claim = CLAIMS[name]
    assert tuple(slot.key for slot in headline_slots(claim)) == _old_headline_keys(claim)
    assert [slot.key for slot in curve_slots(claim, DELTA_GRID)] == _old_curve_keys(claim)
    assert TRADEOFF.key == "tradeoff"


@pytest.mark.parametrize("name", CLAIMS)
def test_every_key_round_trips(name):
    for slot in _every_slot(CLAIMS[name]):
        parsed = Slot.parse(slot.key)
        assert parsed == slot and hash(parsed) == hash(slot) and parsed.key == slot.key
        assert str(slot) == slot.key


@pytest.mark.parametrize("name", CLAIMS)
def test_the_claims_allowed_value_is_the_old_claimed_value(name):
    claim = CLAIMS[name]
    for slot in headline_slots(claim) + curve_slots(claim, DELTA_GRID):
        old = _old_claimed_value(slot.key, claim)
        new = slot.allowed_by(claim)
        assert (new is None and old is None) or new == old or (math.isnan(new) and math.isnan(old)), slot.key
    assert TRADEOFF.allowed_by(claim) is None  # the band is compared with the whole claimed curve


@pytest.mark.parametrize("name", CLAIMS)
def test_only_a_gdp_claim_states_a_mu(name):
    claim = CLAIMS[name]
    gdp = isinstance(claim, GaussianDP)
    assert states_mu(claim) is gdp
    assert (MU.allowed_by(claim) == claim.mu) if gdp else MU.allowed_by(claim) is None
    assert headline_slots(claim) == ((MU,) if gdp else (Slot.epsilon_at(claim.reference_delta),
                                                       Slot.delta_at(claim.epsilon), MU))


def test_examples_of_keys():
    assert Slot.epsilon_at(1e-5).key == "epsilon@1e-05"
    assert headline_slots(PureDP(1.0))[0].key == "epsilon@0.0"
    assert Slot.delta_at(0.5).key == "delta@0.5"
    assert Slot.delta_at(math.inf).key == "delta@inf" and Slot.parse("delta@inf") == Slot.delta_at(math.inf)
    assert MU.key == "mu" and Slot.parse("mu") is not MU and Slot.parse("mu") == MU


def test_labels_are_rounded_for_people():
    assert Slot.epsilon_at(1e-5).label == "ε at δ = 1e-05"
    assert Slot.delta_at(0.08970123456789).label == "δ at ε = 0.0897"
    assert Slot.epsilon_at(float(DELTA_GRID[7])).label == f"ε at δ = {DELTA_GRID[7]:.4g}"
    assert MU.label == "μ"
    assert TRADEOFF.label == "trade-off band"


def test_numbers_are_normalised_so_equal_slots_have_equal_keys():
    slot = Slot.epsilon_at(np.float64(1e-5))
    assert type(slot.at) is float and slot == Slot.epsilon_at(1e-5) and slot.key == "epsilon@1e-05"
    assert Slot.epsilon_at(-0.0).key == "epsilon@0.0" == Slot.epsilon_at(0).key
    assert len({Slot.epsilon_at(1e-5), Slot.parse("epsilon@1e-05"), Slot.delta_at(1e-5)}) == 2


def test_violations_serialise_the_key_and_say_the_label():
    joint = JointViolation("pair 0", Slot.delta_at(0.08970123456789), 0.25, 0.01, 900, 20, 1000)
    assert joint.to_dict()["slot"] == "delta@0.08970123456789"
    # The old message, frozen: the quantity's symbol and its point at 4 significant digits.
    assert joint.message == ("pair 'pair 0': one event (900 vs 20 of 1,000 draws) certifies "
                             "δ at ε = 0.0897 ≥ 0.25, but the claim allows at most 0.01")
    assert JointViolation("p", MU, 1.5, 1.0, 9, 1, 10).message.split("certifies ")[1].startswith("μ ≥ 1.5")
    point = Violation("pair 0", TRADEOFF, 0.01, 0.2, 0.5)
    assert point.to_dict()["slot"] == "tradeoff" and "(a point of the trade-off band)" in point.message
    curve = Violation("pair 0", Slot.epsilon_at(1.7729297948083514e-10), 0.01, 0.2, 0.5)
    assert "(chosen for ε at δ = 1.773e-10)" in curve.message and "epsilon@" not in curve.message


@pytest.mark.parametrize("key", ["kappa", "epsilon", "epsilon@", "epsilon@x", "mu@1.0", "tradeoff@0.1",
                                 "epsilon@nan", "epsilon@2.0", "delta@-1.0", "Epsilon@0.1", ""])
def test_a_bad_key_is_named_and_echoed(key):
    with pytest.raises(ValueError, match=f"`key` must be .*, got {key!r}"):
        Slot.parse(key)


@pytest.mark.parametrize("arguments, error, message", [
    ((Quantity.EPSILON,), TypeError, "`at` must be a number for the epsilon slot, got None"),
    ((Quantity.DELTA, True), TypeError, "`at` must be a number for the delta slot, got True"),
    ((Quantity.EPSILON, 1.5), ValueError, r"`at` must be a δ in \[0, 1\] for the epsilon slot, got 1.5"),
    ((Quantity.DELTA, -1.0), ValueError, "`at` must be an ε >= 0 for the delta slot, got -1.0"),
    ((Quantity.DELTA, math.nan), ValueError, "`at` must be an ε >= 0 for the delta slot, got nan"),
    ((Quantity.MU, 1.0), ValueError, "`at` must be None for the mu slot, got 1.0"),
    (("epsilon", 0.1), TypeError, "`quantity` must be an audit.slots.Quantity, got 'epsilon'"),
])
def test_a_bad_slot_is_named_and_echoed(arguments, error, message):
    with pytest.raises(error, match=message):
        Slot(*arguments)
    with pytest.raises(TypeError, match="`key` must be a slot key string, got 1.0"):
        Slot.parse(1.0)


def test_slots_are_frozen():
    with pytest.raises(AttributeError):
        MU.at = 1.0  # type: ignore[misc]
