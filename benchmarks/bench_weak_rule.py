"""The rule `histogram_weak` on tables held out from its tuning (benchmarks/README.md, `weak_rule`).

A weak bounds histogram (n/4 <= tau < n) releases, with a tenth of the preprocessing's share, one
common bound of the features for the columns it does not locate (in place of the default 1). Here
the plain defaults `DPClassifier(epsilon=eps, classes=[-1, 1])` and `DPRegressor(epsilon=eps)` are
fitted with the rule and with it switched off (the ablation), on generated tables in raw units
(columns of scales 0.5 to 300 and shifts -20 to 80; Student-t(4), log-normal or normal noise;
binary labels from a linear score, or a target near 50), several shapes, ten seeds each, an 80/20
split. Each row: the table, the seed, ε, the variant, whether the rule fired (the report names
it) and the test AUC (classifiers) or R^2 (regressions). The summary gives the worst and the
median seed per table, ε and variant.

    python benchmarks/bench_weak_rule.py [--seeds 10] [--out CSV]   # results/weak_rule.csv
"""
import warnings
import numpy as np

# (task, n, p, noise, generator seed base): classifiers and regressions of several shapes
TABLES = (("c", 2500, 15, "t", 100), ("c", 6000, 25, "t", 100), ("c", 4000, 12, "lognormal", 300),
          ("c", 10000, 40, "normal", 500), ("c", 1500, 8, "t", 700),
          ("c", 3000, 20, "lognormal", 900), ("r", 2500, 15, "t", 100), ("r", 1500, 40, "t", 100),
          ("r", 4000, 20, "lognormal", 300), ("r", 3000, 12, "normal", 500))
EPSILONS = (0.5, 1.0, 4.0)


def make_table(task, n, p, noise, base, seed):
    "(X, y): raw-unit columns and binary labels (+-1, about 20 % positives) or a target near 50."
    g = np.random.default_rng(base + seed)
    scale, shift = np.geomspace(0.5, 300, p), np.linspace(-20, 80, p)
    draw = {"t": lambda: g.standard_t(4, size=(n, p)), "normal": lambda: g.normal(size=(n, p)),
            "lognormal": lambda: g.lognormal(0, 1, size=(n, p))}[noise]
    X = draw() * scale + shift
    z = (X - X.mean(0)) / X.std(0) @ g.normal(size=p) / np.sqrt(p)
    if task == "r": return X, 50 + 5 * z + 3 * g.normal(size=n)
    return X, np.where(z + 0.5 * g.normal(size=n) > 0.8, 1.0, -1.0)


def fit_score(task, eps, seed, X, y, rule):
    "(score, fired) of the plain default with the rule `histogram_weak` on (rule) or off."
    from unittest import mock
    from sklearn.metrics import roc_auc_score
    import dp_cd.estimators as est
    from dp_cd import DPClassifier, DPRegressor
    n = len(y)
    tr, te = slice(0, 4 * n // 5), slice(4 * n // 5, None)
    m = (DPRegressor(epsilon=eps, random_state=seed) if task == "r"
         else DPClassifier(epsilon=eps, classes=[-1, 1], random_state=seed))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if rule: m.fit(X[tr], y[tr])
        else:
            with mock.patch.object(est, "histogram_weak", lambda *a, **k: False):
                m.fit(X[tr], y[tr])
    fired = any("histogram_weak" in s for s in m.privacy_.notes)
    if task == "r":
        return 1 - np.mean((m.predict(X[te]) - y[te]) ** 2) / np.var(y[te]), fired
    return roc_auc_score(y[te] > 0, m.decision_function(X[te])), fired


def bench_weak_rule(tables=TABLES, epsilons=EPSILONS, seeds=10):
    "Rows of `weak_rule.csv`: one per table, ε, seed and variant (the rule on or off)."
    rows = []
    for task, n, p, noise, base in tables:
        name = f"{'classification' if task == 'c' else 'regression'}_{n}x{p}_{noise}"
        for eps in epsilons:
            for seed in range(seeds):
                X, y = make_table(task, n, p, noise, base, seed)
                for rule in (True, False):
                    score, fired = fit_score(task, eps, seed, X, y, rule)
                    rows.append(dict(table=name, task=task, n=n, p=p, epsilon=eps, seed=seed,
                                     rule="on" if rule else "off", fired=bool(fired) and rule,
                                     score=float(score)))
            print(f"  {name} eps={eps} done", flush=True)
    return rows


def summarise(rows):
    "Worst and median seed per table, ε and variant, with the fits where the rule fired."
    import pandas as pd
    t = pd.DataFrame(rows).groupby(["table", "epsilon", "rule"]).agg(
        worst=("score", "min"), median=("score", "median"), fired=("fired", "sum"))
    print(t.round(3).to_string())
    return t


if __name__ == "__main__":
    import argparse, csv, os
    from pathlib import Path
    ap = argparse.ArgumentParser(description="histogram_weak on held-out tables (weak_rule.csv).")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "weak_rule.csv"))
    args = ap.parse_args()
    print("load at start:", os.getloadavg(), flush=True)
    rows = bench_weak_rule(seeds=args.seeds)
    print("load at end:", os.getloadavg(), flush=True)
    summarise(rows)
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {args.out}")
