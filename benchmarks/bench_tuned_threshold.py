"""Where the tuned estimators' search pays: the public threshold `min_search_n_eps` measured.

`DPClassifierCV` and `DPRegressorCV` fit their plain estimator's default below a public n ε
(`min_search_n_eps`, nbs/06_api/01b_tuned.ipynb, *Small tables*). This benchmark measures, per
table, split and ε, the held-out score of the plain default (`DPClassifier` / `DPRegressor` with
its defaults) and of the tuned estimator with the search always run (`min_search_n_eps=0`), with
n the training records and n ε the rule's public input. The tables are those of
`bench_untuned.py` (its loaders, its seeded 80/20 splits, its seeds 1000 split + 10 ε): the
regressions diabetes (scikit-learn's, 5 splits), huge_target, small_price and small_score
(generated, 3 splits) and California (of --data-dir, 3 splits), at ε from 0.5 to 16 (n ε from 177
to 264,000); with `--classification`, also CelebA's rare labels and the 1 % positives table at
ε = 0.5 to 4.

    python benchmarks/bench_tuned_threshold.py [--data-dir DIR] [--classification]
                                               [--out benchmarks/results/tuned_threshold.csv]
"""
import os, sys, time, warnings
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_untuned import load_table as _load_untuned, splits_of, scores, SKLEARN_SPLITS

REGRESSIONS = {"diabetes": SKLEARN_SPLITS, "huge_target": 3, "small_price": 3, "small_score": 3,
               "california": 3}
REG_EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
CLASSIFICATIONS = {"celeba_Bald": 3, "celeba_Mustache": 3, "celeba_Gray_Hair": 3,
                   "positives_1pct": 3}
CLS_EPSILONS = (0.5, 1.0, 2.0, 4.0)


def load_table(name, data_dir):
    "(X, y, task): California from --data-dir, the others as `bench_untuned.py` loads them."
    if name == "california":
        from dp_cd.datasets import load_california
        ds = load_california(data_dir)
        return np.asarray(ds.X, float), np.asarray(ds.y, float), "regression"
    return _load_untuned(name, data_dir)


def models(task, eps, classes):
    "variant -> make(seed): the plain default, and the tuned estimator searching at any n ε."
    from dp_cd import DPClassifier, DPRegressor
    from dp_cd.tuned import DPClassifierCV, DPRegressorCV
    if task == "regression":
        return {"plain": lambda s: DPRegressor(epsilon=eps, random_state=s),
                "searched": lambda s: DPRegressorCV(epsilon=eps, random_state=s,
                                                    min_search_n_eps=0)}
    classes = list(classes)
    return {"plain": lambda s: DPClassifier(epsilon=eps, classes=classes, random_state=s),
            "searched": lambda s: DPClassifierCV(epsilon=eps, classes=classes, random_state=s,
                                                 min_search_n_eps=0)}


def bench(data_dir, tables, epsilons):
    "Rows: table, task, n (training records), split, epsilon, n_eps, variant, score, seconds."
    rows = []
    for name, n_splits in tables.items():
        X, y, task = load_table(name, data_dir)
        classes = np.unique(y) if task == "classification" else None
        for split, (tr, te) in enumerate(splits_of(y, task, n_splits)):
            for eps in epsilons:
                for variant, make in models(task, eps, classes).items():
                    seed = 1000 * split + int(10 * eps)
                    t0 = time.perf_counter()
                    m = make(seed).fit(X[tr], y[tr])
                    sec = time.perf_counter() - t0
                    if task == "regression":
                        score = scores(task, y[te], m.predict(X[te]), None)["r2"]
                    else:
                        s = m.decision_function(X[te])
                        score = scores(task, y[te], m.predict(X[te]), s)["auc"]
                    rows.append(dict(table=name, task=task, n=len(tr), split=split, epsilon=eps,
                                     n_eps=len(tr) * eps, variant=variant, score=score,
                                     seconds=sec))
            print(f"  {name} split {split} done", flush=True)
    return rows


if __name__ == "__main__":
    import argparse
    import pandas as pd
    from pathlib import Path
    ap = argparse.ArgumentParser(description="The tuned estimators' search against the plain "
                                             "default across n epsilon (tuned_threshold.csv).")
    ap.add_argument("--data-dir", default=os.environ.get("DP_CD_DATA"))
    ap.add_argument("--classification", action="store_true")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results"
                                         / "tuned_threshold.csv"))
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    print("load at start:", os.getloadavg(), flush=True)
    rows = bench(args.data_dir, REGRESSIONS, REG_EPSILONS)
    if args.classification: rows += bench(args.data_dir, CLASSIFICATIONS, CLS_EPSILONS)
    print("load at end:", os.getloadavg(), flush=True)
    df = pd.DataFrame(rows)
    t = df.groupby(["table", "n_eps", "variant"]).score.agg(["min", "median"]).unstack("variant")
    print(t.round(3).to_string())
    df.to_csv(args.out, index=False)
    print(f"wrote {args.out}")
