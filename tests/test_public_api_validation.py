"""Every exported function validates its numeric arguments.

The test walks the public API (the `__all__` of every module of `dp_cd.privacy`, `dp_cd.model`,
`dp_cd.solvers` and `dp_cd.theory`, and of the top-level modules `dp_cd.*`), and calls each function
and class with an invalid value for each parameter it names in `INVALID`, the others at a valid value
from `VALID`. Each call must raise `ValueError` (or `TypeError`, for a value of the wrong type; or the
library's `InputError`, a usage error of the functions that read files) whose message names the
parameter. A scikit-learn estimator validates in `fit`, as scikit-learn's do: it is built with the
invalid value, then fitted. A new function is covered as soon as it is exported: if one of its
required parameters has no valid value in `VALID`, the test fails until the value is added or the
function is listed in `SKIP` with a reason.
"""
import ast, importlib, inspect, math, pkgutil, re, tempfile
from pathlib import Path
import numpy as np
import pytest
from numba.core.registry import CPUDispatcher

import dp_cd.model, dp_cd.privacy, dp_cd.solvers, dp_cd.theory
import dp_cd
from dp_cd.io import InputError, parse_labels
from dp_cd.estimators import DataBounds
from sklearn.base import is_classifier
from dp_cd.base import BaseEstimator   # the estimators' base: scikit-learn's protocol, not its class
from dp_cd.datasets import DatasetError
from dp_cd.model.losses import SquaredLoss
from dp_cd.model.penalties import L2
from dp_cd.privacy.accountants import GDPAccountant
from dp_cd.privacy.events import GaussianEvent
from dp_cd.privacy.pld import gaussian_pld
from dp_cd.solvers.growth import PowerLoss
from dp_cd.solvers.tuning import tnb_for_mean

nan, inf = math.nan, math.inf
POSITIVE = [-1.0, 0.0, nan, inf, "1"]     # a noise scale, a sensitivity, a grid step: finite > 0
NON_NEGATIVE = [-1.0, nan, inf, "1"]      # e.g. the ε₀ of a composed mechanism, a sensitivity
SENSITIVITY = NON_NEGATIVE                # (0: a constant query, no noise needed)
EPSILON = [-1.0, nan, "1"]                # ε > 0 (+inf may mean "no privacy")
PROBABILITY = [-0.5, 1.5, nan, "0.5"]     # δ, a sampling rate q
COUNT = [-1, 2.5, nan, "3"]               # a number of steps, records, repetitions

INVALID = {
    "noise_multiplier": POSITIVE, "z": POSITIVE, "sigma": POSITIVE, "noise_scale": POSITIVE,
    "b": POSITIVE, "sensitivity": SENSITIVITY, "clip_norm": SENSITIVITY, "h": POSITIVE,
    "mu": EPSILON, "rho": EPSILON, "eps0": NON_NEGATIVE,   # μ = ∞, ρ = ∞: no privacy
    "epsilon": EPSILON, "epsilon_prime": EPSILON,
    "delta": PROBABILITY, "sample_rate": PROBABILITY, "q": PROBABILITY,
    "steps": COUNT, "count": COUNT, "k": COUNT, "n_iter": COUNT, "n_updates": COUNT,
    "n_samples": COUNT, "n_epochs": COUNT, "n_inner": COUNT, "n_iterations": COUNT,
    "tail": [-1.0, nan, 0.5], "tail_mass": [-1.0, nan, 0.5],
    "value_discretization_interval": POSITIVE,
    "orders": [[0.5, 2.0], [2.0, nan], [], [[2.0]]],
    "relation": ["bogus", 1],
    # the theory chapters' constants
    "lam": NON_NEGATIVE, "Lambda": NON_NEGATIVE, "zeta": PROBABILITY,
    "s0": NON_NEGATIVE, "increase": NON_NEGATIVE, "D": POSITIVE, "initial_distance": NON_NEGATIVE,
}


def _gdp_ledger(x):
    return GDPAccountant().compose(GaussianEvent(x), 3)


def _valid(qn=None):
    "A valid value of every parameter name (those of `VALID_FOR` for the function `qn`)."
    rng = np.random.default_rng(0)
    values = {
        "noise_multiplier": 1.0, "z": 1.0, "sigma": 1.0, "noise_scale": 1.0, "b": 1.0,
        "sensitivity": 1.0, "clip_norm": 1.0, "h": 1e-2, "mu": 1.0, "rho": 0.1, "eps0": 0.1,
        "epsilon": 1.0, "epsilon_prime": 1.0, "delta": 1e-5, "sample_rate": 0.1, "q": 0.1,
        "steps": 3, "count": 3, "k": 3, "n_iter": 3, "n_updates": 3, "n_samples": 100,
        "n_epochs": 2, "n_inner": 3, "n_iterations": 3, "tail": 1e-15, "tail_mass": 1e-15,
        "value_discretization_interval": 1e-2, "orders": [2.0, 4.0], "relation": "add_remove",
        "pmf": gaussian_pld(1.0, 1e-2), "a": gaussian_pld(1.0, 1e-2), "b_pmf": None,
        "event": GaussianEvent(1.0), "make_event": GaussianEvent,
        "X": rng.normal(size=(20, 3)), "y": rng.normal(size=20), "loss": SquaredLoss(),
        "penalty": L2(0.1), "lipschitz": np.ones(3), "direction": "add",
        "name": "rdp", "accountant": "rdp", "n": 100, "alpha": 0.05, "gamma": 1.0,
        "s_D": rng.normal(size=50), "s_Dp": rng.normal(size=50) + 1, "C": np.abs(rng.normal(size=(20, 2))),
        "B": np.ones(3), "rdp": np.array([0.5, 1.0]), "make_accountant": _gdp_ledger,
        "U": np.clip(rng.normal(size=(20, 3)), -1, 1), "floor": 1e-2,
        "values": np.array([0.1, 0.5, 0.2]), "sensitivities": np.ones(3), "u": np.array([0.1, 0.5]),
        "u_prime": np.array([0.6, 0.0]), "p": 3, "offset": 0, "probs": np.array([0.5, 0.5]),
        "rng": rng, "T": 2, "K": 3, "R": 2, "dist": tnb_for_mean(5.0), "eta": 1.0, "kappa": 2.0,
        "scale": 1.0, "bound": 1.0, "w": np.ones(3), "v": np.ones(3), "A": np.eye(3),
        "d": 3, "diameter": 1.0, "L": 1.0, "n0": 50, "S": rng.normal(size=(50, 3)) / 4,
        "center": np.zeros(3), "radius": 1.0, "kappa_lower": 1.5, "kind": "power",
        "delta_fn": lambda e: np.exp(-np.abs(e)) / 2, "l_lo": -1.0, "l_hi": 1.0, "solver": "dp_cd",
        # the theory chapters' constants (a smoothness vector M, radii, rates)
        "M": np.ones(3), "R_M": 1.0, "R_M1": 1.0, "mu_M": 0.1, "mu_M1": 0.1, "mu_M2": 0.1,
        "gap0": 1.0, "Lambda": 1.0, "lam": 2.0, "s": 2, "tau": 2, "D": 1.0, "zeta": 0.05,
        "batch_size": 10, "m": 100, "s0": 1.0, "increase": 0.1, "step_size": 0.1, "beta": 2.0,
        "initial_distance": 1.0, "lam_max": 1.0, "M_min": 1.0, "L_max": 1.0, "record_every": 1,
        "x_norm": 1.0, "gtol": 1e-8, "eps_lam": 0.5, "eps_hat": 0.5, "lam_hat": 0.5,
        "noise_var": 1.0,
        # the top-level modules' helpers (the estimators' preprocessing steps, files, maps)
        "eps": 1.0, "share": 0.1, "releases": 2, "labels": np.where(rng.normal(size=20) > 0, 1.0, -1.0),
        "Xc": np.clip(rng.normal(size=(20, 3)), -1, 1), "classes": None, "c": np.zeros(3),
        "path": str(Path(tempfile.gettempdir()) / "dp_cd_api_walk_ledger.json"),
    }
    named = {"pmf": values["pmf"], "growth_loss": PowerLoss(2.0), "L_vector": np.ones(3),
             "bounds": DataBounds(B=np.ones(3)), "half_widths": np.ones(3)}
    values.update({k: named[v] for k, v in VALID_FOR.get(qn, {}).items() if v in named})
    values.update({k: v for k, v in VALID_FOR.get(qn, {}).items() if v not in named})
    return values

# parameters that another function's same name means differently: {function: {name: values}}
OVERRIDE = {
    **{f"dp_cd.model.norms.{f}": {"q": [0.5, nan, "2"]}  # the exponent of an ℓq norm, q ≥ 1
       for f in ("mahalanobis_norm", "dual_norm", "dual_maximiser", "quadratic_strong_convexity",
                 "conjugate_exponent")},
    "dp_cd.privacy.pld.pld_compose": {"b": [1.0, "pmf"]},        # the second PLD
    "dp_cd.privacy.pld.pld_delta": {"epsilon": [nan, inf, "1"]},  # δ(ε) is defined for every real ε
    "dp_cd.privacy.mechanisms.selection_scale": {"sensitivity": [-1.0, 0.0, nan, inf]},  # array-like
    "dp_cd.solvers.growth.l2_laplace_logdensity": {"z": []},      # points, not a noise multiplier
    **{f"dp_cd.solvers.growth.{f}": {"b": [nan, inf, "1"]}         # the linear term's weight, any real
       for f in ("GrowthLoss", "PowerLoss")},
    "dp_cd.solvers.tuning.rdp_selection_bound": {"lam": [1.0, 0.5, nan, inf, "2"]},  # order λ > 1
    "dp_cd.model.losses.HuberLoss": {"delta": [-1.0, 0.0, nan, inf, "1"]},   # Huber's threshold
    **{f"dp_cd.theory.fairness.{f}": {"sigma": NON_NEGATIVE}     # σ = 0: no noise, distance 0
       for f in ("output_perturbation_distance", "dpsgd_distance")},
    **{f"dp_cd.theory.dpscd.{f}": {"batch_size": COUNT}   # DP-SCD's batch: a number of records
       for f in ("lemma2_rate", "lemma3_increase", "theorem2_hypothesis",
                 "theorem2_recursion_bound", "table1_bounds")},
    **{f"dp_cd.datasets.{f}": {"sigma": NON_NEGATIVE}   # the coefficients' log-normal shape
       for f in ("make_log", "make_square")},             # (σ = 0: equal magnitudes)
    **{f"dp_cd.estimators.{f}": {"b": []}   # the fit's `DataBounds` record, not a noise scale
       for f in ("add_private_center", "add_label_mean", "add_private_spread", "add_private_scale")},
    "dp_cd.tuned.to_unit_box": {"h": [[-1.0, 1.0, 1.0], [0.0, 1.0, 1.0], [nan, 1.0, 1.0]]},
    **{f"dp_cd.estimators.{f}": {"q": COUNT}   # a number of columns
       for f in ("scale_swamped", "histogram_pays", "target_apart", "histogram_threshold",
                 "histogram_futile", "histogram_weak")},
}

# valid values that differ from `VALID` for one function: {function: {name: value}}
VALID_FOR = {
    "dp_cd.privacy.pld.pld_compose": {"b": "pmf"},
    **{f"dp_cd.theory.rates.{f}": {"L": "L_vector"}   # one L_j per coordinate of M
       for f in ("predict_winner", "comparison_quantities")},
    "dp_cd.privacy.closed_forms.theorem_3_1_8_rdp": {"noise_multiplier": 3.0},   # its z > √5
    "dp_cd.tuned.to_unit_box": {"h": "half_widths"},   # one half-width per column
    **{f"dp_cd.estimators.{f}": {"b": "bounds"}
       for f in ("add_private_center", "add_label_mean", "add_private_spread", "add_private_scale")},
    "dp_cd.estimators.refined_public_bounds": {"pub": "bounds"},
    **{f"dp_cd.estimators.{f}": {"q": 3}   # a number of columns, not a probability
       for f in ("scale_swamped", "histogram_pays", "target_apart", "histogram_threshold",
                 "histogram_futile", "histogram_weak")},
    **{f"dp_cd.solvers.growth.{f}": {"loss": "growth_loss"}
       for f in ("localization", "epoch_growth", "inverse_sensitivity_distribution",
                 "inverse_sensitivity")},
}

# functions not called, and why
RECORD = "a result record the library builds from checked values, not an entry point"
SKIP = {
    **{f"dp_cd.{q}": RECORD for q in (
        "estimators.DataBounds", "privacy.audit.AuditResult", "privacy.bounds.BoundsRelease",
        "privacy.bounds.CenterRelease",
        "privacy.bounds.ScaleRelease", "privacy.bounds.TwoSidedRelease",
        "privacy.bounds.MagnitudeRelease", "privacy.bounds.MeanRelease",
        "privacy.mechanisms.SelectionCalibration", "solvers.contract.Run", "solvers.contract.FitResult",
        "solvers.dpgcd.DPGCDCalibration", "solvers.growth.GrowthResult", "solvers.reference.SolverResult",
        "solvers.tuning.SelectionResult", "theory.fairness.OutputPerturbation")},
    **{f"dp_cd.solvers.chunks.{f}": "the Dask data seam (issue 30): its public entry points "
       "are the solvers, covered here" for f in ("check_finite", "load_chunk", "LazyChunk")},
    "dp_cd.solvers.block_cd.block_draws": "a lazy generator of a run's draws, fed the σ its solver "
        "calibrated (the solver is covered here)",
    "dp_cd.solvers.dpcd.noise_blocks": "a lazy generator of a run's draws, fed the σ its solver "
        "calibrated (the solver is covered here)",
    **{f"dp_cd.solvers.ssp.{f}": "a step of adassp's run, fed the statistics and the σ its plan "
       "calibrated (the solver is covered here)" for f in ("release_statistics", "adaptive_ridge")},
    **{f"dp_cd.solvers.dpsgd.{f}": "a step of `dp_sgd`'s run: the batches of a range of records "
       "or steps, keyed by the seed its solver drew (the solver is covered here)"
       for f in ("batch_rows", "counter_batches")},
    "dp_cd.estimators.ovr_composed": "reads the ledgers of the runs a multi-class fit made (the "
        "estimators, which call it, are covered here)",
    "dp_cd.solvers.dpscd.scd_draws": "a step of a run: the draws of a block of steps, fed the "
        "problem and plan its solver validated and calibrated (the solver is covered here)",
    "dp_cd.solvers.contract.Plan": RECORD,
    "dp_cd.solvers.contract.PrivacyRequest": "the record `check_privacy` returns, after its checks",
    "dp_cd.solvers.vertical.LabelHolder": "the label holder's actor in a `dp_vcd` run, built from "
        "the plan its solver validated and calibrated (the solver is covered here)",
    "dp_cd.solvers.dpcd.coordinate_setup": "a step of `dp_cd`'s plan, called after its checks",
    "dp_cd.solvers.growth.growth_privacy_report": RECORD,
    "dp_cd.solvers.tuning.private_select": "takes a training callback; its (ε, δ) go through "
        "`private_tune`'s checks",
    "dp_cd.solvers.tuning.private_tune": "takes training and scoring callbacks, not built here",
}

# top-level modules not walked, and why
TOP_LEVEL_SKIP = {
    "_modidx": "nbdev's index of the book's pages, no functions",
}

MODULES = ([f"dp_cd.{pkg.__name__.split('.')[-1]}.{m.name}"
            for pkg in (dp_cd.privacy, dp_cd.model, dp_cd.solvers, dp_cd.theory)
            for m in pkgutil.iter_modules(pkg.__path__)]
           + [f"dp_cd.{m.name}" for m in pkgutil.iter_modules(dp_cd.__path__)   # the top level
              if not m.ispkg and m.name not in TOP_LEVEL_SKIP])


def _public():
    "(qualified name, callable) of every exported function and class that is not a numba kernel."
    out = []
    for m in MODULES:
        mod = importlib.import_module(m)
        for n in getattr(mod, "__all__", ()):
            f = getattr(mod, n)
            # numba kernels are internal: the public entry points validate before calling them
            if isinstance(f, CPUDispatcher) or not callable(f): continue
            if inspect.isclass(f) and issubclass(f, BaseException): continue
            out.append((f"{m}.{n}", f))
    return out


def _cases():
    cases, uncovered = [], []
    for qn, f in _public():
        if qn in SKIP: continue
        valid = _valid(qn)
        try: params = inspect.signature(f).parameters
        except (TypeError, ValueError): continue
        invalid = {**INVALID, **OVERRIDE.get(qn, {})}
        checked = [p for p in params if p in invalid]
        if not checked: continue
        required = [p for p, v in params.items() if v.default is inspect.Parameter.empty
                    and v.kind not in (v.VAR_POSITIONAL, v.VAR_KEYWORD)]
        missing = [p for p in required if p not in valid]
        if missing: uncovered.append((qn, missing)); continue
        for p in checked:
            for bad in invalid[p]: cases.append((qn, f, p, bad, required))
    return cases, uncovered


CASES, UNCOVERED = _cases()

def test_every_public_function_is_covered_or_skipped_with_a_reason():
    assert UNCOVERED == [], "add a valid value to VALID, or the function to SKIP with its reason"


@pytest.mark.parametrize("qn, f, param, bad, required", CASES,
                         ids=[f"{c[0].split('.', 1)[-1]}-{c[2]}={c[3]!r}" for c in CASES])
def test_invalid_argument_is_refused_naming_it(qn, f, param, bad, required):
    valid = _valid(qn)
    kwargs = {p: valid[p] for p in required if p != param}
    kwargs[param] = bad
    with pytest.raises((ValueError, TypeError, InputError)) as info:
        out = f(**kwargs)
        if inspect.isclass(f) and issubclass(f, BaseEstimator): _fit(out, valid)
    assert param in str(info.value), f"{qn}({param}={bad!r}): {info.value}"


def _fit(est, valid):
    "Fit a scikit-learn estimator built with an invalid value (it validates in `fit`)."
    X, y = valid["X"], valid["y"]
    est.fit(X, np.where(y > 0, 1, -1) if is_classifier(est) else y)


OPTION = re.compile(r"(?<![\w-])--[a-z][a-z-]*")


def _raised_texts(path):
    "(line, text) of every string written in a `raise` statement of a module."
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Raise):
            for s in ast.walk(node):
                if isinstance(s, ast.Constant) and isinstance(s.value, str):
                    yield s.lineno, s.value


def test_library_errors_name_arguments_not_command_line_options():
    "A library error names the library's argument (`labels`); only the CLI speaks of `--classes`."
    root = Path(dp_cd.__file__).parent
    found = [(p.relative_to(root).as_posix(), line, m.group())
             for p in sorted(root.rglob("*.py")) if p.name not in ("cli.py", "_modidx.py")
             for line, text in _raised_texts(p) for m in OPTION.finditer(text)]
    assert found == [], found


def test_the_command_line_names_its_options_for_the_library_arguments(capsys):
    "The CLI maps the backquoted arguments of a library error to the options that set them."
    from dp_cd.io import InputError, options_named
    from dp_cd.cli import LIBRARY_OPTIONS
    from dp_cd.model_files import open_ledger
    with pytest.raises(InputError, match=r"^--budget-epsilon 0: a budget's total"):
        with options_named(epsilon="--budget-epsilon"): open_ledger("x.json", 0.0)
    with pytest.raises(InputError, match=r"^--classes ' ': give the labels"):
        with options_named(**LIBRARY_OPTIONS): parse_labels(" ")
    from dp_cd.cli import main
    from dp_cd.datasets import data_dir
    with pytest.raises(DatasetError) as missing: data_dir("/nonexistent/dp_cd_data")
    assert "`data_dir`=DIR" in str(missing.value) and "--data-dir" not in str(missing.value)
    assert main(["fit", "california", "--data-dir", "/nonexistent/dp_cd_data", "--epsilon", "1"]) == 1
    assert "with --data-dir DIR or" in capsys.readouterr().err
