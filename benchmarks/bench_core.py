"""Benchmark of the non-private coordinate-descent kernels of `dp_cd.solvers.reference` (one epoch = p proximal
coordinate updates, cyclic order, squared loss + L1, i.e. a Lasso epoch).

For each problem it prints, measured in the same process:
  * the time of one CD epoch divided by the time of one `X.T @ r` product on the same data;
  * scikit-learn's Lasso epoch (Cython), measured as the difference between fits with 105 and 5 epochs
    (tol=0) divided by 100, and the ratio of our epoch to it (ours: mean of epochs 6..25 from w = 0);
  * the same for a logistic-loss epoch (no scikit-learn counterpart; ratio to X.T @ r only).
Problems: California-sized dense (20640 x 8), Electricity-sized dense (45312 x 8) and a sparse CSC problem
with 100,000 features. The real California / Electricity / Dorothea data are used when `DP_CD_DATA` is set
and `dp_cd.datasets` can load them; otherwise synthetic stand-ins of the same shape (the output says which).
Finally it reports numba's first-call (compile) and cached-call times, each in a fresh process with a
private, initially empty cache directory (the repository's own cache is left alone).

    python benchmarks/bench_core.py            # everything
    python benchmarks/bench_core.py --quick    # fewer repetitions
Targets: dense CD epoch <= 2x scikit-learn's epoch; sparse CD epoch <= 2x the CSC X.T @ r.
"""
import os, subprocess, sys, tempfile, time, warnings
import numpy as np
import scipy.sparse as sp
from dp_cd.model.losses import SquaredLoss, LogisticLoss
from dp_cd.model.penalties import L1, L2
from dp_cd.solvers.reference import cd_epoch_dense, cd_epoch_sparse
from dp_cd.utils import as_design

REPEAT = 7

def _best(f, repeat=None):
    ts = []
    for _ in range(repeat or REPEAT):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    return min(ts)

def _load(name):
    "Real data if DP_CD_DATA is set and dp_cd.datasets loads it, else None."
    if not os.environ.get("DP_CD_DATA"): return None
    try:
        from dp_cd import datasets
        return datasets.load(name)
    except Exception as e:  # missing module or file: fall back to synthetic data
        print(f"  (could not load {name!r}: {e}; using a synthetic stand-in)")
        return None

def problem(kind, seed=0):
    rng = np.random.default_rng(seed)
    if kind in ("california", "electricity"):
        n = 20640 if kind == "california" else 45312
        ds = _load(kind)
        if ds is not None:
            X, _ = as_design(ds.X); y = np.asarray(ds.y, dtype=float)
            src = f"real {kind} data"
        else:
            X = np.asfortranarray(rng.normal(size=(n, 8)) * np.logspace(-1, 1, 8))
            y = X @ rng.normal(size=8) + rng.normal(size=n)
            src = f"synthetic stand-in {n} x 8"
        if kind == "electricity" and ds is not None:
            y_cls = y; y = X @ rng.normal(size=X.shape[1]) + rng.normal(size=X.shape[0])   # regression labels for the Lasso epoch
        else:
            y_cls = np.where(y > np.median(y), 1.0, -1.0)
        return X, y, y_cls, src
    ds = _load("dorothea")
    if ds is not None:
        X, _ = as_design(ds.X); y_cls = np.asarray(ds.y, float)
        y = X @ rng.normal(size=X.shape[1]) + rng.normal(size=X.shape[0])
        return X, y, y_cls, f"real dorothea data {X.shape[0]} x {X.shape[1]}, nnz={X.nnz}"
    n, p = 10_000, 100_000
    X = sp.random(n, p, density=1e-3, format="csc", random_state=seed, data_rvs=rng.standard_normal)
    X, _ = as_design(X)
    y = X @ (rng.normal(size=p) * (rng.random(p) < 0.01)) + rng.normal(size=n)
    return X, y, np.where(y > 0, 1.0, -1.0), f"synthetic CSC {n} x {p}, nnz={X.nnz}"

def epoch_time(X, y, loss, pen, warm=5, epochs=20):
    "Mean time of epochs warm+1 .. warm+epochs from w = 0 (like the scikit-learn measurement below)."
    n, p = X.shape
    M = loss.coordinate_smoothness(X); steps = np.where(M > 0, 1 / np.where(M > 0, M, 1), 0.0)
    sparse = sp.issparse(X)
    def run(w, z, order):
        if sparse: cd_epoch_sparse(*loss.kernel_args(), *pen.kernel_args(), (X.data, X.indices, X.indptr), y, z, w, steps, order)
        else: cd_epoch_dense(*loss.kernel_args(), *pen.kernel_args(), X, y, z, w, steps, order)
    w0, z0 = np.zeros(p), np.zeros(n)
    run(w0, z0, np.tile(np.arange(p, dtype=np.int64), warm))
    order = np.tile(np.arange(p, dtype=np.int64), epochs)
    def timed(): run(w0.copy(), z0.copy(), order)
    timed()
    return _best(timed) / epochs

def sklearn_epoch(X, y, lam):
    from sklearn.linear_model import Lasso
    if sp.issparse(X):   # scikit-learn wants 32-bit sparse indices
        Xs = sp.csc_matrix((X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)), shape=X.shape)
    else: Xs = X
    def fit(k): Lasso(alpha=lam / 2, max_iter=k, tol=0.0, fit_intercept=False, selection="cyclic").fit(Xs, y)
    fit(2)
    k1, k2 = 5, 105
    return max(_best(lambda: fit(k2), 3) - _best(lambda: fit(k1), 3), 1e-9) / (k2 - k1)

_PROBE = r"""
import time, numpy as np, scipy.sparse as sp
t0 = time.perf_counter()
from dp_cd.solvers.reference import cd_epoch_dense, cd_epoch_sparse
from dp_cd.model.penalties import L1
from dp_cd.model.losses import SquaredLoss, LogisticLoss
t1 = time.perf_counter()
X = np.asfortranarray(np.random.default_rng(0).normal(size=(50, 4))); y = X.sum(1); pen = L1(0.1)
o = np.arange(4, dtype=np.int64); s = np.ones(4)
t2 = time.perf_counter()
cd_epoch_dense(*SquaredLoss().kernel_args(), *pen.kernel_args(), X, y, np.zeros(50), np.zeros(4), s, o)
t3 = time.perf_counter()
Xc = sp.csc_matrix(X); Xc.indices = Xc.indices.astype(np.int64); Xc.indptr = Xc.indptr.astype(np.int64)
t4 = time.perf_counter()
cd_epoch_sparse(*LogisticLoss().kernel_args(), *pen.kernel_args(), (Xc.data, Xc.indices, Xc.indptr), np.sign(y), np.zeros(50), np.zeros(4), s, o)
t5 = time.perf_counter()
print(f"{t1 - t0:.3f} {t3 - t2:.3f} {t5 - t4:.3f}")
"""

def compile_times():
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, NUMBA_CACHE_DIR=d)
        out = []
        for _ in range(2):
            r = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, check=True)
            out.append([float(v) for v in r.stdout.split()])
    return out

if __name__ == "__main__":
    if "--quick" in sys.argv: REPEAT = 3
    from sklearn.exceptions import ConvergenceWarning
    warnings.simplefilter("ignore", ConvergenceWarning)
    for kind in ("california", "electricity", "sparse"):
        X, y, y_cls, src = problem(kind)
        lam = 0.05 * 2 * np.abs(X.T @ y).max() / X.shape[0]   # 5% of lambda_max: a non-trivial Lasso
        r = np.random.default_rng(1).normal(size=X.shape[0])
        t_xtr = _best(lambda: X.T @ r, repeat=max(REPEAT, 30))
        if sp.issparse(X):   # scipy is faster with 32-bit indices; dp_cd's CSC designs use 64-bit ones
            X32 = sp.csc_matrix((X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)), shape=X.shape)
            t_xtr32 = _best(lambda: X32.T @ r, repeat=max(REPEAT, 30))
        t_cd = epoch_time(X, y, SquaredLoss(), L1(lam))
        t_log = epoch_time(X, y_cls, LogisticLoss(), L2(1e-3))
        t_sk = sklearn_epoch(X, y, lam)
        print(f"{kind:12s} [{src}], lambda = 0.05 lambda_max")
        print(f"   X.T @ r             {t_xtr * 1e3:9.3f} ms" + (f" (with 32-bit indices: {t_xtr32 * 1e3:.3f} ms; CD epoch = {t_cd / t_xtr32:.2f} x that)" if sp.issparse(X) else ""))
        print(f"   CD epoch, Lasso     {t_cd * 1e3:9.3f} ms = {t_cd / t_xtr:5.2f} x (X.T @ r) = {t_cd / t_sk:5.2f} x scikit-learn Lasso epoch ({t_sk * 1e3:.3f} ms)")
        print(f"   CD epoch, logistic  {t_log * 1e3:9.3f} ms = {t_log / t_xtr:5.2f} x (X.T @ r)")
    (imp1, d1, s1), (imp2, d2, s2) = compile_times()
    print(f"numba first call (fresh cache, compiles): import {imp1:.2f} s, dense epoch kernel {d1:.2f} s, sparse {s1:.2f} s")
    print(f"numba cached call (second process):        import {imp2:.2f} s, dense epoch kernel {d2:.3f} s, sparse {s2:.3f} s")
