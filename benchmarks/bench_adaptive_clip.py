"""Adaptive clipping against the fixed threshold (benchmarks/README.md, section `adaptive_clip`).

The plain `DPClassifier` / `DPRegressor` on the raw tables of `bench_rawtables.py` (private bounds,
the default track), once with their default DP-CD (per-sample clipping at the fixed C = 2 in
standardised units) and once with `clipping="adaptive"` started at the same C = 2 (the
threshold then follows a private quantile of the per-sample gradient norms, inside the same ε).
Everything else is the estimator's default. Same seeded 80/20 splits and seeds as
`bench_rawtables.py`. Metrics: test accuracy and ROC AUC, or R²; the chapter
`nbs/03_solvers/12_adaptive_clipping.ipynb` reads the CSV (mean and worst split per table and ε).

    DP_CD_DATA=/path/to/data python benchmarks/bench_adaptive_clip.py   # 5 splits, C in 0.5, 2, 8

`--scheme coordinate` (CSV `adaptive_clip_coordinate.csv`) compares instead the coordinate-wise
schemes: the default (per-sample clipping at C = 2), fixed coordinate-wise clipping
(`clipping="coordinate"`, the solver's C) and `clipping="coordinate_adaptive"` started there:

    DP_CD_DATA=/path/to/data python benchmarks/bench_adaptive_clip.py --scheme coordinate \
        --epsilons 0.5,1,2 --splits 3
"""
import os, sys, time, warnings
from pathlib import Path
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_rawtables import DATASETS, EPSILONS, load_table, _scores   # noqa: E402

OUT = Path(__file__).parent / "results" / "adaptive_clip.csv"
OUT_COORDINATE = Path(__file__).parent / "results" / "adaptive_clip_coordinate.csv"
# the coordinate-wise comparison: the estimators' default, fixed and adaptive coordinate clipping
COORDINATE = {"default (sample, C=2)": {}, "fixed coordinate": dict(clipping="coordinate"),
              "coordinate adaptive": dict(clipping="coordinate_adaptive")}


def variants(grid=None, starts=(2.0,)):
    """name -> estimator keyword arguments: the default (fixed C = 2), then for each C in `starts`
    the fixed threshold C (if not 2) and adaptive clipping started at C; `grid`: (γ, η) pairs of
    adaptive variants (exploration), the default pair (None) otherwise."""
    out = {"fixed C=2": {}}
    for C in starts:
        if C != 2.0: out[f"fixed C={C:g}"] = dict(clipping="sample", clip=C)
        for q, lr in (grid or [(None, None)]):
            opts = {k: v for k, v in dict(clip_quantile=q, clip_lr=lr).items() if v is not None}
            name = ("adaptive" if not opts else f"adaptive q={q:g} lr={lr:g}") + (
                "" if C == 2.0 else f" C0={C:g}")
            out[name] = dict(clipping="adaptive", clip=C, solver_options=opts or None)
    return out


def coordinate_variants(grid=None):
    "`COORDINATE`, or with `grid` ((γ, η) pairs, exploration) coordinate adaptive at each pair."
    if not grid: return COORDINATE
    out = {k: v for k, v in COORDINATE.items() if k != "coordinate adaptive"}
    for q, lr in grid:
        out[f"coordinate adaptive q={q:g} lr={lr:g}"] = dict(
            clipping="coordinate_adaptive", solver_options=dict(clip_quantile=q, clip_lr=lr))
    return out


def bench_adaptive_clip(data_dir, datasets=DATASETS, epsilons=EPSILONS, splits=3, grid=None,
                        first_split=0, starts=(2.0,), scheme="sample"):
    """Rows: one per dataset, ε, variant and split (splits `first_split`, ... of bench_rawtables);
    `scheme`: "sample" (the variants of `variants`) or "coordinate" (`COORDINATE`)."""
    from dp_cd import DPClassifier, DPRegressor
    warnings.filterwarnings("ignore")
    rows = []
    for name in datasets:
        X, y, task = load_table(name, data_dir)
        for split in range(first_split, first_split + splits):
            perm = np.random.default_rng(split).permutation(len(y))
            te, tr = perm[:len(y) // 5], perm[len(y) // 5:]
            for eps in epsilons:
                todo = (coordinate_variants(grid) if scheme == "coordinate"
                        else variants(grid, starts))
                for var, kw in todo.items():
                    seed = 1000 * split + int(10 * eps)   # bench_rawtables' seed
                    make = (DPClassifier(epsilon=eps, classes=[-1.0, 1.0], random_state=seed, **kw)
                            if task == "classification" else
                            DPRegressor(epsilon=eps, random_state=seed, **kw))
                    t0 = time.perf_counter()
                    m = make.fit(X[tr], y[tr])
                    seconds = time.perf_counter() - t0
                    metric, auc = _scores(task, m, X[te], y[te])
                    res = getattr(m, "fit_result_", None) or m.fit_results_[0]
                    path = np.asarray(res.params.get("clip_path", []), dtype=float)
                    rows.append(dict(dataset=name, task=task, n_train=len(tr), p=X.shape[1],
                                     split=split, epsilon=eps, variant=var, metric=metric, auc=auc,
                                     seconds=seconds, epsilon_reported=m.privacy_.epsilon,
                                     clip_last="" if path.size == 0 else float(np.median(path[-1]))))
            print(f"  {name:12s} split {split}: " + "  ".join(
                f"{r['variant']}@{r['epsilon']:g}={r['metric']:.3f}" for r in rows
                if r["dataset"] == name and r["split"] == split), flush=True)
    return rows


def summarise(rows):
    "Mean, sd and worst split per dataset, ε and variant."
    import pandas as pd
    t = pd.DataFrame(rows).groupby(["dataset", "epsilon", "variant"]).agg(
        metric_mean=("metric", "mean"), metric_sd=("metric", "std"),
        metric_worst=("metric", "min"), auc_mean=("auc", "mean"), auc_worst=("auc", "min"))
    print(t.round(4).to_string())
    return t


if __name__ == "__main__":
    import argparse, csv
    ap = argparse.ArgumentParser(description="Adaptive against fixed per-sample clipping.")
    ap.add_argument("--data-dir", default=os.environ.get("DP_CD_DATA"))
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--epsilons", default=",".join(f"{e:g}" for e in EPSILONS))
    ap.add_argument("--splits", type=int, default=5)
    ap.add_argument("--first-split", type=int, default=0,
                    help="the first split (the exploration of --grid used splits 5-7)")
    ap.add_argument("--grid", default=None,
                    help="exploration: 'q:lr,q:lr' adaptive variants instead of the default one")
    ap.add_argument("--starts", default="0.5,2,8",
                    help="first thresholds C: each also run as a fixed threshold (e.g. 0.5,2,8)")
    ap.add_argument("--scheme", default="sample", choices=["sample", "coordinate"],
                    help="per-sample adaptive clipping, or the coordinate-wise schemes")
    ap.add_argument("--out", default=None, help="the CSV (default: by --scheme)")
    a = ap.parse_args()
    grid = None if a.grid is None else [tuple(map(float, s.split(":"))) for s in a.grid.split(",")]
    print(f"load {os.getloadavg()}", flush=True)
    rows = bench_adaptive_clip(a.data_dir, a.datasets.split(","),
                               [float(e) for e in a.epsilons.split(",")], a.splits, grid,
                               a.first_split, tuple(float(c) for c in a.starts.split(",")),
                               a.scheme)
    a.out = a.out or str(OUT_COORDINATE if a.scheme == "coordinate" else OUT)
    summarise(rows)
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {a.out}; load {os.getloadavg()}")
