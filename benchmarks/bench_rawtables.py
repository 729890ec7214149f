"""Raw tables: the defaults on tables in their own units (benchmarks/README.md, section `rawtables`).

A user fits their table as it is — money in dollars, counts, one-hot blocks, rare positives,
missing values — with the defaults and the public label set, once. Two tracks:

* `private`: nothing about the data is public; dp_cd estimates its bounds (and centre) inside ε.
  diffprivlib has no private route for its bounds: given none, it reads them from the data and
  says so (a `PrivacyLeakWarning`): its rows are labelled "bounds read from the data (NOT
  private)" and shown for reference only;
* `public`: a public box per feature (and target) stands for the data's documented schema: taken
  from the WHOLE data set, the same for every library (as in the `outofbox` section).

Libraries: dp_cd's plain `DPClassifier` / `DPRegressor` and tuned `DPClassifierCV` /
`DPRegressorCV` (defaults), diffprivlib's `LogisticRegression` / `LinearRegression` (defaults), the
non-private scikit-learn model (standardised; missing values imputed by the training mean). Every
dp_cd fit pays for everything inside its ε (δ = 1/n²). dp_cd's estimators get the table as a user
holds it: a DataFrame whose categorical columns (one-hot blocks named `column=value`, e.g. Adult's, and
the mixed table's category) are declared with their PUBLIC categories (`schema_frame`); they one-hot
encode them into the same columns the other libraries get as numbers. Metrics: test accuracy and ROC AUC, or R²,
per seeded 80/20 split; the summary gives mean, standard deviation and the WORST split."""
import time, warnings
import numpy as np

DATASETS = ("credit_sim", "mixed_sim", "adult", "california", "electricity", "phishing")
EPSILONS = (0.5, 1.0, 2.0, 5.0)


def make_credit(n=10_000, seed=0):
    """A credit table: a student indicator, a balance and an income in their units (up to ~7e4),
    3 % positives driven by the balance."""
    g = np.random.default_rng(seed)
    student = (g.random(n) < 0.3) * 1.0
    balance = np.clip(g.normal(835, 484, n), 0, None)
    income = np.where(student == 1, g.normal(17_900, 4_400, n), g.normal(40_000, 10_000, n))
    X = np.column_stack([student, balance, income.clip(700, None)])
    y = g.random(n) < 1 / (1 + np.exp(10.65 - 0.0055 * balance + 0.6 * student))
    return X, np.where(y, 1.0, -1.0), "classification"


def make_mixed(n=20_000, seed=1):
    """Heavy tails (log-normal and Pareto money columns), an offset column, a one-hot block of 8
    categories, 5 % missing values in the numeric columns, 6 % positives."""
    g = np.random.default_rng(seed)
    money = g.lognormal(10, 1.2, n)
    claims = g.pareto(1.5, n) * 100
    year = g.integers(1990, 2021, n).astype(float)
    cat = g.integers(0, 8, n)
    onehot = (cat[:, None] == np.arange(8)).astype(float)
    z = (0.9 * (np.log(money) - 10) + 0.4 * np.log1p(claims) - 0.05 * (year - 2005)
         + np.array([0, 0.5, -0.5, 1, 0, 0, -1, 0.3])[cat] - 3.4)
    y = g.random(n) < 1 / (1 + np.exp(-z))
    X = np.column_stack([money, claims, year, onehot])
    X[:, :3][g.random((n, 3)) < 0.05] = np.nan
    return X, np.where(y, 1.0, -1.0), "classification"


def load_table(name, data_dir):
    "(X dense float with NaN where missing, y, task) of a benchmark table, in its raw form."
    if name == "credit_sim": return make_credit()
    if name == "mixed_sim": return make_mixed()
    from dp_cd import datasets as dsets
    ds = dsets.load(name, data_dir)
    X = ds.X.toarray() if hasattr(ds.X, "toarray") else np.asarray(ds.X, dtype=float)
    return X, np.asarray(ds.y, dtype=float), ds.task


def table_names(name, data_dir, p):
    "Public column names of a table (`column=value`: a one-hot column of a declared category)."
    if name == "mixed_sim": return ["money", "claims", "year"] + [f"category={k}" for k in range(8)]
    if name == "credit_sim": return ["student", "balance", "income"]
    from dp_cd import datasets as dsets
    names = dsets.load(name, data_dir).feature_names
    return list(names) if names is not None else [f"x{j}" for j in range(p)]


def schema_frame(X, names):
    """(frame(X), order): a function giving the records as a DataFrame whose one-hot blocks (columns
    named `column=value`) are one categorical column with those PUBLIC categories (no indicator set:
    missing), and the column order of its one-hot encoding (numeric columns, then the blocks), so
    that the estimators' encoding of frame(X) is X[:, order]. None when the table has no block."""
    import pandas as pd
    groups, numeric = {}, []
    for j, f in enumerate(names):
        if "=" in str(f): groups.setdefault(str(f).split("=", 1)[0], []).append(j)
        else: numeric.append(j)
    if not groups: return None, None
    cats = {g: [str(names[j]).split("=", 1)[1] for j in idx] for g, idx in groups.items()}
    def frame(Z):
        out = pd.DataFrame({str(names[j]): Z[:, j] for j in numeric})
        for g, idx in groups.items():
            block = Z[:, idx]
            codes = np.where(np.nan_to_num(block).sum(1) > 0, np.nan_to_num(block).argmax(1), -1)
            out[g] = pd.Categorical.from_codes(codes, dtype=pd.CategoricalDtype(cats[g]))
        return out
    return frame, np.array(numeric + [j for idx in groups.values() for j in idx])


class _Framed:
    "A dp_cd estimator fitted on the records as a DataFrame with declared categories (`schema_frame`)."
    def __init__(self, model, frame): self.model, self.frame = model, frame
    def fit(self, X, y): self.model.fit(self.frame(X), y); return self
    def predict(self, X): return self.model.predict(self.frame(X))
    def decision_function(self, X): return self.model.decision_function(self.frame(X))
    @property
    def privacy_(self): return self.model.privacy_


def public_box(X, y, task):
    """Per-feature (lower, upper) and target bounds standing for the documented schema ranges: from
    the WHOLE data set, the same for every library (in a deployment they must be public facts)."""
    box = (np.nanmin(X, axis=0), np.nanmax(X, axis=0))
    return box, ((float(y.min()), float(y.max())) if task == "regression" else None)


def _scores(task, model, X, y, shift=0.0):
    "(metric, auc): accuracy and ROC AUC, or R² and NaN."
    from sklearn.metrics import roc_auc_score
    if task == "regression":
        z = model.predict(X) + shift
        return float(1 - np.mean((z - y) ** 2) / np.var(y)), float("nan")
    acc = float(np.mean(model.predict(X) == y))
    s = model.decision_function(X) if hasattr(model, "decision_function") else model.predict_proba(X)[:, 1]
    return acc, float(roc_auc_score(y > 0, s))


class _Imputed:
    "A model applied to X with missing values set to public constants (for libraries without a rule)."
    def __init__(self, model, fill): self.model, self.fill = model, fill
    def _x(self, X): return np.where(np.isnan(X), self.fill, X)
    def fit(self, X, y): self.model.fit(self._x(X), y); return self
    def predict(self, X): return self.model.predict(self._x(X))
    def decision_function(self, X):
        m = self.model
        return m.decision_function(self._x(X)) if hasattr(m, "decision_function") else m.predict_proba(self._x(X))[:, 1]


class _Scaled(_Imputed):
    "A model applied to X mapped into [-1, 1] by the public box (missing values: the middle)."
    def __init__(self, model, lo, hi):
        self.model, self.c, self.h = model, (lo + hi) / 2, np.where(hi > lo, (hi - lo) / 2, 1.0)
    def _x(self, X): return np.clip(np.nan_to_num((X - self.c) / self.h, nan=0.0), -1, 1)


def fitters(task, track, box, ybox, eps, schema=(None, None)):
    """library -> make(seed) of an unfitted model, for this track and ε (`schema`: `schema_frame`'s
    output; dp_cd's estimators then get the DataFrame, and the public box in its columns' order)."""
    from dp_cd import DPClassifier, DPRegressor
    from dp_cd.tuned import DPClassifierCV, DPRegressorCV
    lo, hi = box
    half = np.maximum(np.abs(lo), np.abs(hi))
    frame, order = schema
    out = {}
    if frame is not None:
        box = (lo[order], hi[order])
    if task == "classification":
        pub = {} if track == "private" else dict(bounds=box)   # the public box (lower, upper)
        pub_cv = {} if track == "private" else dict(bounds=box)
        out["dp_cd DPClassifier"] = lambda s: DPClassifier(epsilon=eps, classes=[-1.0, 1.0],
                                                           random_state=s, **pub)
        out["dp_cd DPClassifierCV"] = lambda s: DPClassifierCV(epsilon=eps, classes=[-1.0, 1.0],
                                                               random_state=s, **pub_cv)
    else:
        T = max(abs(ybox[0]), abs(ybox[1]))
        pub = {} if track == "private" else dict(bounds=box, target_bound=T)
        pub_cv = {} if track == "private" else dict(bounds=box, target_bound=ybox)
        out["dp_cd DPRegressor"] = lambda s: DPRegressor(epsilon=eps, random_state=s, **pub)
        out["dp_cd DPRegressorCV"] = lambda s: DPRegressorCV(epsilon=eps, random_state=s, **pub_cv)
    if frame is not None:
        out = {k: (lambda make: lambda s: _Framed(make(s), frame))(make) for k, make in out.items()}
        box = (lo, hi)
    try:
        import diffprivlib.models as dpl
    except ImportError as e:
        print(f"  diffprivlib not importable here ({e}); run in the benchmark venv")
        return out
    fill = np.where((lo <= 0) & (hi >= 0), 0.0, (lo + hi) / 2)   # a public value for NaN
    if track == "private":   # no public bounds: diffprivlib reads them from the data (a leak)
        name = "diffprivlib (bounds read from the data: NOT private)"
        if task == "classification":
            out[name] = lambda s: _Imputed(dpl.LogisticRegression(epsilon=eps, random_state=s), fill)
        else:
            out[name] = lambda s: _Imputed(dpl.LinearRegression(epsilon=eps, random_state=s), fill)
    elif task == "classification":
        out["diffprivlib"] = lambda s: _Imputed(dpl.LogisticRegression(
            epsilon=eps, data_norm=float(np.linalg.norm(half)), random_state=s), fill)
        # its better variant here: the features mapped into [-1, 1] by the same public box
        out["diffprivlib (scaled by the bounds)"] = lambda s: _Scaled(dpl.LogisticRegression(
            epsilon=eps, data_norm=float(np.sqrt(len(lo))), random_state=s), lo, hi)
    else:
        out["diffprivlib"] = lambda s: _Imputed(dpl.LinearRegression(
            epsilon=eps, bounds_X=box, bounds_y=ybox, random_state=s), fill)
    return out


def _non_private(task):
    from sklearn.linear_model import LogisticRegression, LinearRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.impute import SimpleImputer
    last = LogisticRegression(max_iter=2000) if task == "classification" else LinearRegression()
    return make_pipeline(SimpleImputer(), StandardScaler(), last)


def bench_rawtables(data_dir, datasets=DATASETS, epsilons=EPSILONS, splits=10,
                    tracks=("private", "public"), libraries=None):
    """Rows of the CSV: one per dataset, track, epsilon, library and split (`libraries`: the names
    to run, None: all, the non-private model included)."""
    warnings.filterwarnings("ignore")
    rows = []
    for name in datasets:
        X, y, task = load_table(name, data_dir)
        box, ybox = public_box(X, y, task)
        schema = schema_frame(X, table_names(name, data_dir, X.shape[1]))
        for split in range(splits):
            perm = np.random.default_rng(split).permutation(len(y))
            te, tr = perm[:len(y) // 5], perm[len(y) // 5:]
            row = lambda **kw: dict(dataset=name, task=task, n_train=len(tr), p=X.shape[1],
                                    split=split, **kw)
            if libraries is None or "non-private" in libraries:
                t0 = time.perf_counter()
                m = _non_private(task).fit(X[tr], y[tr])
                metric, auc = _scores(task, m, X[te], y[te])
                rows.append(row(track="any", epsilon=np.inf, library="non-private", metric=metric,
                                auc=auc, seconds=time.perf_counter() - t0, epsilon_reported=""))
            for track in tracks:
                for eps in epsilons:
                    for lib, make in fitters(task, track, box, ybox, eps, schema).items():
                        if libraries is not None and lib not in libraries: continue
                        t0 = time.perf_counter()
                        m = make(1000 * split + int(10 * eps)).fit(X[tr], y[tr])
                        seconds = time.perf_counter() - t0
                        metric, auc = _scores(task, m, X[te], y[te])
                        rep = getattr(m, "privacy_", None)
                        rows.append(row(track=track, epsilon=eps, library=lib, metric=metric,
                                        auc=auc, seconds=seconds,
                                        epsilon_reported="" if rep is None else rep.epsilon))
            done = [r for r in rows if r["dataset"] == name and r["split"] == split and r["epsilon"] in (1.0, np.inf)]
            print(f"  {name:12s} split {split}: " + "  ".join(
                f"{r['library'].split(' (')[0]}/{r['track']}={r['metric']:.3f}" for r in done), flush=True)
    summarise(rows)
    return rows


def summarise(rows):
    "Mean, sd and worst split per dataset, track, epsilon and library."
    import pandas as pd
    df = pd.DataFrame(rows)
    t = df.groupby(["dataset", "track", "epsilon", "library"]).agg(
        metric_mean=("metric", "mean"), metric_sd=("metric", "std"), metric_worst=("metric", "min"),
        auc_mean=("auc", "mean"), auc_worst=("auc", "min"), seconds=("seconds", "median"))
    print(t.round(4).to_string())
    return t


def bench_fit_time(n=250_000, p=10, repeat=3, seed=0):
    """Rows of `rawtables_fit_time.csv`: the plain `DPClassifier`'s DEFAULT fit (ε = 1, private
    bounds, centre and scales, DP-CD, 10 passes) on a generated n × p table (Gaussian columns in
    their own units, logistic labels), timed by wall clock and process CPU: once cold (the first
    fit in this process, numba's on-disk cache as it is), then `repeat` warm fits (other seeds),
    with the machine's load (`os.getloadavg`) at the start of each."""
    import os
    from dp_cd import DPClassifier
    g = np.random.default_rng(seed)
    X = g.normal(size=(n, p)) * np.logspace(0, 3, p) + np.arange(p)   # raw units and offsets
    y = (X / np.logspace(0, 3, p)) @ g.normal(size=p) + g.logistic(size=n) > 0
    rows = []
    for k in range(repeat + 1):
        load = os.getloadavg()[0]
        t0, c0 = time.perf_counter(), time.process_time()
        DPClassifier(epsilon=1.0, classes=[False, True], random_state=k).fit(X, y)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        rows.append(dict(n=n, p=p, library="dp_cd DPClassifier", run="cold" if k == 0 else "warm",
                         seconds=wall, cpu_seconds=cpu, load=load, goal_seconds=5.0))
        print(f"  fit {k} ({rows[-1]['run']}): {wall:.2f} s wall, {cpu:.2f} s CPU, load {load:.1f}",
              flush=True)
    return rows


def bench_tuned_diagnosis(data_dir, datasets=("credit_sim", "phishing", "mixed_sim"),
                          epsilons=(0.5, 1.0), splits=10):
    """Rows of `rawtables_tuned_diagnosis.csv`: why the tuned estimator can lose to the plain one on
    a small table at a small ε. Private track, the splits and seeds of `bench_rawtables`; variants:
    the plain default (10 passes) and the plain estimator at 20 passes (the grid's other
    candidate), the tuned default grid searched at any n ε (`min_search_n_eps=0`; its selected
    number of passes recorded), and the tuned route with the default candidate alone (what the
    search's share and the refit cost by themselves)."""
    from dp_cd import DPClassifier
    from dp_cd.tuned import DPClassifierCV, standardized_candidates
    warnings.filterwarnings("ignore")
    rows = []
    for name in datasets:
        X, y, task = load_table(name, data_dir)
        frame, _ = schema_frame(X, table_names(name, data_dir, X.shape[1]))
        fr = (lambda Z: Z) if frame is None else frame
        for split in range(splits):
            perm = np.random.default_rng(split).permutation(len(y))
            te, tr = perm[:len(y) // 5], perm[len(y) // 5:]
            for eps in epsilons:
                seed = 1000 * split + int(10 * eps)
                kw = dict(epsilon=eps, classes=[-1.0, 1.0], random_state=seed)
                variants = {"plain (10 passes)": lambda: DPClassifier(**kw),
                            "plain, 20 passes": lambda: DPClassifier(n_passes=20, **kw),
                            "tuned (default grid)": lambda: DPClassifierCV(min_search_n_eps=0,
                                                                           **kw),
                            "tuned, the default candidate alone": lambda: DPClassifierCV(
                                candidates=standardized_candidates()[:1], **kw)}
                for variant, make in variants.items():
                    t0 = time.perf_counter()
                    m = make().fit(fr(X[tr]), y[tr])
                    acc, auc = _scores(task, _Framed(m, fr), X[te], y[te])
                    best = getattr(m, "best_params_", None)
                    rows.append(dict(dataset=name, n_train=len(tr), split=split, epsilon=eps,
                                     variant=variant, metric=acc, auc=auc,
                                     n_passes=(m.n_passes if best is None else best["n_passes"]),
                                     seconds=time.perf_counter() - t0))
            print(f"  {name} split {split} done", flush=True)
    return rows


def write_rows(rows, path):
    "Write result rows (dicts with the same keys) to the CSV file `path`."
    import csv
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {path}")


if __name__ == "__main__":
    import argparse, os
    from pathlib import Path
    ap = argparse.ArgumentParser(description="Raw tables (also run by run.py --only rawtables).")
    ap.add_argument("--data-dir", default=os.environ.get("DP_CD_DATA"))
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--splits", type=int, default=10)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "rawtables.csv"))
    ap.add_argument("--libraries", default=None,
                    help="comma-separated library names to run again; their rows (for the datasets "
                         "run) replace those of the existing --out file, the other rows are kept")
    ap.add_argument("--fit-time", action="store_true",
                    help="time the plain default fit on 250k x 10 instead (rawtables_fit_time.csv)")
    ap.add_argument("--tuned-diagnosis", action="store_true",
                    help="the tuned estimator against the plain one on the small tables instead "
                         "(rawtables_tuned_diagnosis.csv)")
    args = ap.parse_args()
    import csv
    if args.tuned_diagnosis:
        rows = bench_tuned_diagnosis(args.data_dir, splits=args.splits)
        path = Path(args.out).with_name("rawtables_tuned_diagnosis.csv")
        write_rows(rows, path)
        raise SystemExit(0)
    if args.fit_time:
        rows = bench_fit_time()
        path = Path(args.out).with_name("rawtables_fit_time.csv")
        write_rows(rows, path)
        raise SystemExit(0)
    libs = None if args.libraries is None else args.libraries.split(",")
    datasets = args.datasets.split(",")
    rows = bench_rawtables(args.data_dir, datasets, splits=args.splits, libraries=libs)
    if libs is not None and Path(args.out).exists():   # keep the rows not run again, in order
        with open(args.out, newline="") as f:
            old = list(csv.DictReader(f))
        new = {(r["dataset"], r["track"], str(float(r["epsilon"])), r["library"], str(r["split"])): r
               for r in rows}
        key = lambda r: (r["dataset"], r["track"], str(float(r["epsilon"])), r["library"],
                         str(r["split"]))
        rerun = lambda r: r["dataset"] in datasets and r["library"] in libs
        missing = [k for k in new if k not in {key(r) for r in old}]
        rows = [new.get(key(r), r) if rerun(r) else r for r in old] + [new[k] for k in missing]
    write_rows(rows, args.out)
