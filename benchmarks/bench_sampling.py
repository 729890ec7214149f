"""Coordinate selection and step rules of DP-CD through the estimators (coordinate sampling chapter).

    DP_CD_DATA=/work/shared/data python benchmarks/bench_sampling.py [--splits 5]

writes `benchmarks/results/coordinate_sampling.csv`. Each variant is the plain `DPClassifier` /
`DPRegressor` with private bounds (nothing about the data public) and `solver_options`:

* `default`: the estimators' default (per-sample clipping, one random permutation per pass);
* `coordinate`: coordinate-wise clipping (§4.5.1), coordinates drawn uniformly;
* `importance`: coordinate-wise clipping, coordinate j drawn with probability ∝ M_j;
* `dog`: the default with DoG steps (`step_rule="dog"`).

Tables: those of `bench_rawtables.py` (the real ones need `DP_CD_DATA`) and `scales_sim`, a table
whose columns have very unequal scales and tails; on it the four variants also run with
`standardize=False`, where the constants M_j stay unequal. ε ∈ {0.5, 1, 2, 5}; seeded 80/20 splits."""
import time, warnings
from pathlib import Path
import numpy as np
from bench_rawtables import DATASETS, EPSILONS, load_table, _scores

VARIANTS = {"default": {}, "coordinate": dict(clipping="coordinate"),
            "importance": dict(clipping="coordinate", selection="importance"),
            "dog": dict(step_rule="dog")}


def make_scales(n=20_000, seed=2):
    """Ten columns whose scales span 10⁻² to 10³ in their units, half of them log-normal (bulk far
    below the maximum), 20 % positives driven by all of them."""
    g = np.random.default_rng(seed)
    scale = np.logspace(-2, 3, 10)
    Z = np.column_stack([g.normal(size=n) if j % 2 else g.lognormal(0, 1.5, n) - np.exp(1.125)
                         for j in range(10)])
    z = Z @ np.array([1.0, -0.8, 0.6, 0.5, -0.4, 0.3, 0.3, -0.2, 0.2, 0.1]) / 2 - 1.6
    y = g.random(n) < 1 / (1 + np.exp(-z))
    return Z * scale, np.where(y, 1.0, -1.0), "classification"


def bench_sampling(data_dir, datasets=DATASETS + ("scales_sim",), epsilons=EPSILONS, splits=5):
    "Rows of the CSV: one per dataset, standardize, ε, variant and split."
    from dp_cd import DPClassifier, DPRegressor
    warnings.filterwarnings("ignore")
    rows = []
    for name in datasets:
        if name != "scales_sim" and name not in ("credit_sim", "mixed_sim") and not data_dir:
            print(f"  {name}: skipped (no DP_CD_DATA)"); continue
        X, y, task = make_scales() if name == "scales_sim" else load_table(name, data_dir)
        Est = DPClassifier if task == "classification" else DPRegressor
        kw = dict(classes=[-1.0, 1.0]) if task == "classification" else {}
        for split in range(splits):
            perm = np.random.default_rng(split).permutation(len(y))
            te, tr = perm[:len(y) // 5], perm[len(y) // 5:]
            for std in ((True, False) if name == "scales_sim" else (True,)):
                for eps in epsilons:
                    for var, so in VARIANTS.items():
                        t0 = time.perf_counter()
                        m = Est(epsilon=eps, random_state=1000 * split + int(10 * eps),
                                standardize=std, solver_options=dict(so) or None, **kw)
                        m.fit(X[tr], y[tr])
                        seconds = time.perf_counter() - t0
                        metric, auc = _scores(task, m, X[te], y[te])
                        rows.append(dict(dataset=name, task=task, n_train=len(tr), p=X.shape[1],
                                         split=split, standardize=std, epsilon=eps, variant=var,
                                         metric=metric, auc=auc, seconds=seconds,
                                         epsilon_reported=m.privacy_.epsilon))
            print(f"  {name:12s} split {split} done", flush=True)
    return rows


def summarise(df):
    "Mean, sd and worst split per dataset, standardize, ε and variant."
    return df.groupby(["dataset", "standardize", "epsilon", "variant"]).agg(
        mean=("metric", "mean"), sd=("metric", "std"), worst=("metric", "min"))


if __name__ == "__main__":
    import argparse, os
    import pandas as pd
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=os.environ.get("DP_CD_DATA"))
    ap.add_argument("--splits", type=int, default=5)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "coordinate_sampling.csv"))
    args = ap.parse_args()
    t0 = time.perf_counter()
    df = pd.DataFrame(bench_sampling(args.data_dir, splits=args.splits))
    df.to_csv(args.out, index=False)
    print(summarise(df).round(4).to_string())
    print(f"{len(df)} fits in {time.perf_counter() - t0:.0f} s (load {os.getloadavg()[0]:.1f}); "
          f"wrote {args.out}")
