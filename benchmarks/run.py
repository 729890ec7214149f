"""The single benchmark command of dp_cd: speed, compile/cache, memory, utility against peers, scaling.

    python benchmarks/run.py [--quick] [--out benchmarks/results] [--only speed,compile,memory,utility,scale,accounting,rawtables]
    python benchmarks/run.py --only compile,speed   (also: import time, first fit per layout, recompiles, threads under load;
                                                     --only threads: the threads alone)
    python benchmarks/run.py --only breakdown   (where the time of the kernels above their goals goes)
    python benchmarks/run.py --only import   (the import rows of first_fit.csv alone: best of 7 processes)
    python benchmarks/run.py --only dask,ooc,block_utility   (the Dask path: benchmarks/bench_dask.py)
                             [--data-dir /work/shared/data]

Everything runs in one process on the same data (compile/cache and memory use fresh subprocesses, by design)
and prints ratios; every table is also written as a CSV under `--out` (the book chapter
`nbs/07_evidence/04_performance.ipynb` reads those CSVs). Real datasets come from `--data-dir` or `$DP_CD_DATA`; when
they are missing, same-shaped synthetic data stand in (the CSVs say which).

The utility comparison needs diffprivlib, which does not import with scikit-learn >= 1.8: run this
command in the benchmark virtualenv described in `benchmarks/README.md` (`benchmarks/requirements.txt`).
Without diffprivlib the peer rows are skipped with a message, the rest runs.

Timings on a shared machine are noisy: every time is the best of k repetitions, and the tables report
ratios between quantities measured back to back in the same process (robust to load) next to the times.
"""
import argparse, csv, json, os, subprocess, sys, tempfile, time, tracemalloc, warnings
for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")   # single-threaded BLAS like the (serial) kernels; threads fight over 2 shared cores
from pathlib import Path
import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize

from dp_cd.utils import PrivacyLeakWarning
from dp_cd.model.losses import SquaredLoss, LogisticLoss
from dp_cd.model.penalties import L1, L2
from dp_cd.solvers.dpcd import dp_cd
from dp_cd import datasets
from floor import Floor, between   # the floor X.T @ r, ticked between the timings

try: from dp_cd.solvers.dpsgd import dp_sgd
except ImportError: dp_sgd = None
try: from dp_cd.solvers.dpgcd import dp_gcd
except ImportError: dp_gcd = None

MIN_TIME = 0.05   # seconds: smallest measured difference of the marginal-cost timings (`--min-time`)

# Thesis Table D.2 (C++/Eigen, i7-10610U laptop, mean over 10 runs, "imbalanced" rows), seconds.
THESIS_D2 = {("california", "dp_cd", 50): 0.0647, ("electricity", "dp_cd", 50): 0.2457,
             ("california", "dp_sgd", 50): 0.6476, ("electricity", "dp_sgd", 50): 1.8588,
             ("california", "dp_cd", 10): 0.0130, ("electricity", "dp_cd", 10): 0.0500,
             ("california", "dp_sgd", 10): 0.1318, ("electricity", "dp_sgd", 10): 0.3321}

# the speed section's clock (--timer): wall-clock, or the CPU time of the whole process, which on a
# loaded machine leaves out the time the process waits to be scheduled (a call longer than a time
# slice is preempted: its wall-clock time grows with the load, its CPU time does not)
CLOCK = time.perf_counter

def best_of(f, k):
    "Smallest time of `k` calls of `f()` (by `CLOCK`); the active `Floor`, if any, is ticked before each."
    ts = []
    for _ in range(k):
        between()
        t = CLOCK(); f(); ts.append(CLOCK() - t)
    return min(ts)

def write_csv(rows, path):
    if not rows: return
    keys = list(dict.fromkeys(k for r in rows for k in r))
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, keys); w.writeheader(); w.writerows(rows)
    print(f"  -> wrote {path}")

def quiet():
    warnings.simplefilter("ignore", PrivacyLeakWarning)
    warnings.simplefilter("ignore", UserWarning)
    warnings.simplefilter("ignore", RuntimeWarning)
    try:
        from sklearn.exceptions import ConvergenceWarning
        warnings.simplefilter("ignore", ConvergenceWarning)
    except ImportError: pass

def load_problem(name, data_dir, n_max=None):
    """Standardised real dataset (or a same-shaped synthetic stand-in); returns (X, y, source)."""
    shapes = {"california": (20640, 8, "regression"), "electricity": (45312, 8, "classification"),
              "adult": (32561, 103, "classification"), "phishing": (11055, 30, "classification")}
    try:
        ds = datasets.load(name, data_dir, standardize=True)
        X, y, src = np.asarray(ds.X, dtype=float), np.asarray(ds.y, dtype=float), "real"
    except Exception as e:  # missing files: synthetic data of the same shape
        n, p, task = shapes[name]
        rng = np.random.default_rng(0)
        X = rng.normal(size=(n, p)); y = X @ rng.normal(size=p) + rng.normal(size=n)
        if task == "classification": y = np.where(y > 0, 1.0, -1.0)
        src = f"synthetic stand-in ({type(e).__name__})"
    if n_max is not None and X.shape[0] > n_max:
        idx = np.random.default_rng(1).permutation(X.shape[0])[:n_max]; X, y = X[idx], y[idx]
    return np.asfortranarray(X), y, src

def marginal(run, a, k, target=None, cap=None):
    """Cost of one unit (pass, epoch, iteration) from the difference of runs with `b` and `a` units, which removes
    the fixed set-up cost; `b - a` doubles until the difference takes at least `target` seconds (or `b` reaches `cap`).
    The cap (default 2^20 units) matters when a run stops early: scikit-learn's Lasso ends once its duality gap is
    exactly 0 even with tol=0, so on a small easy problem more iterations never cost more time."""
    target = MIN_TIME if target is None else target
    cap = (1 << 20) if cap is None else cap
    m = 1
    while True:
        b = a + m
        t = CLOCK(); run(a); ta = CLOCK() - t
        t = CLOCK(); run(b); tb = CLOCK() - t
        if tb - ta >= target or b >= cap: break
        m *= 2
    d = best_of(lambda: run(b), k) - best_of(lambda: run(a), k)
    return d / m if d > 0 else best_of(lambda: run(b), k) / b   # load spike: fall back to the whole call

def gcd_kwargs():
    "Name of DP-GCD's iteration-count argument (the solvers' contract: n_passes, one pass = one DP-GCD iteration)."
    import inspect
    params = inspect.signature(dp_gcd).parameters
    for name in ("n_passes", "n_iter", "n_iterations", "max_iter", "n_steps", "T"):
        if name in params: return name
    return None

# ------------------------------------------------------------------------------------------------ speed
def bench_speed(args):
    from sklearn.linear_model import Lasso, LogisticRegression
    k = args.repeat or (3 if args.quick else 7)
    rows = []
    for name, loss, pen, lam in [("california", SquaredLoss(), L1, 0.1), ("electricity", LogisticLoss(), L2, 1e-3)]:
        X, y, src = load_problem(name, args.data_dir, args.n_max or (5000 if args.quick else None))
        n, p = X.shape; delta = 1.0 / n**2
        M = loss.coordinate_smoothness(X)   # constants passed explicitly: the timing excludes nothing hidden
        r = np.random.default_rng(0).normal(size=n)
        floor = Floor(X, r, CLOCK).__enter__()   # ticked before every timed call of this dataset
        first = len(rows)
        def row(what, unit, seconds, ref=None, note=""):   # vs_floor: at the end, with the floor's best tick
            rows.append(dict(dataset=name, source=src, n=n, p=p, what=what, unit=unit, seconds=seconds,
                             vs_floor=None, reference_seconds=ref,
                             vs_reference=None if ref is None else seconds / ref, note=note))
        row("floor X.T @ r", "product", np.nan, note="memory-bound floor: reads X once; best of the ticks "
            "interleaved with the timings below")
        cd = lambda P: dp_cd(X, y, loss, pen(lam), epsilon=1.0, delta=delta, n_passes=P, step=1.0, clip=1.0, smoothness=M, random_state=0)
        cd(2)   # compile / load the cache
        row("DP-CD pass", "pass", marginal(cd, 5, k), note="marginal cost (difference of runs)")
        cds = lambda P: dp_cd(X, y, loss, pen(lam), epsilon=1.0, delta=delta, n_passes=P, step=1.0, clip=1.0, clipping="sample", smoothness=M, random_state=0)
        cds(2)
        row("DP-CD pass (per-sample clipping)", "pass", marginal(cds, 5, k), note="clipping='sample': permutation order; marginal cost")
        from dp_cd import DPClassifier, DPRegressor
        Est, kw = (DPClassifier, dict(classes=[-1.0, 1.0])) if name == "electricity" else (DPRegressor, {})
        est = lambda P: Est(epsilon=1.0, n_passes=int(P), random_state=0, **kw).fit(X, y)
        est(2)
        row("DP-CD pass (estimator)", "pass", marginal(est, 5, k),
            note=f"{Est.__name__}'s defaults: private bounds, scaled copy, per-sample clipping, the intercept "
                 "(p + 1 updates a pass); marginal cost")
        for P in (10, 50):
            row(f"DP-CD {P} passes (full call)", "call", best_of(lambda: cd(P), k), THESIS_D2.get((name, "dp_cd", P)),
                note="reference: thesis Table D.2 (C++)")
        t_pass = next(r["seconds"] for r in rows if r["dataset"] == name and r["what"] == "DP-CD pass")
        t_10 = next(r["seconds"] for r in rows if r["dataset"] == name and r["what"] == "DP-CD 10 passes (full call)")
        row("DP-CD fixed set-up", "call", max(t_10 - 10 * t_pass, 0.0), note="10-pass call minus 10 passes: validation, noise calibration (GDP)")
        if dp_sgd is not None and "dp_sgd" in args.solvers:
            L = loss.smoothness(X)
            sgd = lambda P, B=1, acc="pld": dp_sgd(X, y, loss, pen(lam), epsilon=1.0, delta=delta, n_passes=P, step=1.0 / L, clip=1.0,
                                                   batch_size=B, accountant=acc, random_state=0)
            sgd(0.1)
            # marginal epochs with the RDP accountant: the PLD accountant's cost grows with the number of steps T
            # (it composes T events), so with it a difference of runs would charge accounting to the epochs
            row("DP-SGD epoch (batch 1)", "pass", marginal(lambda P: sgd(P, 1, "rdp"), 0.5, k, cap=8.5),
                note="n steps of one sample; marginal cost (accountant='rdp': no accounting in the difference)")
            row("DP-SGD epoch (batch 64)", "pass", marginal(lambda P: sgd(P, 64, "rdp"), 1, k, cap=33),
                note="n/64 steps; marginal cost (accountant='rdp': no accounting in the difference)")
            t_e = rows[-2]["seconds"]
            g = np.random.default_rng(0)
            row("n*p Gaussian draws", "pass", best_of(lambda: g.standard_normal((n, p)), k),
                note="the noise DP-SGD with batch 1 must draw per epoch: a floor for its epoch")
            for P in ((10,) if args.quick else (10, 50)):
                row(f"DP-SGD {P} passes (batch 1, full call)", "call", best_of(lambda: sgd(P), min(k, 3) if P == 50 else k),
                    THESIS_D2.get((name, "dp_sgd", P)), note="reference: thesis Table D.2 (C++)")
                if P == 10: row("DP-SGD fixed set-up", "call", max(rows[-1]["seconds"] - 10 * t_e, 0.0),
                                note="10-pass call minus 10 epochs: validation, RDP calibration of the subsampled Gaussian")
        elif dp_sgd is None: print("  dp_cd.solvers.dpsgd.dp_sgd not available: DP-SGD rows skipped")
        if dp_gcd is not None and gcd_kwargs() is not None and "dp_gcd" in args.solvers:
            it = gcd_kwargs()
            gcd = lambda T: dp_gcd(X, y, loss, pen(lam), epsilon=1.0, delta=delta, **{it: int(T)}, smoothness=M, random_state=0)
            try:
                gcd(2)
                row("DP-GCD iteration", "iteration", marginal(gcd, 5, k),
                    note="one greedy (noisy argmax over p gradient entries) update; marginal cost")
            except Exception as e: print(f"  DP-GCD skipped: {e!r}")
        elif dp_gcd is None: print("  dp_cd.solvers.dpgcd.dp_gcd not available: DP-GCD rows skipped")
        # scikit-learn, non-private
        if name == "california":
            sk = lambda it: Lasso(alpha=lam / 2, max_iter=int(it), tol=0.0, fit_intercept=False).fit(X, y)
            sk(2)
            row("sklearn Lasso epoch", "pass", marginal(sk, 5, k), note="non-private; marginal cost")
            row("sklearn Lasso fit (default tol)", "call",
                best_of(lambda: Lasso(alpha=lam / 2, fit_intercept=False).fit(X, y), k), note="non-private, to convergence")
        else:
            C = 1.0 / (lam * n)
            m = LogisticRegression(C=C, fit_intercept=False).fit(X, y)
            t = best_of(lambda: LogisticRegression(C=C, fit_intercept=False).fit(X, y), k)
            row("sklearn LogisticRegression fit (lbfgs)", "call", t, note=f"non-private, to convergence ({int(m.n_iter_[0])} iterations)")
            row("sklearn LogisticRegression iteration", "iteration", t / max(1, int(m.n_iter_[0])), note="fit time / n_iter_")
        floor.__exit__()
        rows[first]["seconds"] = floor.best
        for r_ in rows[first:]: r_.update(vs_floor=r_["seconds"] / floor.best, **floor.fields())
        print(f"  {name}: {floor}")
    for r in rows:
        ref = "" if r["vs_reference"] is None else f"  = {r['vs_reference']:6.2f} x published C++ ({r['reference_seconds']} s)"
        print(f"  {r['dataset']:12s} {r['what']:40s} {r['seconds'] * 1e3:10.3f} ms / floor {r['floor_s'] * 1e3:.4f} ms "
              f"= {r['vs_floor']:8.2f} x floor{ref}")
    return rows

# ------------------------------------------------------------------------------------------------ compile
COMPILE_SNIPPET = r"""
import time, json, warnings, sys
t0 = time.perf_counter()
import numpy as np
from dp_cd.model.losses import LogisticLoss; from dp_cd.model.penalties import L2
from dp_cd.solvers.dpcd import dp_cd
try: from dp_cd.solvers.dpsgd import dp_sgd
except ImportError: dp_sgd = None
t1 = time.perf_counter()
warnings.simplefilter("ignore")
rng = np.random.default_rng(0); X = rng.normal(size=(2000, 10)); y = np.sign(X @ rng.normal(size=10))
out = {"import": t1 - t0}
def f_cd(): dp_cd(X, y, LogisticLoss(), L2(1e-3), epsilon=1.0, delta=1e-6, n_passes=2, smoothness=np.ones(10), random_state=0)
def f_sgd(): dp_sgd(X, y, LogisticLoss(), L2(1e-3), epsilon=1.0, delta=1e-6, n_passes=1, step=0.1, batch_size=8, random_state=0)
for name, f in [("dp_cd", f_cd)] + ([("dp_sgd", f_sgd)] if dp_sgd else []):
    t = time.perf_counter(); f(); a = time.perf_counter() - t
    t = time.perf_counter(); f(); b = time.perf_counter() - t
    out[name + " first call"] = a; out[name + " second call"] = b
print(json.dumps(out))
"""

def bench_compile(args):
    rows = []
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        for state in ("cold (empty cache)", "cached (fresh process)"):
            res = subprocess.run([sys.executable, "-c", COMPILE_SNIPPET], env=env, capture_output=True, text=True, timeout=900)
            if res.returncode: print(res.stderr[-2000:]); continue
            d = json.loads(res.stdout.strip().splitlines()[-1])
            for what, s in d.items(): rows.append(dict(state=state, what=what, seconds=s))
    second = {r["what"].split()[0]: r["seconds"] for r in rows if r["what"].endswith("second call")}
    for r in rows:
        sol = r["what"].split()[0]
        r["vs_warm_call"] = r["seconds"] / second[sol] if sol in second and "call" in r["what"] else None
        print(f"  {r['state']:24s} {r['what']:22s} {r['seconds']:8.3f} s"
              + (f" = {r['vs_warm_call']:8.1f} x a warm call" if r["vs_warm_call"] else ""))
    return rows

# ------------------------------------------------------------------------------------------------ memory
MEMORY_SNIPPET = r"""
import json, sys, time, tracemalloc, warnings
import numpy as np, scipy.sparse as sp
from dp_cd.model.losses import SquaredLoss; from dp_cd.model.penalties import L1
from dp_cd.solvers.dpcd import dp_cd
try: from dp_cd.solvers.dpsgd import dp_sgd
except ImportError: dp_sgd = None
warnings.simplefilter("ignore")
solver, kind, n, p = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
def make(n, p, seed=0):
    rng = np.random.default_rng(seed)
    if kind == "dense": X = np.asfortranarray(rng.normal(size=(n, p)))
    else:
        X = sp.random(n, p, density=0.01, format="csc", random_state=seed, data_rvs=rng.standard_normal)
        X.indices = X.indices.astype(np.int64); X.indptr = X.indptr.astype(np.int64); X.sort_indices()
    return X, rng.normal(size=n)
def run(X, y):
    if solver == "dp_cd": dp_cd(X, y, SquaredLoss(), L1(0.1), epsilon=1.0, delta=1e-6, n_passes=2, smoothness=np.ones(X.shape[1]), random_state=0)
    else: dp_sgd(X, y, SquaredLoss(), L1(0.1), epsilon=1.0, delta=1e-6, n_passes=1, step=0.01, batch_size=64, random_state=0)
run(*make(500, min(p, 50)))          # compile / load caches before measuring
X, y = make(n, p)
data = X.nbytes if kind == "dense" else X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"): return int(line.split()[1]) * 1024
try:
    with open("/proc/self/clear_refs", "w") as f: f.write("5")   # reset the peak-RSS counter (Linux)
    base = hwm()
except OSError: base = None
tracemalloc.start(); tracemalloc.reset_peak()
run(X, y)
cur, peak = tracemalloc.get_traced_memory(); tracemalloc.stop()
rss = None if base is None else hwm() - base
print(json.dumps(dict(data_bytes=int(data), tracemalloc_peak=int(peak), rss_peak_extra=rss)))
"""

def bench_memory(args):
    rows = []
    sizes = [("dense", 20000, 20), ("sparse", 20000, 2000)] if args.quick else \
            [("dense", 200000, 20), ("dense", 20000, 400), ("sparse", 200000, 2000), ("sparse", 20000, 20000)]
    for solver in ["dp_cd"] + (["dp_sgd"] if dp_sgd else []):
        for kind, n, p in sizes:
            res = subprocess.run([sys.executable, "-c", MEMORY_SNIPPET, solver, kind, str(n), str(p)],
                                 capture_output=True, text=True, timeout=900)
            if res.returncode: print(res.stderr[-2000:]); continue
            d = json.loads(res.stdout.strip().splitlines()[-1])
            r = dict(solver=solver, design=kind, n=n, p=p, **d, o_np_bytes=8 * (n + p))
            r["tracemalloc_vs_data"] = d["tracemalloc_peak"] / d["data_bytes"]
            r["tracemalloc_vs_n_plus_p"] = d["tracemalloc_peak"] / r["o_np_bytes"]
            r["beyond_one_copy_vs_n_plus_p"] = (d["tracemalloc_peak"] - d["data_bytes"]) / r["o_np_bytes"]
            r["rss_vs_data"] = None if d["rss_peak_extra"] is None else d["rss_peak_extra"] / d["data_bytes"]
            rows.append(r)
            print(f"  {solver:7s} {kind:6s} n={n:7d} p={p:6d}: data {d['data_bytes'] / 2**20:8.1f} MiB; extra NumPy peak "
                  f"{d['tracemalloc_peak'] / 2**20:7.2f} MiB = {r['tracemalloc_vs_data']:.3f} x data = "
                  f"{r['tracemalloc_vs_n_plus_p']:.1f} x 8(n+p) bytes; extra peak RSS "
                  + ("n/a" if r["rss_vs_data"] is None else f"{d['rss_peak_extra'] / 2**20:.1f} MiB = {r['rss_vs_data']:.3f} x data"))
    return rows

# ------------------------------------------------------------------------------------------------ utility
def objective(task, X, y, w, lam):
    z = X @ w
    data = np.mean(np.logaddexp(0.0, -y * z)) if task == "classification" else np.mean((z - y) ** 2)
    return data + 0.5 * lam * (w @ w)

def optimum(task, X, y, lam):
    "Non-private minimiser (independent of dp_cd: scipy L-BFGS or the ridge normal equations)."
    n, p = X.shape
    if task == "regression":
        return np.linalg.solve(2 * X.T @ X / n + lam * np.eye(p), 2 * X.T @ y / n)
    def fg(w):
        z = X @ w; s = -y * 0.5 * (1 - np.tanh(0.5 * y * z))   # derivative of log(1+exp(-yz)) in z, stable
        return objective(task, X, y, w, lam), X.T @ s / n + lam * w
    return minimize(fg, np.zeros(p), jac=True, method="L-BFGS-B", options=dict(gtol=1e-12, ftol=1e-15, maxiter=5000)).x

def metric(task, X, y, w):
    z = X @ w
    if task == "classification": return np.mean(np.where(z >= 0, 1.0, -1.0) == y)
    return 1 - np.mean((z - y) ** 2) / np.var(y)

def utility_problem(name, args, n_max):
    """Shared preprocessing for all libraries: standardise (non-private, public convention), clip rows to norm 1,
    append a constant feature 1 (the intercept, a regularised coordinate for everybody): rows have norm <= sqrt(2).
    California's target is mapped by the public map y -> (y - 2.5) / 2.5 into [-1, 1] (values are capped at 5)."""
    X, y, src = load_problem(name, args.data_dir)
    task = "regression" if name == "california" else "classification"
    if task == "regression": y = np.clip((y - 2.5) / 2.5, -1, 1)
    X = X / np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    X = np.asfortranarray(np.hstack([X, np.ones((X.shape[0], 1))]))
    perm = np.random.default_rng(0).permutation(X.shape[0])
    if n_max: perm = perm[:n_max]
    n_test = len(perm) // 5
    te, tr = perm[:n_test], perm[n_test:]
    return task, np.asfortranarray(X[tr]), y[tr], np.asfortranarray(X[te]), y[te], src

PASSES, STEPS, CLIPS = (2, 5, 10, 20, 50), (0.5, 1.0), (0.5, 2.0, 8.0)
SAMPLE_CLIPS = (0.5, 1.0, 2.0)   # per-sample l2 thresholds; rows have norm <= sqrt(2), so 2 never clips a logistic gradient

def make_fitters(task, n, p, eps, delta):
    """Each library's fit function `fit(X, y, lam, cfg, seed) -> coef` and its hyper-parameter grid, all given the
    same public bounds: row norm <= sqrt(2), constant last column, labels in [-1, 1]."""
    R2 = 2.0
    beta = 0.25 if task == "classification" else 2.0           # sup of the loss' second derivative
    loss = LogisticLoss() if task == "classification" else SquaredLoss()
    # public coordinate-wise constants: features share the unit row-norm budget, the constant column has x = 1
    M_pub = np.r_[np.full(p - 1, beta / (p - 1)), beta]
    L_pub = beta * R2                                         # public bound on the global smoothness
    fitters = {}
    fitters["dp_cd"] = (lambda X, y, lam, c, s: dp_cd(X, y, loss, L2(lam), epsilon=eps, delta=delta, n_passes=c["passes"], step=c["step"],
                                                      clip=c["clip"], smoothness=M_pub, random_state=s).coef,
                        [dict(passes=P, step=g, clip=C) for P in PASSES for g in STEPS for C in CLIPS])
    # DP-CD with per-sample l2 clipping (chapter 08: one Gaussian release per pass, jointly 2C/n-sensitive)
    fitters["dp_cd_sample"] = (lambda X, y, lam, c, s: dp_cd(X, y, loss, L2(lam), epsilon=eps, delta=delta, n_passes=c["passes"], step=c["step"],
                                                             clip=c["clip"], clipping="sample", smoothness=M_pub, random_state=s).coef,
                               [dict(passes=P, step=g, clip=C) for P in PASSES[1:] for g in STEPS for C in SAMPLE_CLIPS])
    if dp_sgd is not None:
        fitters["dp_sgd"] = (lambda X, y, lam, c, s: dp_sgd(X, y, loss, L2(lam), epsilon=eps, delta=delta, n_passes=c["passes"],
                                                            step=c["step"] / L_pub, clip=c["clip"], batch_size=64,
                                                            random_state=s).coef,
                             [dict(passes=P, step=g, clip=C) for P in PASSES for g in STEPS for C in CLIPS])
    try:
        import diffprivlib.models as dpl
        if task == "classification":
            fitters["diffprivlib"] = (lambda X, y, lam, c, s: dpl.LogisticRegression(
                epsilon=eps, data_norm=np.sqrt(R2), C=1.0 / (lam * X.shape[0]), fit_intercept=False,
                random_state=s, max_iter=1000).fit(X, y).coef_.ravel(), [dict()])
        else:
            b = (np.r_[np.full(p - 1, -1.0), 0.0], np.r_[np.full(p - 1, 1.0), 1.0])
            fitters["diffprivlib"] = (lambda X, y, lam, c, s: dpl.LinearRegression(
                epsilon=eps, bounds_X=b, bounds_y=(-1.0, 1.0), fit_intercept=False, random_state=s).fit(X, y).coef_.ravel(),
                [dict()])
    except ImportError as e:
        print(f"  diffprivlib not importable here ({e}); run in the benchmark venv (benchmarks/README.md)")
    return fitters

UTILITY_DATASETS = ("electricity", "adult", "phishing", "california")
OURS = ("dp_cd", "dp_cd_sample", "dp_sgd")   # this library's solvers: DP-CD (coordinate-wise / per-sample clipping), DP-SGD

def bench_utility(args):
    quiet()
    names = [d for d in UTILITY_DATASETS if d in args.datasets.split(",")]
    epsilons = (1.0,) if args.quick else (1.0, 10.0)
    lams = (1e-3, 1e-2) if args.quick else (1e-4, 1e-3, 1e-2)
    n_tune, n_eval = (2, 3) if args.quick else (3, 10)
    grid_rows, rows = [], []
    for name in names:
        task, Xtr, ytr, Xte, yte, src = utility_problem(name, args, 3000 if args.quick else None)
        n, p = Xtr.shape; delta = 1.0 / n**2
        for lam in lams:
            w_star = optimum(task, Xtr, ytr, lam); F_star = objective(task, Xtr, ytr, w_star, lam)
            base = dict(dataset=name, source=src, task=task, n_train=n, p=p, lam=lam)
            rows.append(dict(**base, epsilon=np.inf, library="non-private optimum", config="", rel_obj_err=0.0,
                             rel_obj_err_std=0.0, test_metric=metric(task, Xte, yte, w_star), test_metric_std=0.0, runs=1))
            for eps in epsilons:
                for lib, (fit, grid) in make_fitters(task, n, p, eps, delta).items():
                    # tuning (non-private, as in the papers): mean training objective over n_tune seeds
                    scores = []
                    for c in grid:
                        F = [objective(task, Xtr, ytr, fit(Xtr, ytr, lam, c, 1000 + s), lam) for s in range(n_tune)]
                        scores.append(np.mean(F))
                        grid_rows.append(dict(dataset=name, lam=lam, epsilon=eps, library=lib, config=json.dumps(c),
                                              mean_rel_obj_err=(np.mean(F) - F_star) / F_star))
                    c = grid[int(np.argmin(scores))]
                    W = [fit(Xtr, ytr, lam, c, s) for s in range(n_eval)]   # fresh seeds, disjoint from tuning
                    E = [(objective(task, Xtr, ytr, w, lam) - F_star) / F_star for w in W]
                    A = [metric(task, Xte, yte, w) for w in W]
                    rows.append(dict(**base, epsilon=eps, library=lib, config=json.dumps(c), rel_obj_err=np.mean(E),
                                     rel_obj_err_std=np.std(E), test_metric=np.mean(A), test_metric_std=np.std(A), runs=n_eval))
                    print(f"  {name:12s} eps={eps:g} lam={lam:g} {lib:12s} rel. objective error {np.mean(E):10.4g} (+- {np.std(E):.2g})"
                          f"  test {'accuracy' if task == 'classification' else 'R2'} {np.mean(A):.4f} (+- {np.std(A):.3f})  {c}")
    # headline: per dataset, epsilon and library, the lambda with the best mean test metric
    print("  best test metric per library (lambda chosen on the test metric, non-privately, for every library alike):")
    for eps in epsilons:
        for name in names:
            libs = {}
            for r in rows:
                if r["dataset"] == name and r["epsilon"] in (eps, np.inf):
                    if r["library"] not in libs or r["test_metric"] > libs[r["library"]]["test_metric"]: libs[r["library"]] = r
            peers = [r["test_metric"] for lib, r in libs.items() if lib not in OURS + ("non-private optimum",)]
            ours = max((r["test_metric"] for lib, r in libs.items() if lib in OURS), default=np.nan)
            print(f"    eps={eps:g} {name:12s} " + "  ".join(f"{lib}={r['test_metric']:.4f}" for lib, r in libs.items())
                  + (f"  -> best dp_cd solver - best peer = {ours - max(peers):+.4f}" if peers else ""))
    return rows, grid_rows

# ------------------------------------------------------------------------------------------------ scale
def fit_exponent(xs, ys):
    xs, ys = np.log(np.asarray(xs, float)), np.log(np.asarray(ys, float))
    return float(np.polyfit(xs, ys, 1)[0])

def bench_scale(args):
    quiet()
    rng = np.random.default_rng(0)
    k = 2 if args.quick else 3
    if args.quick:
        sweeps = [("dense", "n", [2000, 8000, 32000], 20), ("dense", "p", [10, 40, 160], 4000),
                  ("sparse", "n", [5000, 20000, 80000], 500), ("sparse", "p", [500, 2000, 8000], 5000)]
    else:
        sweeps = [("dense", "n", [3000, 10000, 30000, 100000, 300000, 1000000], 20),
                  ("dense", "p", [10, 30, 100, 300, 1000], 10000),
                  ("sparse", "n", [10000, 30000, 100000, 300000], 1000),
                  ("sparse", "p", [1000, 3000, 10000, 30000], 10000)]
    rows, fits = [], []
    for kind, axis, values, other in sweeps:
        for v in values:
            n, p = (v, other) if axis == "n" else (other, v)
            if kind == "dense": X = np.asfortranarray(rng.normal(size=(n, p))); data = X.nbytes
            else:
                X = sp.random(n, p, density=0.01, format="csc", random_state=1, data_rvs=rng.standard_normal)
                X.indices = X.indices.astype(np.int64); X.indptr = X.indptr.astype(np.int64); X.sort_indices()
                data = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
            y = rng.normal(size=n); M = np.ones(p)
            cd = lambda P: dp_cd(X, y, SquaredLoss(), L1(0.01), epsilon=1.0, delta=1e-6, n_passes=P, smoothness=M, random_state=0)
            cd(1)
            t_pass = marginal(cd, 1, k, target=0.02)
            r = rng.normal(size=n)
            t_floor = best_of(lambda: X.T @ r, 5 * k)
            tracemalloc.start(); tracemalloc.reset_peak(); cd(1); peak = tracemalloc.get_traced_memory()[1]; tracemalloc.stop()
            row = dict(design=kind, axis=axis, n=n, p=p, nnz=int(X.nnz) if kind == "sparse" else n * p, data_bytes=int(data),
                       dpcd_pass_s=t_pass, floor_s=t_floor, pass_vs_floor=t_pass / t_floor, dpcd_extra_peak_bytes=int(peak))
            if dp_sgd is not None:
                sgd = lambda P: dp_sgd(X, y, SquaredLoss(), L1(0.01), epsilon=1.0, delta=1e-6, n_passes=P, step=0.01, batch_size=64, random_state=0)
                sgd(0.2)
                row["dpsgd_epoch_s"] = marginal(sgd, 0.5, k, target=0.02)
            rows.append(row)
            print(f"  {kind:6s} n={n:8d} p={p:7d}: DP-CD pass {t_pass * 1e3:9.3f} ms = {t_pass / t_floor:6.2f} x floor; "
                  f"extra NumPy peak {peak / 2**20:8.2f} MiB (data {data / 2**20:8.1f} MiB)"
                  + (f"; DP-SGD epoch {row['dpsgd_epoch_s'] * 1e3:9.3f} ms" if "dpsgd_epoch_s" in row else ""))
            del X
        sel = [r for r in rows if r["design"] == kind and r["axis"] == axis]
        xs = [r[axis] for r in sel]
        for q in ("dpcd_pass_s", "floor_s", "dpcd_extra_peak_bytes", "dpsgd_epoch_s"):
            if all(q in r for r in sel):
                fits.append(dict(design=kind, axis=axis, quantity=q, exponent=fit_exponent(xs, [r[q] for r in sel]),
                                 largest=max(xs), fixed=other))
                print(f"    fitted exponent of {q} in {axis} ({kind}): {fits[-1]['exponent']:.2f}")
    return rows, fits

# ------------------------------------------------------------------------------------------------ main
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes and few repetitions (smoke run, < 1 min)")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results"), help="directory of the CSVs")
    ap.add_argument("--only", default="speed,compile,memory,utility,scale", help="comma-separated sections (also: breakdown, accounting, outofbox, rawtables, dask, ooc, block_utility)")
    ap.add_argument("--datasets", default=",".join(UTILITY_DATASETS), help="utility section: datasets to (re)run; rows of the others are kept")
    ap.add_argument("--data-dir", default=None, help="real datasets (default: $DP_CD_DATA)")
    ap.add_argument("--n-max", type=int, default=None, help="speed section: use at most this many rows (smoke runs)")
    ap.add_argument("--solvers", default="dp_cd,dp_sgd,dp_gcd", help="speed section: private solvers to time")
    ap.add_argument("--min-time", type=float, default=0.05, help="speed section: smallest timed difference (s) of marginal costs")
    ap.add_argument("--repeat", type=int, default=None, help="speed section: best of this many repetitions")
    ap.add_argument("--timer", choices=("wall", "cpu"), default="wall",
                    help="speed section: wall-clock, or the process's CPU time (a loaded machine; meta records it)")
    ap.add_argument("--rounds", type=int, default=3, help="threads section: interleaved rounds of fresh processes (best of)")
    ap.add_argument("--ooc-rows", default="10000000", help="ooc section: rows of the design on disk (comma-separated sizes)")
    ap.add_argument("--ooc-dir", default=None, help="ooc section: directory of the temporary file (default /tmp)")
    args = ap.parse_args(argv)
    out = Path(args.out); sections = args.only.split(",")
    global MIN_TIME, CLOCK; MIN_TIME = args.min_time
    CLOCK = time.process_time if args.timer == "cpu" else time.perf_counter
    quiet()
    import sklearn, numba
    meta = dict(python=sys.version.split()[0], numpy=np.__version__, numba=numba.__version__, sklearn=sklearn.__version__,
                quick=args.quick, started=time.strftime("%Y-%m-%d %H:%M:%S"), cpus=os.cpu_count(),
                load_avg=os.getloadavg()[0] if hasattr(os, "getloadavg") else None, timer=args.timer)
    try:
        import diffprivlib; meta["diffprivlib"] = diffprivlib.__version__
    except ImportError: meta["diffprivlib"] = None
    print(f"dp_cd benchmarks ({'quick' if args.quick else 'full'}): {meta}")
    t0 = time.perf_counter()
    if "speed" in sections:
        print("== speed (best of k; ratios to the X.T @ r floor and to the thesis' C++ timings)"); write_csv(bench_speed(args), out / "speed.csv")
    if "breakdown" in sections:   # not in the default list: run it with --only breakdown
        sys.path.insert(0, str(Path(__file__).parent))
        from bench_breakdown import bench_breakdown
        print("== breakdown: the parts of the DP-SGD (batch 64), DP-CD (logistic) and DP-GCD kernels, Electricity")
        write_csv(bench_breakdown(load_problem, best_of, marginal, args.data_dir, args.repeat or (3 if args.quick else 7), CLOCK),
                  out / "speed_breakdown.csv")
    if "compile" in sections:
        print("== compile: first call in a process with an empty numba cache, then a fresh process with the cache")
        write_csv(bench_compile(args), out / "compile.csv")
        sys.path.insert(0, str(Path(__file__).parent))
        import bench_compile as bench_compile_mod
        print("== import, first fit per layout (fresh processes, empty caches), per-layout recompiles, warmup")
        rows = bench_compile_mod.import_times(dict(os.environ)) + bench_compile_mod.first_fits(dict(os.environ))
        bench_compile_mod.report(rows); write_csv(rows, out / "first_fit.csv")
    if "import" in sections and "compile" not in sections:   # the import rows of first_fit.csv alone
        sys.path.insert(0, str(Path(__file__).parent))
        import bench_compile as bench_compile_mod
        print("== import: best of 7 fresh processes (the other rows of first_fit.csv are kept)")
        rows = bench_compile_mod.import_times(dict(os.environ), k=7); bench_compile_mod.report(rows)
        f = out / "first_fit.csv"
        kept = [r for r in csv.DictReader(open(f)) if r["part"] != "import"] if f.exists() else []
        write_csv(rows + kept, f)
    if ("speed" in sections and not args.quick) or "threads" in sections:   # (fresh processes: minutes)
        sys.path.insert(0, str(Path(__file__).parent))
        import bench_compile as bench_compile_mod
        print("== threads: DP-GCD per iteration, one thread vs default vs threaded, quiet and with a busy-loop process")
        rows = bench_compile_mod.threads(dict(os.environ), rounds=args.rounds); bench_compile_mod.report(rows); write_csv(rows, out / "threads.csv")
    if "memory" in sections:
        print("== memory beyond X (subprocess per run)"); write_csv(bench_memory(args), out / "memory.csv")
    if "utility" in sections:
        print("== utility at equal privacy (epsilon = 1 [and 10]; dp_cd/DP-SGD: delta = 1/n^2; diffprivlib: pure epsilon-DP)")
        rows, grid = bench_utility(args)
        for name, new in (("utility.csv", rows), ("utility_grid.csv", grid)):   # a subset run replaces only its datasets' rows
            done = {r["dataset"] for r in new}
            old = []
            if (out / name).exists():
                with open(out / name, newline="") as f: old = list(csv.DictReader(f))
            write_csv([r for r in old if r["dataset"] not in done] + new, out / name)
    if "outofbox" in sections:   # not in the default list: run it with --only outofbox
        from bench_outofbox import bench_outofbox, DATASETS
        print("== out of the box: privately tuned defaults vs diffprivlib vs non-private, public bounds only")
        names = [d for d in DATASETS if d in args.datasets.split(",")] if args.datasets != ",".join(UTILITY_DATASETS) else DATASETS
        write_csv(bench_outofbox(load_problem, args.data_dir, names, (1.0,) if args.quick else (0.5, 1.0, 2.0, 5.0),
                                 2 if args.quick else 10), out / ("outofbox_quick.csv" if args.quick else "outofbox.csv"))
    if "rawtables" in sections:   # not in the default list: run it with --only rawtables
        from bench_rawtables import bench_rawtables, DATASETS as RAW
        print("== raw tables: the defaults on tables in their units (private and public tracks)")
        write_csv(bench_rawtables(args.data_dir, RAW, (1.0,) if args.quick else (0.5, 1.0, 2.0, 5.0),
                                  2 if args.quick else 10),
                  out / ("rawtables_quick.csv" if args.quick else "rawtables.csv"))
    if "dask" in sections or "ooc" in sections:
        sys.path.insert(0, str(Path(__file__).parent))
        import bench_dask
    if "dask" in sections:
        print("== dask: rounds/s and s/pass on row chunks (in process, 1 and 2 local workers) vs in memory")
        rows = bench_dask.bench_dask(args); write_csv(rows, out / "dask.csv")
        write_csv(bench_dask.cost_model(rows), out / "dask_cost_model.csv")
    if "block_utility" in sections:
        print("== utility: block DP-CD (B = 1, 8, p) vs DP-CD vs DP-SGD at equal privacy (Table D.1 problems)")
        sys.path.insert(0, str(Path(__file__).parent))
        import bench_dask
        write_csv(bench_dask.bench_block_utility(args), out / "block_utility.csv")
    if "ooc" in sections:
        print(f"== out of core: one pass over {args.ooc_rows} x {bench_dask.P} float64 on disk")
        write_csv(bench_dask.bench_ooc(args), out / "out_of_core.csv")
    if "scale" in sections:
        print("== scaling in n and p (dense and sparse CSC, density 1%)")
        rows, fits = bench_scale(args); write_csv(rows, out / "scale.csv"); write_csv(fits, out / "scale_fit.csv")
    if "accounting" in sections:   # not in the default: needs dp-accounting (dev) and takes minutes
        print("== accounting: claimed epsilon / dp-accounting's PLD epsilon of the same noise; RDP vs dp-accounting")
        sys.path.insert(0, str(Path(__file__).parent))
        from bench_accounting import bench_accounting
        write_csv(bench_accounting(args), out / ("accounting_quick.csv" if args.quick else "accounting.csv"))
    meta["seconds"] = time.perf_counter() - t0
    meta["load_avg_end"] = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    out.mkdir(parents=True, exist_ok=True)
    (out / f"meta{'_quick' if args.quick else ''}_{'-'.join(sections) if len(sections) < 5 else 'all'}.json").write_text(json.dumps(meta, indent=1))
    print(f"done in {meta['seconds']:.1f} s")

if __name__ == "__main__":
    main()
