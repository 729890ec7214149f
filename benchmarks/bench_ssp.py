"""AdaSSP against the default `DPRegressor` on the regression tables of `bench_rawtables.py`.

The same tables, splits, tracks and seeds as `bench_rawtables.py` (its functions are imported, not
repeated): `private` (nothing public, the estimator estimates its bounds and centre inside ε) and
`public` (a public box per feature and a target bound standing for the documented schema). The
baseline is the default `DPRegressor()` (DP-CD), measured in the same run; `DPRegressor(solver=
"adassp")` changes nothing else. Prints R² (mean, sd, WORST split), the difference to the baseline
on the same split, the fit time, and the machine's load (`uptime`). Run with the benchmark venv:

    PYTHONPATH=. .venv-bench/bin/python benchmarks/bench_ssp.py --data-dir $DP_CD_DATA
    PYTHONPATH=. .venv-bench/bin/python benchmarks/bench_ssp.py --synthetic   # where it wins?

`--synthetic` runs the grid `GRID` (n, p, correlation of the features) of `synthetic_table`
instead, private track, ε = 1, three seeds.
"""
import os, subprocess, sys, time, warnings
from pathlib import Path
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_rawtables import load_table, public_box, _non_private, _scores   # noqa: E402

EPSILONS = (0.5, 1.0, 2.0, 5.0)
SOLVERS = ("dp-cd", "adassp")   # the default first: the baseline


def makers(track, box, ybox, eps):
    "solver -> make(seed) of an unfitted DPRegressor for this track and ε (only `solver` differs)."
    from dp_cd import DPRegressor
    T = max(abs(ybox[0]), abs(ybox[1]))
    pub = {} if track == "private" else dict(bounds=box, target_bound=T)
    return {s: (lambda seed, s=s: DPRegressor(solver=s, epsilon=eps, random_state=seed, **pub))
            for s in SOLVERS}


def bench_ssp(data_dir, datasets=("california",), epsilons=EPSILONS, splits=10,
              tracks=("private", "public")):
    "Rows: one per dataset, track, ε, solver and split (the seeds of bench_rawtables)."
    warnings.filterwarnings("ignore")
    rows = []
    for name in datasets:
        X, y, task = load_table(name, data_dir)
        if task != "regression": continue
        box, ybox = public_box(X, y, task)
        for split in range(splits):
            perm = np.random.default_rng(split).permutation(len(y))
            te, tr = perm[:len(y) // 5], perm[len(y) // 5:]
            row = lambda **kw: dict(dataset=name, n_train=len(tr), p=X.shape[1], split=split, **kw)
            metric = _scores(task, _non_private(task).fit(X[tr], y[tr]), X[te], y[te])[0]
            rows.append(row(track="any", epsilon=np.inf, solver="non-private", r2=metric,
                            seconds=np.nan, epsilon_reported=np.nan))
            for track in tracks:
                for eps in epsilons:
                    for solver, make in makers(track, box, ybox, eps).items():
                        t0 = time.perf_counter()
                        m = make(1000 * split + int(10 * eps)).fit(X[tr], y[tr])
                        seconds = time.perf_counter() - t0
                        rows.append(row(track=track, epsilon=eps, solver=solver,
                                        r2=_scores(task, m, X[te], y[te])[0], seconds=seconds,
                                        epsilon_reported=m.privacy_.epsilon))
            print(f"  {name} split {split} done", flush=True)
    return rows


def synthetic_table(n, p, corr, seed, snr=20.0):
    """Equicorrelated Gaussian features (correlation `corr`) with scales in [0.5, 3] and offsets in
    [-2, 2], a linear target with intercept 3 and signal-to-noise ratio `snr` (R² of OLS ≈ 0.95)."""
    g = np.random.default_rng(seed)
    X = np.sqrt(1 - corr) * g.normal(size=(n, p)) + np.sqrt(corr) * g.normal(size=(n, 1))
    X = X * g.uniform(0.5, 3, p) + g.uniform(-2, 2, p)
    s = (X - X.mean(0)) @ (g.normal(size=p) / np.sqrt(p))
    return X, 3 + s / s.std() + g.normal(0, 1 / np.sqrt(snr), n)


GRID = [(n, p, corr) for n in (20_000, 100_000, 500_000) for p in (4, 16) for corr in (0.0, 0.99)]


def bench_synthetic(grid=GRID, eps=1.0, seeds=3):
    "Rows: the default DPRegressor against solver='adassp' (private track) on synthetic tables."
    from dp_cd import DPRegressor
    warnings.filterwarnings("ignore")
    rows = []
    for n, p, corr in grid:
        for seed in range(seeds):
            X, y = synthetic_table(n + n // 4, p, corr, seed)
            tr, te = slice(0, n), slice(n, None)
            A = np.column_stack([X, np.ones(len(y))])
            w = np.linalg.lstsq(A[tr], y[tr], rcond=None)[0]
            r2 = lambda z: float(1 - np.mean((z - y[te]) ** 2) / np.var(y[te]))
            row = lambda **kw: dict(dataset=f"synthetic n={n} p={p} corr={corr}", n_train=n, p=p,
                                    split=seed, **kw)
            rows.append(row(track="any", epsilon=np.inf, solver="non-private", r2=r2(A[te] @ w),
                            seconds=np.nan, epsilon_reported=np.nan))
            for solver in SOLVERS:
                t0 = time.perf_counter()
                m = DPRegressor(solver=solver, epsilon=eps, random_state=seed).fit(X[tr], y[tr])
                rows.append(row(track="private", epsilon=eps, solver=solver,
                                r2=r2(m.predict(X[te])), seconds=time.perf_counter() - t0,
                                epsilon_reported=m.privacy_.epsilon))
            print(f"  n={n} p={p} corr={corr} seed {seed} done", flush=True)
    return rows


def summarise(rows):
    "Mean, sd, worst split, and the worst and mean difference to the baseline on the same split."
    import pandas as pd
    df = pd.DataFrame(rows)
    base = df[df.solver == SOLVERS[0]].set_index(["dataset", "track", "epsilon", "split"]).r2
    df["vs_default"] = df.apply(lambda r: r.r2 - base.get((r.dataset, r.track, r.epsilon,
                                                            r.split), np.nan), axis=1)
    t = df.groupby(["dataset", "track", "epsilon", "solver"]).agg(
        r2_mean=("r2", "mean"), r2_sd=("r2", "std"), r2_worst=("r2", "min"),
        gain_mean=("vs_default", "mean"), gain_worst_split=("vs_default", "min"),
        seconds=("seconds", "median"))
    print(t.round(4).to_string())
    return t


if __name__ == "__main__":
    import argparse, csv
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", default=os.environ.get("DP_CD_DATA"))
    ap.add_argument("--datasets", default="california")
    ap.add_argument("--splits", type=int, default=10)
    ap.add_argument("--synthetic", action="store_true", help="the synthetic grid GRID instead")
    ap.add_argument("--out", default=None, help="CSV (default results/ssp.csv, ssp_synthetic.csv)")
    args = ap.parse_args()
    out = args.out or str(Path(__file__).parent / "results" /
                          ("ssp_synthetic.csv" if args.synthetic else "ssp.csv"))
    print("load before:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    rows = (bench_synthetic() if args.synthetic else
            bench_ssp(args.data_dir, args.datasets.split(","), splits=args.splits))
    summarise(rows)
    print("load after:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {out}")
