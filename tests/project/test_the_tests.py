"""The test suite's own rules: its layout, and the ``statistical`` marker wherever a test rests on draws.

**Layout.**  ``tests/<package>/`` holds the tests of a package of the repository (``tests/audit/render/``
those of ``audit/render/``), and ``tests/project/`` the checks of the whole project.  The folders are
not Python packages: diffprivlib installs a top-level ``tests`` package (with a ``tests/mechanisms/``
of its own) into site-packages, which a ``tests`` package here could meet in any process whose
``sys.path`` does not start at the repository.  So pytest imports each test module by its basename,
and the basenames must be unique.

**The statistical marker** (docs/style.md §8) labels the seeded Monte Carlo checks: a test whose pass
or fail depends on which random draws came out, with a tolerance from a stated bound.  A change of
random streams may flip such a test with the stated small probability; any other test must not move.

Why not the simpler rule "a module that calls ``run_audit(``, ``dp_audit(`` or ``assert_claim(`` is
marked": it is unsound both ways.  Many tests run a seeded audit and assert nothing that rests on its
draws — the same seed gives the same report (any ``n_jobs``, joblib or Dask, after a resume), a bad
argument is refused before anything is drawn, a figure plots the numbers its report holds — and
marking them would drop deterministic tests from ``-m 'not statistical'``.  Many statistical tests
never call the engine: a sampler against its law (KS, chi-square, moments within 5 standard
errors), the coverage of Clopper–Pearson bounds, the false-rejection rate of the joint test, audits
run by ``dpaudit run`` in a subprocess or by an inner pytest run whose code is a string.  And a module
mixes both kinds, so a module-level rule is too coarse either way.

What is checked instead, test function by test function (:func:`draws`): every test that reaches —
itself, through a helper or fixture of its module, a fixture of a ``conftest.py`` above it, or a
string of code handed to pytester — an audit (:data:`AUDITS`), ``dpaudit run`` (a call given the
string ``"run"``, alone or first in a list, or after ``"audit"`` in one: ``main(["run", …])``,
``[sys.executable, "-m", "audit", "run", …]``) or a goodness-of-fit test on samples (:data:`GOODNESS_OF_FIT`) carries the marker, or
is listed in :data:`NOT_STATISTICAL` with the reason its assertions do not rest on the draws.  So
does a test with a *moment check* (:func:`moment_checks`): an assertion (``assert`` or a call of an
``assert_*`` helper) that holds a sample moment (``.mean(``, ``np.std(``, ``var(``, …, or a name
assigned from one in the same function) and a tolerance in standard errors (a ``sqrt(`` call, or
a name such as ``se``, ``sd``, ``standard_error``).  Code inside ``with pytest.raises(...)`` is not
counted: it must fail, and failing is what is asserted.  Monte Carlo checks of other shapes (binomial
counts, a frequency against a bound) cannot be told from deterministic arithmetic by reading the
code; they were marked by review, and the last tests below show that each rule of the checker fails
when it should.
"""

from __future__ import annotations

import ast
import textwrap
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Mapping

import pytest

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
TESTS = ROOT / "tests"
#: Calls that run seeded audits: the engine, the pytest plugin's fixture and helper, a benchmark study.
AUDITS = frozenset({"run_audit", "run_accuracy_audit", "dp_audit", "assert_claim", "run_study"})
#: Goodness-of-fit tests: a p-value of samples against a law.
GOODNESS_OF_FIT = frozenset({"kstest", "ks_2samp", "chisquare"})
#: Sample moments, and the names of a tolerance in standard errors, that make an assertion a moment check.
MOMENTS = frozenset({"mean", "std", "var", "average", "nanmean", "nanstd", "nanvar"})
STANDARD_ERRORS = frozenset({"se", "sd", "sem", "stderr", "standard_error"})
#: What :func:`draws` reports for a moment check.
MOMENT_CHECK = "a moment within standard errors"
#: The folder of project-wide checks; every other folder under tests/ mirrors a package.
PROJECT = "project"

#: Tests that run an audit but assert nothing that rests on its draws, and why.
NOT_STATISTICAL: dict[str, str] = {
    "audit/test_plugin_budget.py::test_the_privacy_and_accuracy_levels_sum_to_the_promise":
        "asserts the split of the confidence between the two audits, arithmetic the draws do not touch",
    "audit/test_workers.py::test_the_report_is_the_same_in_the_main_process_and_in_a_loky_worker":
        "same seed, same report, whatever the process",
    "audit/test_accuracy.py::test_error_beyond_the_worst_case_bound_is_a_certain_violation":
        "one output lies beyond the worst-case bound by construction: a violation with probability 1",
    "audit/test_cli.py::test_malformed_file_exits_2_with_one_line_naming_file_and_key":
        "the file is refused before anything is drawn",
    "audit/test_cli.py::test_bad_usage_through_the_process_exits_2":
        "the option is refused before anything is drawn",
    "audit/test_cli.py::test_plot_redraws_figures_from_a_saved_report":
        "redraws whatever report.json holds; the verdict is not asserted",
    "audit/test_dask.py::test_same_report_as_loky_on_a_two_worker_cluster":
        "same seed, same report, whatever the backend",
    "audit/test_dask.py::test_own_local_cluster_prints_its_dashboard_and_gives_the_same_report":
        "same seed, same report, whatever the backend",
    "audit/test_dask.py::test_accuracy_audit_is_identical": "same seed, same report, whatever the backend",
    "audit/test_dask.py::test_killed_worker_does_not_change_the_report": "same seed, same report after a lost worker",
    "audit/test_engine.py::test_identical_reports_for_one_and_two_workers": "same seed, same report, any n_jobs",
    "audit/test_engine.py::test_vector_outputs_identical_across_backends": "same seed, same report, any backend",
    "audit/test_engine.py::test_different_seeds_differ":
        "two seeds give other draws (equal evidence would need identical streams)",
    "audit/test_engine.py::test_resumed_checkpoint_gives_the_same_report": "same seed, same report after a resume",
    "audit/test_engine.py::test_checkpoint_of_another_audit_is_refused": "the fingerprint check, not the draws",
    "audit/test_engine.py::test_reverse_pairs_are_audited_once": "the pairs a scenario yields, not their draws",
    "audit/test_error_control.py::test_pytest_session_confidence_is_shared_by_bonferroni":
        "the inner tests check the confidence each audit was given, not its verdict",
    "audit/test_pytest_plugin.py::test_sample_option_is_validated": "the option is refused before any test runs",
    "audit/test_pytest_plugin.py::test_marker_sets_the_fixture_defaults":
        "dp_audit.run asserts no claim; the settings are compared",
    "audit/test_quick_look.py::test_small_budgets_have_no_quick_look_but_the_main_audit_still_looks":
        "the plan of looks depends on the budget only",
    "audit/test_quick_look.py::test_exact_values_of_an_immutable_mechanism_are_computed_once":
        "counts calls of the exact-value methods",
    "audit/test_search.py::test_same_seed_same_report_for_any_n_jobs": "same seed, same report, any n_jobs",
    "audit/test_search.py::test_scenario_file_with_a_search": "the candidates tried are the budget",
    "audit/test_search.py::test_exhausted_domain_reports_fewer_candidates": "the domain's size, not the draws",
    "audit/test_search.py::test_dask_backend_gives_the_same_search_and_report": "same seed, same report, any backend",
    "audit/test_statistics.py::test_user_statistic_is_used_and_checked": "the statistic's kind and shape check",
    "audit/test_statistics.py::test_learned_statistics_give_the_same_report_for_any_worker_count":
        "same seed, same report, any n_jobs",
    "audit/test_statistics.py::test_training_phase_resumes_from_a_checkpoint": "same seed, same report after a resume",
    "audit/test_statistics.py::test_classifier_accepts_a_fresh_128_bit_seed":
        "unseeded on purpose; its one random assertion (a fresh seed is >= 2**32) fails with probability 2**-96",
    "audit/graybox/test_graybox_front_doors.py::test_a_graybox_run_at_seed_none_records_the_seed_its_replays_and_audit_used":
        "same seed, same report; its one random assertion (fresh entropy is >= 2**64) fails with probability 2**-64",
    "audit/test_statistics.py::test_auto_with_a_tiny_budget_keeps_the_linear_statistic_and_draws_no_training":
        "the allocation depends on the budget only",
    "audit/test_validity_quick.py::test_table_renders": "renders whatever the study found",
    "audit/render/test_plots.py::test_tradeoff_figure_plots_the_report_curves": "plots exactly the report's numbers",
    "audit/render/test_plots.py::test_infinite_exact_epsilon_is_drawn": "the exact ε comes from the mechanism",
    "audit/render/test_plots.py::test_accuracy_figure_plots_the_histogram_density_and_claimed_bound":
        "plots exactly the report's numbers",
    "audit/render/test_plots.py::test_save_figures_writes_readable_pngs": "the files, not the numbers",
    "audit/render/test_plots.py::test_bare_report_dict_and_missing_accuracy": "which figures a report dict allows",
    "audit/render/test_plots.py::test_missing_matplotlib_gives_a_clear_error": "the error without matplotlib",
    "project/test_usability.py::test_unknown_backend_is_refused_before_anything_runs":
        "the backend is refused before anything is drawn",
    "project/test_usability.py::test_answer_vectors_point_to_scenarios_custom_and_the_claim_says_what_was_vouched":
        "the summary's wording, not the verdict",
}


# -- reading the test modules -----------------------------------------------------------------------
@dataclass
class Module:
    """A parsed test module (or conftest): its top-level functions and string constants."""

    path: Path
    tree: ast.Module
    functions: dict[str, ast.FunctionDef] = field(default_factory=dict)
    strings: dict[str, str] = field(default_factory=dict)

    @classmethod
    def read(cls, path: Path) -> "Module":
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        module = cls(path, tree)
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                module.functions[node.name] = node
            elif (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                  and isinstance(node.value.value, str)):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        module.strings[target.id] = node.value.value
        return module

    def marked(self) -> bool:
        """``pytestmark`` at module level names the marker."""
        return any(isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark"
                                                        for t in node.targets) and _is_statistical(node.value)
                   for node in self.tree.body)

    def tests(self) -> Iterator[ast.FunctionDef]:
        return (node for name, node in self.functions.items() if name.startswith("test"))


def _is_statistical(node: ast.expr) -> bool:
    if isinstance(node, (ast.List, ast.Tuple)):
        return any(_is_statistical(item) for item in node.elts)
    return ast.unparse(node) in ("pytest.mark.statistical", "mark.statistical")


def _is_raises(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and ast.unparse(node.func) in ("pytest.raises", "raises")


def _nodes(node: ast.AST) -> Iterator[ast.AST]:
    """Every node below ``node``, except the bodies of ``with pytest.raises(...)`` blocks."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.With) and any(_is_raises(item.context_expr) for item in child.items):
            continue
        yield child
        yield from _nodes(child)


def _callee(call: ast.Call) -> str:
    """``f`` for ``f(...)`` and ``x.f(...)``; ``dp_audit`` for ``dp_audit.run(...)``."""
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "dp_audit":
        return "dp_audit"
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _runs_the_cli(call: ast.Call) -> bool:
    """Given the string "run" as an argument, first in a list or tuple argument, or after "audit" in one
    (``[sys.executable, "-m", "audit", "run", ...]``)."""
    for argument in call.args:
        items = argument.elts if isinstance(argument, (ast.List, ast.Tuple)) else [argument]
        values = [item.value if isinstance(item, ast.Constant) else None for item in items]
        if values[:1] == ["run"] or ("audit", "run") in zip(values, values[1:]):
            return True
    return False


def _code(text: str) -> ast.Module | None:
    """A string of Python code (pytester's files), or None."""
    try:
        return ast.parse(textwrap.dedent(text))
    except SyntaxError:
        return None


def draws(function: ast.FunctionDef, module: Module, conftests: Mapping[str, tuple[ast.FunctionDef, Module]],
          seen: set | None = None) -> set[str]:
    """What ``function`` reaches that rests on draws: audits, ``dpaudit run``, goodness-of-fit tests."""
    seen = set() if seen is None else seen
    if (module.path, function.name) in seen:
        return set()
    seen.add((module.path, function.name))
    found: set[str] = set()
    for argument in function.args.args:  # fixtures: of this module first, then of the conftests above it
        if argument.arg in module.functions and argument.arg != function.name:
            found |= draws(module.functions[argument.arg], module, conftests, seen)
        elif argument.arg in conftests:
            fixture, home = conftests[argument.arg]
            found |= draws(fixture, home, conftests, seen)
    found |= _reached(function, module, conftests, seen)
    if moment_checks(function):
        found.add(MOMENT_CHECK)
    return found


def _called(node: ast.AST) -> str:
    return _callee(node) if isinstance(node, ast.Call) else ""


def _holds_moment(node: ast.AST, names: set[str]) -> bool:
    """A sample moment is called in ``node``, or a name assigned from one is read there."""
    return any(_called(n) in MOMENTS or (isinstance(n, ast.Name) and n.id in names) for n in ast.walk(node))


def _in_standard_errors(node: ast.AST) -> bool:
    """``node`` takes a square root (``sqrt(``, ``** 0.5``) or reads a standard-error name (``se``,
    ``n_sd``, ``standard_error``)."""
    def root(n: ast.AST) -> bool:
        return _called(n) == "sqrt" or (isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow)
                                        and ast.unparse(n.right) == "0.5")

    def named(n: ast.AST) -> bool:
        return isinstance(n, ast.Name) and (n.id in STANDARD_ERRORS or n.id.rsplit("_", 1)[-1] in STANDARD_ERRORS
                                            or n.id.endswith("standard_error"))
    return any(root(n) or named(n) for n in ast.walk(node))


def moment_checks(function: ast.FunctionDef) -> list[str]:
    """The assertions of ``function`` that compare a sample moment within standard errors: an
    ``assert`` or an ``assert_*(...)`` call holding a moment (or a name the function assigned from
    one) and a square root or a standard-error name."""
    names = {target.id for node in _nodes(function) if isinstance(node, ast.Assign) and _holds_moment(node.value, set())
             for target_list in node.targets for target in ast.walk(target_list) if isinstance(target, ast.Name)}
    checks = [node.test if isinstance(node, ast.Assert) else node for node in _nodes(function)
              if isinstance(node, ast.Assert) or _called(node).startswith("assert_")]
    return [ast.unparse(check) for check in checks if _holds_moment(check, names) and _in_standard_errors(check)]


def _reached(node: ast.AST, module: Module, conftests, seen) -> set[str]:
    found: set[str] = set()
    for child in _nodes(node):
        if isinstance(child, ast.Call):
            name = _callee(child)
            if name in AUDITS | GOODNESS_OF_FIT:
                found.add(name)
            if _runs_the_cli(child):
                found.add("dpaudit run")
            if name in module.functions:
                found |= draws(module.functions[name], module, conftests, seen)
        strings = []
        if isinstance(child, ast.Name) and child.id in module.strings:
            strings.append(module.strings[child.id])
        elif isinstance(child, ast.Constant) and isinstance(child.value, str) and "\n" in child.value:
            strings.append(child.value)
        for text in strings:  # code given to pytester: its calls count as this test's
            tree = _code(text)
            if tree is not None:
                found |= {f"{name} (in pytester code)" for name in _reached(tree, Module(module.path, tree), {}, set())}
    return found


def _conftest_fixtures(path: Path, top: Path) -> dict[str, tuple[ast.FunctionDef, Module]]:
    """Fixtures of the conftest.py files from ``top`` down to the folder of ``path`` (nearest wins)."""
    folders = [folder for folder in reversed(path.parents) if folder == top or top in folder.parents]
    fixtures = {}
    for folder in folders:
        if (folder / "conftest.py").is_file():
            conftest = Module.read(folder / "conftest.py")
            fixtures.update({name: (node, conftest) for name, node in conftest.functions.items()})
    return fixtures


def survey(top: Path = TESTS) -> dict[str, tuple[bool, set[str]]]:
    """``folder/test_x.py::test_name`` → (carries the marker, what it reaches that rests on draws)."""
    result = {}
    for path in sorted(top.rglob("test_*.py")):
        module = Module.read(path)
        conftests = _conftest_fixtures(path, top)
        module_marked = module.marked()
        for test in module.tests():
            marked = module_marked or any(_is_statistical(d) for d in test.decorator_list)
            result[f"{path.relative_to(top).as_posix()}::{test.name}"] = (marked, draws(test, module, conftests))
    return result


def unmarked(found: Mapping[str, tuple[bool, set[str]]], exceptions: Mapping[str, str]) -> list[str]:
    return [f"{test} reaches {', '.join(sorted(reasons))}" for test, (marked, reasons) in found.items()
            if reasons and not marked and test not in exceptions]


# -- the suite ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def found():
    return survey()


def test_every_test_that_rests_on_an_audit_or_a_fit_is_marked(found):
    missing = unmarked(found, NOT_STATISTICAL)
    assert not missing, ("mark these @pytest.mark.statistical, or list them in NOT_STATISTICAL with the "
                         "reason their assertions do not rest on the draws:\n  " + "\n  ".join(missing))


def test_every_exception_is_a_current_unmarked_test_that_runs_an_audit(found):
    stale = [test for test in NOT_STATISTICAL if test not in found or found[test][0] or not found[test][1]]
    assert not stale, f"remove from NOT_STATISTICAL (gone, marked, or no audit any more): {stale}"


def test_the_survey_sees_markers_audits_and_fits(found):
    """Sanity: known tests are found as they are, so an empty list of findings is not an empty survey."""
    assert found["audit/test_engine.py::test_no_cap_on_epsilon"] == (True, {"run_audit"})
    assert found["audit/test_engine.py::test_identical_reports_for_one_and_two_workers"] == (False, {"run_audit"})
    assert found["mechanisms/test_gaussian.py::test_sampling_moments_and_ks"] == (True, {"kstest", MOMENT_CHECK})
    assert found["scenarios/test_suite_power.py::test_limit_case_reports_the_truth_next_to_the_bound"][0]
    assert found["audit/test_cli.py::test_plot_redraws_figures_from_a_saved_report"] == (False, {"dpaudit run"})
    assert found["audit/test_pytest_plugin.py::test_a_claim_that_holds_passes"] == (
        True, {"dp_audit (in pytester code)"})


def test_test_folders_mirror_the_packages_and_are_not_packages():
    folders = {path.parent for path in TESTS.rglob("test_*.py")}
    assert TESTS not in folders, "every test module lives in the folder of its package, or in project/"
    for folder in folders:
        relative = folder.relative_to(TESTS)
        assert relative.parts[0] == PROJECT or (ROOT / relative / "__init__.py").is_file(), (
            f"tests/{relative.as_posix()} mirrors no package of the repository")
    assert not list(TESTS.rglob("__init__.py")), "tests/ must not be a package (see the module docstring)"


def test_basenames_are_unique():
    counts = Counter(path.name for path in TESTS.rglob("*.py") if path.name != "conftest.py")
    assert not [name for name, n in counts.items() if n > 1], counts.most_common(3)


# -- the checks can fail ----------------------------------------------------------------------------
SYNTHETIC = {
    "conftest.py": '''
        import pytest
        from audit import run_audit

        @pytest.fixture
        def audited():
            return run_audit(None, None)
    ''',
    "test_one.py": '''
        import numpy as np
        import pytest
        from scipy import stats
        from audit import run_audit
        from audit.cli import main

        pytest_plugins = ["pytester"]
        INNER = """
            def test_inner(dp_audit):
                dp_audit.run(None)
        """

        def _helper():
            return run_audit(None, None)

        def _fit(x):
            return stats.kstest(x, "norm").pvalue

        @pytest.fixture
        def report():
            return _helper()

        def test_direct():
            assert run_audit(None, None).verdict

        def test_through_a_helper():
            assert _helper().verdict

        def test_through_a_fixture(report):
            assert report.verdict

        def test_through_a_conftest_fixture(audited):
            assert audited.verdict

        def test_a_fit():
            assert _fit([0.0]) > 1e-3

        def test_the_cli():
            assert main(["run", "x.toml"]) == 0

        def test_pytester_code(pytester):
            pytester.makepyfile(INNER)

        def test_only_raising():
            with pytest.raises(ValueError):
                run_audit(None, None)

        @pytest.mark.statistical
        def test_marked():
            assert run_audit(None, None).verdict

        def test_nothing_random():
            assert main(["theory", "gaussian"]) == 0

        def test_a_moment(rng):
            x = rng.normal(size=400)
            assert abs(x.mean()) < 5 / np.sqrt(400)

        def test_a_moment_by_name(rng):
            spread = np.std(rng.normal(size=400))
            standard_error = 1 / np.sqrt(800)
            np.testing.assert_allclose(spread, 1.0, atol=5 * standard_error)

        def _moments(x, sd):
            assert abs(np.mean(x)) < 4 * sd / len(x) ** 0.5

        def test_a_moment_in_a_helper(rng):
            _moments(rng.normal(size=100), 0.1)

        def test_arithmetic_on_a_mean(rng):
            x = rng.normal(size=(10, 2))
            assert np.allclose(x.sum(axis=0) / 10, x.mean(axis=0))
            assert np.sqrt(4.0) == 2.0  # a square root, in another assertion
    ''',
    "sub/test_two.py": '''
        import pytest
        from audit import run_audit

        pytestmark = [pytest.mark.statistical]

        def test_module_marked():
            assert run_audit(None, None).verdict
    ''',
}


@pytest.fixture
def synthetic(tmp_path):
    for name, text in SYNTHETIC.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return survey(tmp_path)


def test_the_checker_follows_helpers_fixtures_conftests_the_cli_fits_and_pytester_code(synthetic):
    flagged = {line.split(" reaches ")[0].split("::")[1] for line in unmarked(synthetic, {})}
    assert flagged == {"test_direct", "test_through_a_helper", "test_through_a_fixture",
                       "test_through_a_conftest_fixture", "test_a_fit", "test_the_cli", "test_pytester_code",
                       "test_a_moment", "test_a_moment_by_name", "test_a_moment_in_a_helper"}
    assert synthetic["test_one.py::test_a_moment_by_name"][1] == {MOMENT_CHECK}
    assert synthetic["test_one.py::test_arithmetic_on_a_mean"] == (False, set())  # a mean, and a root elsewhere
    assert synthetic["test_one.py::test_pytester_code"][1] == {"dp_audit (in pytester code)"}
    assert synthetic["test_one.py::test_the_cli"][1] == {"dpaudit run"}


def test_the_checker_reads_the_marker_and_skips_what_must_raise(synthetic):
    assert synthetic["test_one.py::test_marked"] == (True, {"run_audit"})
    assert synthetic["sub/test_two.py::test_module_marked"] == (True, {"run_audit"})
    assert synthetic["test_one.py::test_only_raising"] == (False, set())
    assert synthetic["test_one.py::test_nothing_random"] == (False, set())
    listed = {"test_one.py::test_direct": "a reason"}
    assert not any(line.startswith("test_one.py::test_direct ") for line in unmarked(synthetic, listed))
