"""Checks of the real-data loaders of `dp_cd.datasets` on the files of the data directory.

Run with the data directory in `DP_CD_DATA` (e.g. `DP_CD_DATA=/path/to/data pytest tests/test_datasets_real.py`);
without it every test is skipped with the reason below. The facts checked come from the data README
and the papers (first California row, class counts, shapes).
"""
import os
import numpy as np
import pytest
from dp_cd import datasets as D

pytestmark = pytest.mark.skipif(not os.environ.get("DP_CD_DATA"),
                                reason="DP_CD_DATA is not set: real datasets are not available (set it to the data directory to run these tests)")


def test_checksums():
    res = D.verify_checksums()
    assert res and all(res.values()), res


def test_available_all_present():
    st = {s.name: s for s in D.available()}
    assert set(st) == set(D.NAMES)
    assert all(s.present for s in st.values()), [s for s in st.values() if not s.present]


def test_california_first_row():
    ca = D.load("california")
    assert ca.X.shape == (20640, 8) and ca.task == "regression"
    np.testing.assert_allclose(ca.X[0], [8.3252, 41.0, 880 / 126, 129 / 126, 322.0, 322 / 126, 37.88, -122.23], rtol=1e-12)
    assert abs(ca.X[0, 2] - 6.984126984) < 1e-8
    assert abs(ca.y[0] - 4.526) < 1e-12


def test_california_balanced_variant():
    ca = D.load("california", standardize=True)
    np.testing.assert_allclose(ca.X.mean(0), 0, atol=1e-10)
    np.testing.assert_allclose(ca.X.std(0), 1, atol=1e-10)
    raw = D.load("california")
    M = (raw.X ** 2).mean(0)  # coordinate-wise smoothness constants up to the loss' factor
    assert M.max() / M.min() > 1e3  # the raw features are imbalanced


def test_electricity():
    el = D.load("electricity")
    assert el.X.shape == (45312, 8)
    assert int((el.y == 1).sum()) == 19237 and int((el.y == -1).sum()) == 26075


def test_madelon():
    ma = D.load("madelon")
    assert ma.X.shape == (2600, 500)
    assert int((ma.y == 1).sum()) == 1300


def test_dorothea():
    do = D.load("dorothea")
    assert do.is_sparse and do.X.format == "csc"
    assert do.X.shape == (350, 100_000)
    assert int((do.y == 1).sum()) == 34
    assert set(np.unique(do.X.data)) == {1.0}


def test_adult():
    tr, te, al = D.load("adult"), D.load("adult", split="test"), D.load("adult", split="all")
    assert (tr.n, te.n, al.n) == (32561, 16281, 48842)
    assert tr.p == te.p == 103 and tr.feature_names == te.feature_names
    assert set(np.unique(tr.sensitive)) == {0, 1}
    assert not any(n.startswith("sex=") for n in tr.feature_names)
    assert D.load("adult", missing="drop").n == 30162  # complete training rows (UCI)
    assert D.load("adult", split="test", missing="drop").n == 15060


def test_phishing():
    ph = D.load("phishing")
    assert ph.X.shape == (11055, 30)
    oh = D.load("phishing", one_hot=True)
    assert oh.p == 68
    np.testing.assert_array_equal(oh.X.sum(1), 30)


def test_celeba():
    ce = D.load("celeba")
    assert ce.X.shape == (20000, 38)
    assert "Smiling" not in ce.feature_names and "Male" not in ce.feature_names
    assert set(np.unique(ce.sensitive)) == {0, 1}
    assert set(np.unique(ce.X)) == {-1.0, 1.0}


def test_row_norm_bound():
    ad = D.load("adult", standardize=True, row_norm=1.0)
    assert np.linalg.norm(ad.X, axis=1).max() <= 1 + 1e-12
