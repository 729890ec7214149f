"""dp_cd.solvers.reference against scikit-learn (test-only dependency) on dense and CSC inputs.

Scalings (book: F(w) = (1/n) sum_i loss_i + psi(w), squared loss without 1/2):
  Lasso(alpha = lam/2), ElasticNet(alpha = lam/2, l1_ratio = rho), Ridge(alpha = n lam / 2),
  LogisticRegression(C = 1/(n lam)) for psi = (lam/2)||w||^2 and, with penalty="l1", for psi = lam ||w||_1.
"""
import warnings
import numpy as np
import pytest
import scipy.sparse as sp

sklm = pytest.importorskip("sklearn.linear_model")
from dp_cd.model.losses import SquaredLoss, LogisticLoss
from dp_cd.model.penalties import L1, L2, ElasticNet
from dp_cd.solvers.reference import solve, reference_optimum


def _data(seed=0, n=120, p=15):
    r = np.random.default_rng(seed)
    X = r.normal(size=(n, p)) * r.uniform(0.2, 3, p)
    X[np.abs(X) < 0.4] = 0.0
    w = np.where(r.random(p) < 0.4, r.normal(size=p), 0.0)
    y = X @ w + 0.3 * r.normal(size=n)
    yc = np.where(X @ w + 0.5 * r.normal(size=n) > 0, 1.0, -1.0)
    return X, y, yc


def _cases(n, lam):
    return [
        ("lasso", SquaredLoss(), L1(lam), lambda: sklm.Lasso(alpha=lam / 2, fit_intercept=False, tol=1e-14, max_iter=100_000)),
        ("enet", SquaredLoss(), ElasticNet(lam, 0.7), lambda: sklm.ElasticNet(alpha=lam / 2, l1_ratio=0.7, fit_intercept=False, tol=1e-14, max_iter=100_000)),
        ("ridge", SquaredLoss(), L2(lam), lambda: sklm.Ridge(alpha=n * lam / 2, fit_intercept=False, solver="cholesky")),
        ("logreg_l2", LogisticLoss(), L2(lam), lambda: sklm.LogisticRegression(C=1 / (n * lam), fit_intercept=False, tol=1e-14, max_iter=10_000)),
        ("logreg_l1", LogisticLoss(), L1(lam), lambda: sklm.LogisticRegression(penalty="l1", solver="liblinear", C=1 / (n * lam),
                                                                              fit_intercept=False, tol=1e-14, max_iter=100_000)),
    ]


@pytest.mark.parametrize("fmt", ["dense", "csc", "csr"])
@pytest.mark.parametrize("case", range(5))
@pytest.mark.parametrize("method", ["cd", "pgd"])
def test_matches_sklearn(fmt, case, method):
    X, y, yc = _data()
    n = X.shape[0]
    name, loss, pen, make = _cases(n, 0.05)[case]
    yy = yc if loss.name == "logistic" else y
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        w_sk = make().fit(X, yy).coef_.ravel()
    Xin = {"dense": X, "csc": sp.csc_matrix(X), "csr": sp.csr_matrix(X)}[fmt]
    res = solve(Xin, yy, loss, pen, method=method, tol=1e-13, max_iter=200_000, accelerated=True)
    assert res.converged, res
    # liblinear's l1 solver stops on its own criterion: compare objective values there, coefficients elsewhere
    if name == "logreg_l1":
        F_sk = loss.value(X, yy, w_sk) + pen.value(w_sk)
        assert res.objective <= F_sk + 1e-9 * F_sk
        np.testing.assert_allclose(res.coef, w_sk, atol=1e-4)
    else:
        np.testing.assert_allclose(res.coef, w_sk, atol=1e-6 * max(1, np.abs(w_sk).max()), rtol=0)


def test_reference_optimum_certified():
    X, y, _ = _data(1)
    F, res = reference_optimum(X, y, SquaredLoss(), L1(0.1), return_result=True)
    assert res.converged and res.criterion <= 1e-12
    # any point is no better than F*, up to the certified relative precision
    for w in np.random.default_rng(2).normal(size=(20, X.shape[1])) * 0.1 + res.coef:
        assert SquaredLoss().value(X, y, w) + L1(0.1).value(w) >= F * (1 - 1e-12)
