"""DP-CD pass before and after the per-loss kernels, in one process (issue #17's table).

For each problem it times, alternately: one `X.T @ r` (the memory-bound floor), one DP-CD pass
(p clipped, noisy proximal coordinate updates) with the kernels the solver runs now
(`dpcd_inner_dense` / `dpcd_inner_sparse`), the same pass with the reference loop of the previous
kernels (`ref_clipped_coord_sum_*`: one loop for every loss, libm `exp`, then `update_pred_*`),
and, for the squared loss, one epoch of scikit-learn's (non-private) `Lasso` (difference of fits
with 105 and 5 epochs, tol=0, over 100). Problems: California (squared) and Electricity
(logistic) when `DP_CD_DATA` has them (else same-shaped synthetic data), dense 10^5 x 100 and
CSC 10^5 x 10^4 at 1 % (both losses). Every time is the best of k; the floor is ticked before each timed
call (`floor.Floor`), so that it and the kernels meet the same load, and every row stores the floor's best and
median tick next to both kernels' times. The clock (`--timer`) is by default the CPU time of the process
(everything here runs on one thread): on a loaded machine a call longer than a time slice is preempted, so its
wall-clock time grows with the load while the floor's, shorter than a slice, does not. Writes
`results/dpcd_kernels.csv`.

    python benchmarks/bench_dpcd.py [--quick] [--timer cpu|wall] [--out benchmarks/results/dpcd_kernels.csv]
"""
import argparse, csv, os, sys, time, warnings
for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")   # single-threaded, like the kernels (before numpy loads BLAS)
from pathlib import Path
import numpy as np
import scipy.sparse as sp
from numba import njit
from dp_cd.solvers.dpcd import dpcd_inner_dense, dpcd_inner_sparse, noise_blocks
from dp_cd.solvers.dpcd import _step, _finish_average
from dp_cd.model.losses import (SquaredLoss, LogisticLoss, ref_clipped_coord_sum_dense,
                                ref_clipped_coord_sum_sparse, update_pred_dense, update_pred_sparse)
from dp_cd.model.penalties import L1, L2
from dp_cd.utils import as_design
from dp_cd import datasets
sys.path.insert(0, str(Path(__file__).parent))
from floor import Floor, between


@njit(cache=True)
def _before_dense(loss, penalty, X, y, z, w, block, scales):
    "The DP-CD pass of the previous kernels (coordinate-wise clipping), for the comparison."
    (coords, noise), (steps, clips) = block, scales
    last = np.ones(w.shape[0], dtype=np.int64)
    for k in range(coords.shape[0]):
        j = coords[k]
        g = ref_clipped_coord_sum_dense(loss[0], loss[1], X, y, z, j, clips[j]) / X.shape[0]
        change = _step(penalty, w, j, g, noise[k], steps[j], k, None, last)
        if change != 0.0: update_pred_dense(X, z, j, change)


@njit(cache=True)
def _before_sparse(loss, penalty, X, y, z, w, block, scales):
    (data, indices, indptr), (coords, noise), (steps, clips) = X, block, scales
    last = np.ones(w.shape[0], dtype=np.int64)
    for k in range(coords.shape[0]):
        j = coords[k]
        g = ref_clipped_coord_sum_sparse(loss[0], loss[1], data, indices, indptr, y, z, j,
                                         clips[j]) / z.shape[0]
        change = _step(penalty, w, j, g, noise[k], steps[j], k, None, last)
        if change != 0.0: update_pred_sparse(data, indices, indptr, z, j, change)


CLOCK = time.process_time   # --timer cpu (default); wall: time.perf_counter


def best_of(f, k):
    ts = []
    for _ in range(k):
        between()   # the active floor's tick
        t = CLOCK()
        f()
        ts.append(CLOCK() - t)
    return min(ts)


def problems(quick):
    rng = np.random.default_rng(0)
    n_big = 20_000 if quick else 100_000
    for name, task in (("california", "regression"), ("electricity", "classification")):
        try:
            ds = datasets.load(name, None, standardize=True)
            X, y, src = np.asfortranarray(ds.X, dtype=float), np.asarray(ds.y, float), "real"
        except Exception:
            n = 20640 if name == "california" else 45312
            X = np.asfortranarray(rng.normal(size=(n, 8)))
            y = X @ rng.normal(size=8) + rng.normal(size=n)
            y = np.where(y > 0, 1.0, -1.0) if task == "classification" else y
            src = "synthetic stand-in"
        yield name, src, X, y, ([SquaredLoss()] if task == "regression" else [LogisticLoss()])
    X = np.asfortranarray(rng.normal(size=(n_big, 100)))
    y = X @ rng.normal(size=100) / 10 + rng.normal(size=n_big)
    yield f"dense {n_big}x100", "synthetic", X, y, [SquaredLoss(), LogisticLoss()]
    Xs = as_design(sp.random(n_big, 10_000, density=0.01, format="csc", random_state=1,
                             data_rvs=rng.standard_normal))[0]
    y = Xs @ rng.normal(size=10_000) / 10 + rng.normal(size=n_big)
    yield f"sparse {n_big}x10000 1%", "synthetic", Xs, y, [SquaredLoss(), LogisticLoss()]


def bench(name, src, X, y, loss, k, passes=2):
    n, p = X.shape
    sparse = sp.issparse(X)
    y = np.where(y > np.median(y), 1.0, -1.0) if isinstance(loss, LogisticLoss) else y
    M = np.maximum(loss.coordinate_smoothness(X), 1e-12)
    pen = L1(0.01) if isinstance(loss, SquaredLoss) else L2(1e-3)
    scales = (0.5 / M, np.sqrt(M / M.sum()))
    block = next(noise_blocks(np.random.default_rng(0), np.full(p, 1e-3), 1, passes * p))
    design = (X.data, X.indices, X.indptr) if sparse else X
    now, before = (dpcd_inner_sparse, _before_sparse) if sparse else (dpcd_inner_dense, _before_dense)
    args = lambda: (loss.kernel_args(), pen.kernel_args(), design, y, np.zeros(n),
                    np.zeros(p), block, scales)
    now(*args())
    before(*args())
    r = np.random.default_rng(1).normal(size=n)
    with Floor(X, r, CLOCK) as fl:   # ticked before every timed call below
        t_now, t_before = np.inf, np.inf
        for _ in range(k):   # alternately, best of k each
            t_now = min(t_now, best_of(lambda: now(*args()), 1) / passes)
            t_before = min(t_before, best_of(lambda: before(*args()), 1) / passes)
    floor = fl.best
    row = dict(problem=name, source=src, n=n, p=p, nnz=X.nnz if sparse else n * p, loss=loss.name,
               floor_s=floor, pass_now_s=t_now, pass_before_s=t_before,
               now_vs_floor=t_now / floor, before_vs_floor=t_before / floor,
               speedup=t_before / t_now, sklearn_epoch_s=None, now_vs_sklearn=None,
               before_vs_sklearn=None, floor_median_s=fl.median, floor_ticks=len(fl.ticks),
               load=os.getloadavg()[0], timer="cpu" if CLOCK is time.process_time else "wall")
    if isinstance(loss, SquaredLoss) and not sparse:
        from sklearn.linear_model import Lasso
        fit = lambda it: Lasso(alpha=0.005, max_iter=it, tol=0.0, fit_intercept=False).fit(X, y)
        fit(2)
        t_sk = max(best_of(lambda: fit(105), min(k, 3)) - best_of(lambda: fit(5), min(k, 3)), 1e-9) / 100
        row.update(sklearn_epoch_s=t_sk, now_vs_sklearn=t_now / t_sk, before_vs_sklearn=t_before / t_sk)
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--timer", choices=("cpu", "wall"), default="cpu", help="CPU time of the process or wall-clock")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "dpcd_kernels.csv"))
    args = ap.parse_args(argv)
    global CLOCK
    CLOCK = time.process_time if args.timer == "cpu" else time.perf_counter
    warnings.simplefilter("ignore")
    k = 3 if args.quick else 7
    rows = []
    for name, src, X, y, losses in problems(args.quick):
        for loss in losses:
            rows.append(bench(name, src, X, y, loss, k))
            r = rows[-1]
            sk = "" if r["now_vs_sklearn"] is None else (
                f"; vs sklearn Lasso epoch {r['before_vs_sklearn']:.2f} -> {r['now_vs_sklearn']:.2f}")
            print(f"{name:24s} {loss.name:9s} pass / X.T@r: before {r['pass_before_s'] * 1e3:.4f} ms / "
                  f"{r['floor_s'] * 1e3:.4f} ms = {r['before_vs_floor']:6.2f}, now {r['pass_now_s'] * 1e3:.4f} ms / "
                  f"{r['floor_s'] * 1e3:.4f} ms = {r['now_vs_floor']:6.2f} (x{r['speedup']:.1f}); floor median "
                  f"{r['floor_median_s'] * 1e3:.4f} ms over {r['floor_ticks']} ticks{sk}", flush=True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"-> wrote {out}; load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
