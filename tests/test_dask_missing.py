"""A missing value (NaN) in a row-chunked design on a Dask cluster (127.0.0.1): a private fit maps it
by the public rule (the centre), as in memory, and gives the in-memory model; a non-private fit
(ε = ∞) refuses it with one error and no model, as in memory, on every placement of the run."""
import numpy as np
import pytest

pytest.importorskip("distributed")
import dask.array as da
from distributed import Client, LocalCluster
import dp_cd.solvers.chunks as chunks
from dp_cd import DPClassifier


@pytest.fixture(scope="module")
def client():
    "A two-worker cluster on the loopback interface (threads of this process, no dashboard)."
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, host="127.0.0.1", protocol="tcp://",
                      dashboard_address=None) as cluster, Client(cluster) as c:
        yield c


def data(seed=0):
    "4,000 × 5 records, one NaN in a late chunk (rows 2,500 of chunks of 1,000)."
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(4000, 5))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=4000) > 0, 1, -1)
    X[2500, 1] = np.nan
    return X, y


@pytest.mark.parametrize("placement", [None, "spread"])
def test_private_fit_maps_nan_to_the_centre_as_in_memory(client, monkeypatch, placement):
    "ε = 1: the chunked fit gives the in-memory model (NaN ↦ centre on both layouts)."
    X, y = data()
    est = lambda: DPClassifier(epsilon=1.0, bounds=1.0, classes=[-1, 1], random_state=0)
    mem = est().fit(X, y)
    monkeypatch.setattr(chunks, "PLACEMENT", placement)
    far = est().fit(da.from_array(X, chunks=(1000, 5)), da.from_array(y, chunks=1000))
    assert np.all(np.isfinite(far.coef_))
    np.testing.assert_allclose(far.coef_, mem.coef_, rtol=0, atol=1e-9)


@pytest.mark.parametrize("placement", [None, "spread", "one worker"])
def test_non_private_fit_refuses_nan_on_chunks_as_in_memory(client, monkeypatch, placement):
    "ε = ∞: one ValueError naming NaN, no model, in memory and on the cluster alike."
    X, y = data(1)
    with pytest.raises(ValueError, match="NaN"):
        DPClassifier(epsilon=np.inf, classes=[-1, 1], random_state=0).fit(X, y)
    monkeypatch.setattr(chunks, "PLACEMENT", placement)
    est = DPClassifier(epsilon=np.inf, classes=[-1, 1], random_state=0)
    Xd = da.from_array(X.copy(), chunks=(1000, 5), name=f"nan-{placement}")
    with pytest.raises(ValueError, match="NaN"):
        est.fit(Xd, da.from_array(y, chunks=1000))
    assert not hasattr(est, "coef_")


def test_a_refused_fit_leaves_a_persisted_design_intact(client, monkeypatch):
    """A refusal on chunks held by the workers (a NaN, the spread placement) drops the run's holders
    only: the caller's persisted array still computes, and a second fit gives the same error."""
    from dp_cd.model.losses import LogisticLoss
    from dp_cd.model.penalties import L2
    from dp_cd.solvers.dpcd import dp_cd
    X, y = data(2)
    Xd = da.from_array(X, chunks=(1000, 5), name="persisted-nan").persist()
    monkeypatch.setattr(chunks, "PLACEMENT", "spread")
    for _ in range(2):
        with pytest.raises(ValueError, match="NaN"):
            dp_cd(Xd, y.astype(float), LogisticLoss(), L2(1e-3), epsilon=1.0, delta=1e-6,
                  n_passes=1, smoothness=np.full(5, 0.25), random_state=0)
    np.testing.assert_array_equal(Xd.compute(), X)
