"""One spelling for each option across DPRegressor, DPRegressorCV, DPClassifier, DPClassifierCV
and the command line (`dp-cd fit`): the test fails when a new parameter or option spells an
existing one differently, or when the command line's table of option names drifts from its parser."""
import inspect, re, warnings
import numpy as np
import pytest
from dp_cd import DPClassifier, DPRegressor
from dp_cd.tuned import DPClassifierCV, DPRegressorCV
from dp_cd.cli import CLI_FLAGS, _parser

ESTIMATORS = (DPRegressor, DPClassifier, DPRegressorCV, DPClassifierCV)
# deprecated spellings -> the one spelling (each warns a FutureWarning when used)
DEPRECATED_PARAMS = {"feature_bounds": "bounds", "target_bounds": "target_bound",
                     "accountant": "budget"}
DEPRECATED_OPTIONS = {"--passes": "--n-passes", "--seed": "--random-state"}
# options of `dp-cd fit` that set no estimator parameter (files, the cluster, the ledger, the
# command itself), or a parameter under another documented name
CLI_ONLY = {"help", "data", "target", "task", "test_file", "dask", "scheduler", "data_dir", "out",
            "json", "budget_file", "budget_epsilon", "budget_delta", "tune",
            "no_intercept",            # fit_intercept=False
            "feature_bound",           # deprecated: --bounds B
            "categories",              # the dtype of a column (pd.CategoricalDtype): no parameter
            "smoothness", "smoothness_bound"}   # the solver's options of these names
# words that name one idea: a parameter spelled with two of them would be two spellings
SYNONYMS = {"seed": "random_state", "passes": "n_passes", "n_iter": "n_passes",
            "accountant": "budget", "feature_bound": "bound", "clip_norm": "clip",
            "intercept": "fit_intercept", "feature_bounds": "bounds"}


def params(est) -> set:
    return {p for p in inspect.signature(est.__init__).parameters if p != "self"}


def key(name: str) -> str:
    "A parameter's idea: singular, without a `n_` prefix, through the synonyms."
    name = SYNONYMS.get(name, name)
    one = "_".join(w[:-1] if w.endswith("s") and len(w) > 3 else w for w in name.split("_"))
    return re.sub(r"^n_", "", SYNONYMS.get(one, one))


def fit_actions():
    ap = _parser()
    sub = next(a for a in ap._actions if a.__class__.__name__ == "_SubParsersAction")
    return sub.choices


def test_each_idea_has_one_spelling_across_the_estimators():
    names = set().union(*map(params, ESTIMATORS))
    by_key = {}
    for n in names: by_key.setdefault(key(n), set()).add(n)
    for k, group in by_key.items():
        current = group - set(DEPRECATED_PARAMS)
        assert len(current) == 1, f"{sorted(group)}: one idea spelled {len(current)} ways"
    for old, new in DEPRECATED_PARAMS.items():
        assert new in names and all(new in params(e) for e in ESTIMATORS if old in params(e))


def test_shared_parameters_are_shared_by_all_four():
    "What every plain estimator takes and a tuned one also takes is spelled alike in all four."
    plain = params(DPRegressor) & params(DPClassifier)
    tuned = params(DPRegressorCV) & params(DPClassifierCV)
    assert {"epsilon", "delta", "bounds", "bounds_budget", "center", "standardize", "alpha",
            "penalty", "fit_intercept", "random_state", "budget", "refine_bounds",
            "sample_weight_bound"} <= plain & tuned
    assert "classes" in params(DPClassifier) & params(DPClassifierCV)
    assert "target_bound" in params(DPRegressor) & params(DPRegressorCV)
    assert "clipping" in plain   # a first-class parameter, not hidden in solver_options


def test_cli_options_spell_the_estimators_parameters():
    names = set().union(*map(params, ESTIMATORS))
    for command in ("fit", "demo"):
        for a in fit_actions()[command]._actions:
            if a.dest == "help" or not a.option_strings and a.dest in CLI_ONLY: continue
            first, *aliases = a.option_strings
            for alias in aliases:
                assert DEPRECATED_OPTIONS.get(alias) == first, (alias, first)
            if command == "demo" or a.dest in CLI_ONLY:
                if a.dest in names: assert first == "--" + a.dest.replace("_", "-")
                continue
            assert a.dest in names, f"{first} sets {a.dest!r}, which no estimator takes"
            assert first == "--" + a.dest.replace("_", "-"), (first, a.dest)


def test_cli_flags_table_matches_the_parser():
    "The table that names options in library errors gives each parameter its option's spelling."
    options = {s for a in fit_actions()["fit"]._actions for s in a.option_strings}
    for param, flag in CLI_FLAGS.items():
        assert flag in options, (param, flag)
        assert flag not in DEPRECATED_OPTIONS, (param, flag)
        target = DEPRECATED_PARAMS.get(param, param)
        assert flag == "--" + target.replace("_", "-"), (param, flag)


@pytest.mark.parametrize("old,new,est,value", [
    ("feature_bounds", "bounds", DPRegressor, 4.0),
    ("target_bounds", "target_bound", DPRegressorCV, 20.0)])
def test_deprecated_spelling_warns_and_means_the_same(old, new, est, value):
    g = np.random.default_rng(0)
    X = g.normal(size=(400, 3))
    y = X @ np.array([1.0, 2.0, 3.0])
    kw = dict(random_state=0, bounds=4.0, target_bound=20.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = est(**kw).fit(X, y)
    kw.pop(new)
    with pytest.warns(FutureWarning, match=old):
        got = est(**kw, **{old: value}).fit(X, y)
    np.testing.assert_array_equal(got.coef_, ref.coef_)


def test_target_bound_takes_the_same_values():
    """`target_bound` takes a bound T or a box (lower, upper) in both regressors; DPRegressor
    bounds |y| by the box's larger magnitude."""
    g = np.random.default_rng(1)
    X = g.normal(size=(500, 3))
    y = X @ np.array([1.0, 2.0, 3.0]) + 5.0
    kw = dict(random_state=0, bounds=4.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        box = DPRegressor(target_bound=(-3.0, 20.0), **kw).fit(X, y)
        ref = DPRegressor(target_bound=20.0, **kw).fit(X, y)
        DPRegressorCV(target_bound=(-3.0, 20.0), **kw).fit(X, y)
        DPRegressorCV(target_bound=20.0, **kw).fit(X, y)
    np.testing.assert_array_equal(box.coef_, ref.coef_)
    assert box.target_bound_ == 20.0
