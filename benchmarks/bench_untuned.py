"""Untuned tables: the defaults on tables nothing was tuned for (benchmarks/README.md, `untuned`).

A user fits a table once with the defaults and the public label set only:
`DPClassifier(epsilon=eps, classes=[-1, 1])` / `DPRegressor(epsilon=eps)` on the raw table, and
the tuned `DPClassifierCV` / `DPRegressorCV` with their defaults. No bound, centre, scale or
hyper-parameter is given: every statistic of the data is estimated privately inside ε.

Tables: Dorothea (sparse, 350 rows x 100,000 binary features, 34 positives: p >> n, rare
positives), CelebA (20,000 rows, one attribute as the label, the other 39 as +-1 features; common
and rare labels: Male, Smiling, Bald, Mustache, Gray_Hair), and tables generated here with one
pathology each: heavy-tailed columns in raw units (Cauchy, log-normal ~1e6), degenerate columns
(a constant, duplicates, a one-hot block), 1 % positives, missing values in many columns,
integer-coded categoricals, a regression target in units of ~1e9, and two regressions with few
records for their columns (3,000 x 10 with a log-normal price near 6e4, spread over powers of two;
5,000 x 30 with a score near 10, in one power of two).

Baselines: the non-private scikit-learn model (mean imputation, standardisation, logistic or
least-squares regression on the same features) and the constant model (majority class: AUC 0.5,
balanced accuracy 0.5; the training mean for regression). Per seeded 80/20 split (stratified when
positives are rare, so that every test split holds positives): test ROC AUC, balanced accuracy and
accuracy, or R²; for a regression also the plain default with its target's bound always in the
features' histogram (`JOINT`: the ablation of the rule `target_apart`). Each row also records the fit's seconds, the number of warnings the fit emitted
and an error (empty when the fit worked). The summary gives the mean and the WORST split.

The tables scikit-learn ships with it (no download; `--suite sklearn`, written to
`untuned_sklearn.csv`): breast cancer (569 rows, 30 raw-unit columns up to ~4000, binary),
wine (178 rows, 13 columns, 3 classes), digits (1,797 rows, 64 pixel counts 0..16, 10 classes),
iris (150 rows, 4 columns, 3 classes) and diabetes (442 rows, a regression whose raw target is
25..346); the PUBLIC label set is the table's documented one; ε ∈ {0.5, 1, 4}, 5 splits. With more
than two classes the AUC is the one-vs-rest macro AUC of the class probabilities (a softmax of the
scores), the constant model's 0.5. These rows also hold the ablation of the public rule
`histogram_futile` (a bounds histogram whose threshold reaches n is not released, and the fit runs
in the small-table box: one released common bound of the features, a regression's target bound
and mean released with a share of their own): the plain default with that histogram always
released (`FUTILE`: a bound it does not locate falls back to the default 1; the rule
`histogram_weak`, whose released common bound would replace that 1, switched off as well).

    python benchmarks/bench_untuned.py [--data-dir DIR] [--splits 3] [--tables a,b] [--out CSV]
                                       [--replace]   # only the rows of --tables rewritten
    python benchmarks/bench_untuned.py --suite sklearn   # untuned_sklearn.csv (about a minute)
"""
import time, warnings
import numpy as np

EPSILONS = (0.5, 1.0, 2.0)
CELEBA_LABELS = ("Male", "Smiling", "Bald", "Mustache", "Gray_Hair")
SYNTHETIC = ("heavy_tails", "degenerate_columns", "positives_1pct", "missing_many",
             "integer_categories", "huge_target", "small_price", "small_score")
TABLES = ("dorothea",) + tuple(f"celeba_{a}" for a in CELEBA_LABELS) + SYNTHETIC
# the tables scikit-learn ships (offline): raw units, 2, 3 and 10 classes, a small regression
SKLEARN = ("breast_cancer", "wine", "digits", "iris", "diabetes")
SKLEARN_EPSILONS, SKLEARN_SPLITS = (0.5, 1.0, 4.0), 5


def _logistic_labels(g, z, rate):
    "Labels +-1 drawn with P(y = 1) = sigmoid(z + b), b set so that the positive rate is ~`rate`."
    lo, hi = -50.0, 50.0
    for _ in range(60):   # bisection on the offset b: the mean probability is increasing in b
        b = (lo + hi) / 2
        lo, hi = (b, hi) if np.mean(1 / (1 + np.exp(-(z + b)))) < rate else (lo, b)
    return np.where(g.random(len(z)) < 1 / (1 + np.exp(-(z + b))), 1.0, -1.0)


def make_table(name, n=10_000, seed=0):
    "(X, y, task) of a generated table with one pathology (see the module docstring)."
    g = np.random.default_rng(seed)
    if name == "heavy_tails":   # raw units up to ~1e6 and beyond, a Cauchy column, a normal one
        logn = g.lognormal(13, 1.0, n)                     # median ~4e5
        cauchy = 1e6 * g.standard_cauchy(n)
        normal = g.normal(50, 10, n)
        z = 1.2 * (np.log(logn) - 13) + 1.5 * np.arctan(cauchy / 1e6) + 0.08 * (normal - 50)
        return np.column_stack([logn, cauchy, normal]), _logistic_labels(g, z, 0.3), "classification"
    if name == "degenerate_columns":   # a constant, two duplicates of a column, a one-hot block
        a, b = g.normal(size=n), g.normal(size=n)
        cat = g.integers(0, 5, n)
        onehot = (cat[:, None] == np.arange(5)).astype(float)
        z = a - 0.7 * b + np.array([0.0, 1.0, -1.0, 0.5, 0.0])[cat]
        X = np.column_stack([np.full(n, 7.0), a, a, a, b, onehot])
        return X, _logistic_labels(g, z, 0.4), "classification"
    if name == "positives_1pct":   # 1 % positives, five informative columns of five
        X = g.normal(size=(n, 5)) * np.array([1, 10, 100, 1, 1]) + np.array([0, 0, 1000, 0, 0])
        z = (X - np.array([0, 0, 1000, 0, 0])) / np.array([1, 10, 100, 1, 1]) @ np.array(
            [1.5, -1.0, 1.0, 0.5, 0.0])
        return X, _logistic_labels(g, z, 0.01), "classification"
    if name == "missing_many":   # 10 columns, each missing in 30 % of the records
        X = g.normal(size=(n, 10)) * 3 + 5
        z = (X - 5) / 3 @ np.linspace(1, -1, 10)
        y = _logistic_labels(g, z, 0.3)
        X[g.random(X.shape) < 0.3] = np.nan
        return X, y, "classification"
    if name == "integer_categories":   # codes 0..19 and 1..7 passed as plain integers
        c1, c2 = g.integers(0, 20, n), g.integers(1, 8, n)
        x = g.normal(size=n)
        z = g.normal(size=20)[c1] * 1.5 + 0.3 * c2 + x
        return np.column_stack([c1, c2, x]).astype(float), _logistic_labels(g, z, 0.35), \
            "classification"
    if name == "huge_target":   # a price-like target in units of ~1e9, features in their units
        X = np.column_stack([g.normal(100, 20, n), g.lognormal(3, 0.5, n), g.integers(0, 2, n)])
        y = 1e9 + 2e7 * (X[:, 0] - 100) / 20 + 3e7 * np.log(X[:, 1]) + 4e7 * X[:, 2] \
            + 2e7 * g.normal(size=n)
        return X, y, "regression"
    if name in ("small_price", "small_score"):   # few records for many columns, raw units
        n, p = (3000, 10) if name == "small_price" else (5000, 30)
        scale, shift = np.geomspace(1, 100, p), np.linspace(0, 50, p)
        X = g.normal(size=(n, p)) * scale + shift
        z = (X - shift) / scale @ g.normal(size=p) / np.sqrt(p)
        if name == "small_price":   # a log-normal price around 6e4: spread over powers of two
            return X, np.exp(11 + 0.5 * z + 0.3 * g.normal(size=n)), "regression"
        return X, 10 + z + 0.5 * g.normal(size=n), "regression"   # a score near 10: one bin
    raise ValueError(f"unknown generated table {name!r}")


def load_table(name, data_dir):
    "(X, y, task) of a table: sparse CSC for Dorothea, dense float otherwise."
    from dp_cd import datasets as dsets
    if name in SKLEARN:   # bundled with scikit-learn: no download
        import sklearn.datasets as skd
        X, y = getattr(skd, f"load_{name}")(return_X_y=True)
        if name == "diabetes":   # the raw target (25..346); its features come scaled by sklearn
            return np.asarray(X, float), np.asarray(y, float), "regression"
        y = np.asarray(y, float)
        if name == "breast_cancer": y = np.where(y > 0, 1.0, -1.0)
        return np.asarray(X, float), y, "classification"
    if name == "dorothea":
        ds = dsets.load_dorothea(data_dir)
        return ds.X, np.asarray(ds.y, dtype=float), "classification"
    if name.startswith("celeba_"):
        label = name[len("celeba_"):]
        other = "Smiling" if label == "Male" else "Male"   # kept as a feature, not left out
        ds = dsets.load_celeba(data_dir, label=label, sensitive=other)
        s = np.where(np.asarray(ds.sensitive) > 0, 1.0, -1.0)
        return np.column_stack([np.asarray(ds.X), s]), np.asarray(ds.y, dtype=float), \
            "classification"
    return make_table(name)


def splits_of(y, task, n_splits):
    "Seeded 80/20 (train, test) index pairs; stratified for classification (rare positives)."
    out = []
    for s in range(n_splits):
        g = np.random.default_rng(s)
        if task == "classification":
            te = []
            for c in np.unique(y):
                idx = g.permutation(np.flatnonzero(y == c))
                te.append(idx[:max(1, len(idx) // 5)])
            te = np.sort(np.concatenate(te))
            tr = np.setdiff1d(np.arange(len(y)), te)
        else:
            perm = g.permutation(len(y))
            te, tr = np.sort(perm[:len(y) // 5]), np.sort(perm[len(y) // 5:])
        out.append((tr, te))
    return out


def scores(task, y, pred, score):
    "dict of the test metrics: auc, balanced accuracy, accuracy (classification) or r2."
    from sklearn.metrics import roc_auc_score, balanced_accuracy_score
    if task == "regression":
        r2 = 1 - np.mean((pred - y) ** 2) / np.var(y) if np.all(np.isfinite(pred)) else np.nan
        return dict(r2=float(r2), auc=np.nan, balanced_accuracy=np.nan, accuracy=np.nan)
    ok = np.all(np.isfinite(score))
    if ok and np.ndim(score) == 2:   # more than two classes: one-vs-rest AUC of the probabilities
        auc = float(roc_auc_score(y, score, multi_class="ovr"))
    else: auc = float(roc_auc_score(y > 0, score)) if ok else np.nan
    return dict(r2=np.nan, auc=auc,
                balanced_accuracy=float(balanced_accuracy_score(y, pred)),
                accuracy=float(np.mean(pred == y)))


def models(task, eps, classes=(-1.0, 1.0)):
    "library -> make(seed) of an unfitted private model with its defaults, at this ε."
    from dp_cd import DPClassifier, DPRegressor
    from dp_cd.tuned import DPClassifierCV, DPRegressorCV
    classes = None if classes is None else list(classes)   # the PUBLIC label set
    if task == "classification":
        out = {"DPClassifier": lambda s: DPClassifier(epsilon=eps, classes=classes,
                                                      random_state=s),
               "DPClassifierCV": lambda s: DPClassifierCV(epsilon=eps, classes=classes,
                                                          random_state=s)}
        plain = out["DPClassifier"]
    else:
        out = {"DPRegressor": lambda s: DPRegressor(epsilon=eps, random_state=s),
               "DPRegressorCV": lambda s: DPRegressorCV(epsilon=eps, random_state=s),
               JOINT: lambda s: _JointTarget(DPRegressor(epsilon=eps, random_state=s))}
        plain = out["DPRegressor"]
    if ABLATE_FUTILE:
        out[FUTILE] = lambda s: _Ablation(plain(s), ("histogram_futile", "histogram_weak"))
    return out


# the ablation of `histogram_futile` (and `histogram_weak`): the bounds' histograms released (and
# charged) even when their threshold reaches n, a bound not located set to the default 1 (the
# `--suite sklearn` rows only)
FUTILE = "default (futile histograms released)"
ABLATE_FUTILE = False


JOINT = "DPRegressor (target in the joint release)"   # the ablation of `target_apart`

class _JointTarget:
    """A `DPRegressor` fitted with the rule `target_apart` switched off (the target's bound always
    in the features' histogram): the ablation that shows what the rule changes. Benchmark only."""
    def __init__(self, model): self.model = model
    def fit(self, X, y):
        from unittest import mock
        import dp_cd.estimators as est
        with mock.patch.object(est, "target_apart", lambda *a, **k: False):
            self.model.fit(X, y)
        return self
    def predict(self, X): return self.model.predict(X)


class _Ablation(_JointTarget):
    "A default estimator fitted with the public rules `rules` of dp_cd.estimators switched off."
    def __init__(self, model, rules): self.model, self.rules = model, rules
    def fit(self, X, y):
        from contextlib import ExitStack
        from unittest import mock
        import dp_cd.estimators as est
        with ExitStack() as stack:
            for rule in self.rules:
                stack.enter_context(mock.patch.object(est, rule, lambda *a, **k: False))
            self.model.fit(X, y)
        return self
    def decision_function(self, X): return self.model.decision_function(X)


def non_private(task):
    "The non-private scikit-learn model on the same features (mean imputation, standardised)."
    from sklearn.linear_model import LogisticRegression, LinearRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.impute import SimpleImputer
    last = LogisticRegression(max_iter=2000) if task == "classification" else LinearRegression()
    return make_pipeline(SimpleImputer(), StandardScaler(with_mean=False), last)


def _fit_one(task, make, Xtr, ytr, Xte, yte):
    "(metrics, seconds, number of warnings, error text) of one fit."
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            m = make().fit(Xtr, ytr)
            seconds = time.perf_counter() - t0
            pred = m.predict(Xte)
            score = (m.decision_function(Xte) if task == "classification"
                     and hasattr(m, "decision_function") else pred)
            if np.ndim(score) == 2:   # more than two classes: probabilities (softmax of scores)
                score = np.exp(score - score.max(axis=1, keepdims=True))
                score = score / score.sum(axis=1, keepdims=True)
            out, err = scores(task, yte, pred, score), ""
        except Exception as e:   # a crash or a refusal is a result here
            seconds = time.perf_counter() - t0
            out = dict(r2=np.nan, auc=np.nan, balanced_accuracy=np.nan, accuracy=np.nan)
            err = f"{type(e).__name__}: {str(e)[:160]}"
    return out, seconds, len(caught), err


def bench_untuned(data_dir, tables=TABLES, epsilons=EPSILONS, n_splits=3, libraries=None):
    "Rows of `untuned.csv`: one per table, split, library (with ε, or the baselines)."
    rows = []
    for name in tables:
        X, y, task = load_table(name, data_dir)
        n, p = X.shape
        pos = float(np.mean(y > 0)) if task == "classification" else np.nan
        classes = np.unique(y) if task == "classification" else None   # public label sets
        for split, (tr, te) in enumerate(splits_of(y, task, n_splits)):
            Xtr, Xte, ytr, yte = X[tr], X[te], y[tr], y[te]
            row = lambda **kw: dict(table=name, task=task, n=n, p=p, positive_rate=pos,
                                    split=split, **kw)
            Xd = lambda Z: Z.toarray() if hasattr(Z, "toarray") else Z
            if task == "classification":
                labels, counts = np.unique(ytr, return_counts=True)
                maj = labels[np.argmax(counts)]
                flat = (np.zeros(len(yte)) if len(classes) == 2
                        else np.full((len(yte), len(classes)), 1 / len(classes)))
                base = scores(task, yte, np.full(len(yte), maj), flat)
            else:
                base = scores(task, yte, np.full(len(yte), ytr.mean()), None)
            rows.append(row(library="constant", epsilon=np.inf, seconds=0.0, n_warnings=0,
                            error="", **base))
            m, sec, nw, err = _fit_one(task, lambda: non_private(task), Xd(Xtr), ytr, Xd(Xte), yte)
            rows.append(row(library="non-private", epsilon=np.inf, seconds=sec, n_warnings=nw,
                            error=err, **m))
            for eps in epsilons:
                for lib, make in models(task, eps, classes).items():
                    if libraries is not None and lib not in libraries: continue
                    seed = 1000 * split + int(10 * eps)
                    m, sec, nw, err = _fit_one(task, lambda: make(seed), Xtr, ytr, Xte, yte)
                    rows.append(row(library=lib, epsilon=eps, seconds=sec, n_warnings=nw,
                                    error=err, **m))
            last = [r for r in rows if r["table"] == name and r["split"] == split
                    and r["epsilon"] in (1.0, np.inf)]
            key = "r2" if task == "regression" else "auc"
            print(f"  {name:20s} split {split}: " + "  ".join(
                f"{r['library']}={r[key]:.3f}" + (f"[{r['error'][:40]}]" if r["error"] else "")
                for r in last), flush=True)
    return rows


def summarise(rows):
    "Mean and worst split of each metric per table, ε and library."
    import pandas as pd
    df = pd.DataFrame(rows)
    t = df.groupby(["table", "epsilon", "library"]).agg(
        auc_mean=("auc", "mean"), auc_worst=("auc", "min"),
        bacc_worst=("balanced_accuracy", "min"), r2_mean=("r2", "mean"), r2_worst=("r2", "min"),
        seconds=("seconds", "max"), warnings=("n_warnings", "max"),
        errors=("error", lambda e: int((e.astype(str).str.len() > 0).sum())))
    print(t.round(3).to_string())
    return t


if __name__ == "__main__":
    import argparse, csv, os
    from pathlib import Path
    ap = argparse.ArgumentParser(description="The defaults on untuned tables (untuned.csv).")
    ap.add_argument("--data-dir", default=os.environ.get("DP_CD_DATA"))
    ap.add_argument("--suite", choices=("data", "sklearn"), default="data",
                    help="data: the tables of --data-dir and the generated ones (untuned.csv); "
                         "sklearn: the tables scikit-learn ships (untuned_sklearn.csv)")
    ap.add_argument("--tables", default=None)
    ap.add_argument("--splits", type=int, default=None)
    ap.add_argument("--epsilons", default=None)
    ap.add_argument("--out", default=None)
    ap.add_argument("--replace", action="store_true",
                    help="keep the other tables' rows of --out, replace those of --tables")
    args = ap.parse_args()
    sk = args.suite == "sklearn"
    ABLATE_FUTILE = sk
    args.tables = args.tables or ",".join(SKLEARN if sk else TABLES)
    args.splits = args.splits or (SKLEARN_SPLITS if sk else 3)
    args.epsilons = args.epsilons or ",".join(map(str, SKLEARN_EPSILONS if sk else EPSILONS))
    args.out = args.out or str(Path(__file__).parent / "results"
                               / ("untuned_sklearn.csv" if sk else "untuned.csv"))
    warnings.filterwarnings("ignore")
    print("load at start:", os.getloadavg(), flush=True)
    rows = bench_untuned(args.data_dir, args.tables.split(","),
                         tuple(float(e) for e in args.epsilons.split(",")), args.splits)
    print("load at end:", os.getloadavg(), flush=True)
    summarise(rows)
    if args.replace and os.path.exists(args.out):   # the rows of the tables not re-run, kept
        with open(args.out, newline="") as f: old = list(csv.DictReader(f))
        new = {r["table"] for r in rows}   # in the file's order of tables, new tables last
        order = dict.fromkeys([r["table"] for r in old] + [r["table"] for r in rows])
        rows = [r for t in order for r in (rows if t in new else old) if r["table"] == t]
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {args.out}")
