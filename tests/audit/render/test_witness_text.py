"""The witness in words (audit/render/witness.py): wide rows, which side an ε comes from, the
statistic's notes explained.

Rendering only, from hand-made report dicts: no draws, so nothing here rests on a tolerance.
"""

from __future__ import annotations

import numpy as np

from audit.render.witness import pair_data_lines, statistic_lines, witness_lines
from audit.sweep.rows import witness_summary

LABEL = "replace row 7"


def _report(pair: dict, statistic: dict | None = None) -> dict:
    return {"scenario": {"pairs": [dict(pair, label=LABEL)]}, "pairs": [{"label": LABEL}],
            "statistic": statistic or {}}


def test_rows_too_wide_to_show_are_described_not_called_a_row():
    row = np.round(np.linspace(0.0, 1.0, 100), 2)
    other = row.copy()
    other[[3, 50, 97]] = [0.9, 0.1, 0.0]
    pair = {"base_shape": [40, 100], "neighbor_shape": [40, 100], "removed": [row.tolist()], "added": [other.tolist()]}
    text = "\n".join(pair_data_lines(_report(pair), LABEL))
    assert "a row" not in text.replace("a row of", "")  # never "the row a row replaced by a row"
    assert ("D′ is D with a row of 100 values [0, 0.01, 0.02, 0.03, …] replaced by a row of 100 values "
            "[0, 0.01, 0.02, 0.9, …], which differs from it in 3 of 100 coordinates (3, 50, 97; counting from 0)") in text
    ones = {"base_shape": [40, 100], "neighbor_shape": [40, 100], "removed": [[1.0] * 100], "added": [[0.0] * 100]}
    assert ("D′ is D with a row of 100 values (all 1) replaced by a row of 100 values (all 0), which differs from it "
            "in 100 of 100 coordinates") in "\n".join(pair_data_lines(_report(ones), LABEL))
    added = {"base_shape": [40, 100], "neighbor_shape": [41, 100], "removed": [], "added": [row.tolist()]}
    text = "\n".join(pair_data_lines(_report(added), LABEL))
    assert "D′ is D plus a row of 100 values [0, 0.01, 0.02, 0.03, …]" in text
    removed = {"base_shape": [41, 100], "neighbor_shape": [40, 100], "removed": [row.tolist()], "added": []}
    text = "\n".join(pair_data_lines(_report(removed), LABEL))
    assert "D′ is D minus a row of 100 values [0, 0.01, 0.02, 0.03, …]" in text
    small = {"base_shape": [2, 1], "neighbor_shape": [2, 1], "removed": [[1.0]], "added": [[2.0]]}
    assert "D′ is D with the row [1] replaced by [2]" in "\n".join(pair_data_lines(_report(small), LABEL))
    narrow = {"base_shape": [2, 4], "neighbor_shape": [3, 4], "removed": [], "added": [[1.0, 1.0, 0.0, 1.0]]}
    assert "D′ is D plus the row [1, 1, 0, 1]" in "\n".join(pair_data_lines(_report(narrow), LABEL))


def test_the_statistic_notes_say_what_usage_columns_groups_blocks_and_patterns_are():
    entry = {"kind": "flag-value", "columns": [0, 2], "groups": [3, 5], "blocks": [[0, 1], [2]], "patterns": [4, 2],
             "auto_choice": "flag-value",
             "auto": {"rule": "largest held-out usage", "held_out": [500, 500],
                      "tried": {"linear": {"usage": [0.1, 0.4], "separation": 0.3},
                                "flag-value": {"usage": [0.8, 1.3], "separation": 0.9}}}}
    lines = statistic_lines(_report({"base_shape": [3, 1], "neighbor_shape": [4, 1]},
                                    {"option": "auto", "pairs": [entry], "training_samples": 1000}), LABEL)
    text = "\n".join(lines)
    assert "usage: the share of what the claim allows" in text and "held-out draws" in text
    assert "separation: the difference of the statistic's means on D′ and D in pooled standard deviations" in text
    assert "columns (output coordinates, each scored by its own log-ratio estimate): 0, 2" in text
    assert "groups (the groups of alike values each column's histogram was merged into, per column): 3, 5" in text
    assert "blocks (⊤/⊥ pattern columns scored together, as they depend on each other): [0, 1], [2]" in text
    assert "patterns (distinct sub-patterns of each block seen in training; an unseen one scores 0): 4, 2" in text
    assert "\ncolumns: " not in "\n" + text and "\nblocks: " not in "\n" + text


def _lanes_report(lane: int) -> dict:
    """A report whose refuting event comes from lane ``lane`` of a pair "auto" fitted with lanes
    (binned primary over a 3-D Fisher projection; a linear and a categorical alternate)."""
    entry = {"kind": "binned", "bins": 21, "edges": [0.0, 1.0], "scores": [0.0, 1.0], "projection": [0.5, 0.5, 0.0],
             "auto_choice": "binned", "lanes": ["binned", "linear", "categorical"],
             "alternates": [{"kind": "fisher-discriminant", "weights": [0.1, -2.0, 0.3]},
                            {"kind": "categorical", "atoms": 12, "top_atoms": []}]}
    event = {"pair": LABEL, "slot": "epsilon@0.1", "family": "headline", "event": "<w, output> >= 6.25",
             "more_likely_under": "neighbour", "count_more_likely": 270_112, "count_other": 60, "n": 1_235_963,
             "test": "joint", "level": 0.01, "bound": 7.49, "refutes": True}
    if lane:
        event["lane"] = lane
    return dict(_report({"base_shape": [3, 3], "neighbor_shape": [4, 3]},
                        {"option": "auto", "option_text": "auto", "pairs": [entry], "training_samples": 1000}),
                evidence=[event], witness={"headline": "epsilon", "epsilon": {"evidence": 0, "bound": 7.49},
                                           "refuting": {"evidence": 0, "test": "joint"}},
                reference_delta=0.1, reference_epsilon=7.0, violations=[], worst_pair=LABEL)


def test_the_witness_names_the_lane_whose_event_it_reports():
    # An alternate lane's event (evidence "lane": 1) is a threshold of the linear statistic, so the
    # witness must describe that one, with its own weights, and say auto chose another.
    lines = [line.strip() for line in witness_lines(_lanes_report(1))]
    assert ("statistic: linear (one of auto's lanes; auto chose binned): Fisher's discriminant <w, output> "
            "(linear statistic, w learned on training draws)") in lines, lines
    assert "w has 3 weights, largest |w| at output coordinates 1 (-2), 2 (0.3), 0 (0.1)" in lines
    assert not any("binned: a smoothed histogram" in line or "Fisher's projection" in line for line in lines)
    assert "\"auto\" chose binned (on training draws, which certify nothing)" in lines
    assert ("lanes (the statistics whose events competed on the selection draws, auto's choice first): "
            "binned, linear, categorical") in lines
    assert not any(line.startswith("alternates") for line in lines)
    categorical = [line.strip() for line in witness_lines(_lanes_report(2))]
    assert ("statistic: categorical (one of auto's lanes; auto chose binned): categorical: distinct outputs ranked "
            "by their trained log-likelihood ratio (12 distinct outputs in training)") in categorical
    # The primary lane's event: the chosen statistic, described as before.
    primary = [line.strip() for line in witness_lines(_lanes_report(0))]
    assert "statistic: binned: a smoothed histogram log-ratio of the output (21 bins)" in primary
    assert "of Fisher's projection (w of 3 weights)" in primary
    assert not any("one of auto's lanes" in line for line in primary)


def test_the_sweep_row_names_the_lane_whose_event_it_reports():
    assert witness_summary(_lanes_report(1))["statistic"] == "auto: linear (one of auto's lanes; auto chose binned)"
    assert witness_summary(_lanes_report(0))["statistic"] == "auto: binned"


def test_a_joint_refutation_whose_one_number_bound_is_below_the_claim_is_not_called_above_it():
    # The joint test rejects the claim on both counts together; the δ it certifies alone may be below
    # the claimed δ (δ ≥ 0.0009838 against 0.001 was once printed as "above the 0.001 the claim allows").
    from audit.render.witness import _certifies
    slot = "delta@1.0"
    report = {"violations": [{"test": "joint", "slot": slot, "claimed": 0.001}]}
    below = _certifies(report, {"test": "joint", "slot": slot, "bound": 0.0009838, "level": 0.01}, 0, True)
    assert ", above the" not in below and "not above the 0.001 the claim allows" in below
    above = _certifies(report, {"test": "joint", "slot": slot, "bound": 0.0012, "level": 0.01}, 0, True)
    assert "above the 0.001 the claim allows" in above and "not above" not in above
