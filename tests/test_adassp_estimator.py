"""AdaSSP through the estimators: `DPRegressor(solver="adassp")` fits privately inside its ε (the
bounds' and centre's releases and the solver's three Gaussian releases in one report), and what the
solver does not support — another loss, an ℓ1 or elastic-net penalty, a row-chunked design, public
feature bounds without a target bound — is refused with one error naming the solver and what it
refuses, before anything is charged to the budget."""
import math
import numpy as np
import pytest

from dp_cd import DPRegressor, BudgetAccountant
from dp_cd.solvers.ssp import LABELS


def _table(n=20_000, seed=0):
    "Raw units, each column spread over its range (not offset: see the private bounds' chapter)."
    g = np.random.default_rng(seed)
    X = np.column_stack([g.uniform(-100, 100, n), g.normal(0, 30, n), g.uniform(0, 1000, n)])
    y = 0.02 * X[:, 0] + 0.03 * X[:, 1] - 0.002 * X[:, 2] + g.normal(0, 1, n)
    return X, y


def _r2(model, X, y): return 1 - np.mean((model.predict(X) - y) ** 2) / np.var(y)


def test_private_fit_on_a_raw_table_reports_every_release():
    X, y = _table()
    m = DPRegressor(solver="adassp", epsilon=1.0, random_state=0).fit(X[:16_000], y[:16_000])
    rep = m.privacy_
    assert rep.is_private and rep.epsilon <= 1.0 + 1e-9, rep
    labels = [e.label for e in m.ledger_.entries]
    assert labels[-3:] == list(LABELS), labels   # the solver's three releases, after the bounds'
    assert len(labels) > 3   # the private bounds (and centre) are in the same ledger
    ols = np.linalg.lstsq(np.column_stack([X[:16_000], np.ones(16_000)]), y[:16_000], rcond=None)[0]
    r2_ols = 1 - np.mean((np.column_stack([X[16_000:], np.ones(4000)]) @ ols - y[16_000:]) ** 2) \
        / np.var(y[16_000:])
    r2 = _r2(m, X[16_000:], y[16_000:])
    print(f"AdaSSP R^2 = {r2:.3f}, OLS {r2_ols:.3f}")
    assert r2 > 0.8 * r2_ols, (r2, r2_ols)


def test_non_private_limit_is_ridge_on_the_appended_column():
    X, y = _table(2000)
    m = DPRegressor(solver="adassp", epsilon=np.inf, alpha=0.1).fit(X, y)
    A = np.column_stack([X, np.ones(len(y))])
    w = np.linalg.solve(A.T @ A + len(y) * 0.1 / 2 * np.eye(4), A.T @ y)
    np.testing.assert_allclose(np.append(m.coef_, m.intercept_), w, rtol=1e-8)


@pytest.mark.parametrize("params, message", [
    (dict(penalty="l1", bounds=1e3, target_bound=10.0), "solver 'adassp' does not support L1"),
    (dict(penalty="elasticnet", bounds=1e3, target_bound=10.0),
     "solver 'adassp' does not support ElasticNet"),
    (dict(loss="huber", bounds=1e3, target_bound=10.0),
     "solver 'adassp' does not support HuberLoss"),
    (dict(bounds=1e3), "y_bound=None: solver 'adassp' needs a PUBLIC bound"),
])
def test_unsupported_settings_are_refused_and_nothing_is_charged(params, message):
    X, y = _table(500)
    budget = BudgetAccountant(epsilon=2.0)
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        DPRegressor(solver="adassp", epsilon=1.0, budget=budget, **params).fit(X, y)
    assert budget.total_spent == (0.0, 0.0)


def test_a_row_chunked_design_is_refused_naming_the_solver():
    da = pytest.importorskip("dask.array")
    X, y = _table(500)
    budget = BudgetAccountant(epsilon=2.0)
    with pytest.raises(ValueError, match=r"solver 'adassp' does not accept a row-chunked \(dask\)"):
        DPRegressor(solver="adassp", epsilon=1.0, budget=budget, bounds=1e5,
                    target_bound=50.0).fit(da.from_array(X, chunks=(100, 3)), y)
    assert budget.total_spent == (0.0, 0.0)


def test_public_bounds_give_the_solver_its_norm_bound():
    X, y = _table(3000)
    m = DPRegressor(solver="adassp", epsilon=1.0, bounds=(X.min(0), X.max(0)), target_bound=10.0,
                    center=None, random_state=1).fit(X, y)
    # unit box, intercept column appended: R = sqrt(p + 1), T = 1 (the target divided by its bound)
    assert m.fit_result_.params["x_norm"] == pytest.approx(math.sqrt(4))
    assert m.fit_result_.params["y_bound"] == 1.0
    assert m.privacy_.epsilon <= 1.0 + 1e-9 and len(m.ledger_) == 3
