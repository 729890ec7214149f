"""Out of the box: defaults with public bounds only (benchmarks/README.md, section `outofbox`).

dp_cd's privately tuned DPClassifierCV / DPRegressorCV against diffprivlib's LogisticRegression /
LinearRegression and the non-private scikit-learn model, on the same seeded 80/20 splits and the
same public bounds, at epsilon in {0.5, 1, 2, 5}. Every private fit pays for everything inside its
epsilon (dp_cd: the hyper-parameter search too; delta = 1/n^2; diffprivlib: pure epsilon-DP)."""
import json, time, warnings
import numpy as np

DATASETS = ("adult", "phishing", "electricity", "madelon", "california")
EPSILONS = (0.5, 1.0, 2.0, 5.0)


def public_box(X, y, task):
    """Per-feature (lower, upper) and target bounds. They stand for the data's documented schema
    ranges: taken from the WHOLE data set (train and test), the same for every library; in a
    deployment they must come from public knowledge, not from the private records."""
    box = (X.min(axis=0), X.max(axis=0))
    return box, ((float(y.min()), float(y.max())) if task == "regression" else None)


def fitters(task, box, ybox, eps):
    "name -> fit(Xtr, ytr, seed) -> (predict function, details) for each library at this epsilon."
    from sklearn.linear_model import LogisticRegression, LinearRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from dp_cd.tuned import DPClassifierCV, DPRegressorCV
    lo, hi = box
    half = np.maximum(np.abs(lo), np.abs(hi))
    out = {}
    if task == "classification":
        out["dp_cd (DPClassifierCV)"] = lambda X, y, s: _ours(DPClassifierCV(
            epsilon=eps, bounds=box, classes=[-1.0, 1.0], random_state=s), X, y)
        out["non-private"] = lambda X, y, s: (make_pipeline(StandardScaler(), LogisticRegression(
            max_iter=2000)).fit(X, y).predict, {})
    else:
        out["dp_cd (DPRegressorCV)"] = lambda X, y, s: _ours(DPRegressorCV(
            epsilon=eps, bounds=box, target_bound=ybox, random_state=s), X, y)
        out["non-private"] = lambda X, y, s: (LinearRegression().fit(X, y).predict, {})
    try:
        import diffprivlib.models as dpl
    except ImportError as e:
        print(f"  diffprivlib not importable here ({e}); run in the benchmark venv")
        return out
    if task == "classification":
        out["diffprivlib"] = lambda X, y, s: (dpl.LogisticRegression(
            epsilon=eps, data_norm=float(np.linalg.norm(half)), random_state=s).fit(X, y).predict, {})
        scale = lambda X: (X - (lo + hi) / 2) / np.where(hi > lo, (hi - lo) / 2, 1.0)
        out["diffprivlib (scaled by the bounds)"] = lambda X, y, s: _scaled(dpl.LogisticRegression(
            epsilon=eps, data_norm=float(np.sqrt(X.shape[1])), random_state=s).fit(scale(X), y), scale)
    else:
        out["diffprivlib"] = lambda X, y, s: (dpl.LinearRegression(
            epsilon=eps, bounds_X=box, bounds_y=ybox, random_state=s).fit(X, y).predict, {})
    return out


def _ours(model, X, y):
    model.fit(X, y)
    return model.predict, dict(selected=model.best_params_,
                               epsilon_reported=model.privacy_.epsilon)


def _scaled(model, scale):
    return (lambda X: model.predict(np.clip(scale(X), -1, 1))), {}


def score(task, predict, X, y):
    z = predict(X)
    if task == "classification": return float(np.mean(z == y))
    return float(1 - np.mean((z - y) ** 2) / np.var(y))


def bench_outofbox(load_problem, data_dir, datasets=DATASETS, epsilons=EPSILONS, splits=10):
    "Rows of the CSV: one per dataset, epsilon, library and split."
    from dp_cd import datasets as dsets
    warnings.filterwarnings("ignore")   # diffprivlib's PrivacyLeakWarning-style notices, sklearn's convergence
    rows = []
    for name in datasets:
        ds = dsets.load(name, data_dir)
        X = ds.X.toarray() if hasattr(ds.X, "toarray") else np.asarray(ds.X, dtype=float)
        y, task = ds.y, ds.task
        box, ybox = public_box(X, y, task)
        for split in range(splits):
            perm = np.random.default_rng(split).permutation(len(y))
            te, tr = perm[:len(y) // 5], perm[len(y) // 5:]
            for eps in epsilons:
                for lib, fit in fitters(task, box, ybox, eps).items():
                    if lib == "non-private" and eps != epsilons[0]: continue   # once per split
                    t0 = time.perf_counter()
                    predict, details = fit(X[tr], y[tr], 1000 * split + int(10 * eps))
                    rows.append(dict(dataset=name, task=task, n_train=len(tr), p=X.shape[1],
                                     epsilon=np.inf if lib == "non-private" else eps, library=lib,
                                     split=split, metric=score(task, predict, X[te], y[te]),
                                     seconds=time.perf_counter() - t0,
                                     selected=json.dumps(details.get("selected", ""), default=float),
                                     epsilon_reported=details.get("epsilon_reported", "")))
            done = [r for r in rows if r["dataset"] == name and r["split"] == split]
            print(f"  {name:12s} split {split}: " + "  ".join(
                f"{r['library'].split(' ')[0]}@{r['epsilon']:g}={r['metric']:.3f}" for r in done), flush=True)
    summarise(rows)
    return rows


def summarise(rows):
    "Mean and sd per dataset, epsilon and library; the issue's goals, won or lost."
    import pandas as pd
    df = pd.DataFrame(rows)
    t = df.groupby(["dataset", "epsilon", "library"])["metric"].agg(["mean", "std", "count"])
    print(t.round(4).to_string())


DIAGNOSIS_DATASETS = ("electricity", "adult", "phishing")


def _unit_problem(name, data_dir):
    "The design DPClassifierCV searches on (the public box mapped to [-1, 1], a column of ones)."
    from dp_cd import datasets as dsets
    from dp_cd.tuned import affine_from_bounds, to_unit_box
    ds = dsets.load(name, data_dir)
    X = ds.X.toarray() if hasattr(ds.X, "toarray") else np.asarray(ds.X, dtype=float)
    box, _ = public_box(X, ds.y, ds.task)
    ones = np.ones((len(ds.y), 1))
    U = np.hstack([to_unit_box(X, *affine_from_bounds(box, X.shape[1])), ones])
    lo, hi = box   # the same box, centred: x -> (x - mid)/half for every column
    Uc = np.hstack([to_unit_box(X, (lo + hi) / 2, np.where(hi > lo, (hi - lo) / 2, 1.0)), ones])
    perm = np.random.default_rng(0).permutation(len(ds.y))   # split 0 of the benchmark
    return U, Uc, ds.y, perm[len(ds.y) // 5:], perm[:len(ds.y) // 5]


def _diagnosis_rows(name, data_dir, seeds=(1, 2)):
    "Rows for one data set: conditioning, and each DP-CD candidate with public vs private M_j."
    from dp_cd.model.losses import LogisticLoss
    from dp_cd.model.penalties import L2
    from dp_cd.solvers.dpcd import dp_cd
    from dp_cd.solvers.tuning import calibrate_selection, default_candidates, tnb_for_mean, zcdp_fit
    U, Uc, y, tr, te = _unit_problem(name, data_dir)
    accuracy = lambda w, V=U: float(np.mean(np.where(V[te] @ w > 0, 1.0, -1.0) == y[te]))
    loss, pen, q = LogisticLoss(), L2(1e-4), U.shape[1]
    beta = np.full(q, loss.curvature)   # the public M_j of features scaled into [-1, 1]
    row = lambda **kw: dict(dataset=name, **kw)
    second = (U[tr, :-1] ** 2).mean(0)   # E[x_j^2] of each feature in the unit box
    rows = [row(experiment="smallest non-zero E[x_j^2]", setting="unit box", passes="",
                metric=float(second[second > 0].min())),
            row(experiment="share of features with E[x_j^2] < 0.01", setting="unit box",
                passes="", metric=float(np.mean(second < 0.01))),
            row(experiment="majority class share", setting="test split", passes="",
                metric=float(max(np.mean(y[te] > 0), np.mean(y[te] < 0))))]
    for passes in (50, 300):   # eps = 1e6: no noise to speak of; clip 3 as the selected candidate
        fit = dp_cd(U[tr], y[tr], loss, pen, epsilon=1e6, delta=1e-6, n_passes=passes, clip=3.0,
                    smoothness=beta, random_state=0)
        rows.append(row(experiment="DP-CD, negligible noise", setting="public M_j = beta",
                        passes=passes, metric=accuracy(fit.coef)))
        fit = dp_cd(Uc[tr], y[tr], loss, pen, epsilon=1e6, delta=1e-6, n_passes=passes, clip=3.0,
                    smoothness=beta, random_state=0)
        rows.append(row(experiment="DP-CD, negligible noise", setting="public M_j = beta, "
                        "box centred", passes=passes, metric=accuracy(fit.coef, Uc)))
        fit = dp_cd(U[tr], y[tr], loss, pen, epsilon=np.inf, delta=None, n_passes=passes, clip=np.inf,
                    smoothness="exact", random_state=0)
        rows.append(row(experiment="DP-CD, non-private", setting="exact M_j", passes=passes,
                        metric=accuracy(fit.coef)))
    rho = calibrate_selection(1.0, 1 / len(y) ** 2, tnb_for_mean(8.0, 1.0))   # a run at eps = 1
    grid = [c for c in default_candidates(len(tr), q) if c["solver"] == "dp-cd"]
    for opts in {tuple((k, v) for k, v in c.items() if k not in ("solver", "smoothness")): 0
                 for c in grid}:   # each (clipping, C, passes) once, with either M_j
        opts = dict(opts)
        for label, sm in (("public M_j", dict(smoothness=beta)),
                          ("private M_j", dict(smoothness="private", smoothness_bound=beta))):
            acc = [accuracy(zcdp_fit("dp-cd", U[tr], y[tr], loss, pen, rho,
                                     np.random.default_rng(s), **opts, **sm).coef) for s in seeds]
            setting = f"{opts['clipping']} C={opts['clip'] / np.sqrt(q):.1f}sqrt(p), {label}"
            rows.append(row(experiment="candidate at the rho of eps = 1", setting=setting,
                            passes=opts["n_passes"], metric=float(np.mean(acc))))
    return rows


def diagnose(data_dir, out, datasets=DIAGNOSIS_DATASETS):
    "Why Electricity lost: conditioning of the public smoothness bound (CSV `out`)."
    import csv
    rows = [r for name in datasets for r in _diagnosis_rows(name, data_dir)]
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    for r in rows: print(r)
    return rows


def rerun_ours(data_dir, datasets, path):
    """Run dp_cd's rows (the tuned estimators) of `datasets` again, on the same splits and seeds, and
    put them in place of the old ones in the CSV at `path`; every other row is kept as it is (the
    other libraries' rows need the benchmark venv, and do not change with dp_cd)."""
    import csv
    rows = [r for r in bench_outofbox(None, data_dir, datasets) if r["library"].startswith("dp_cd")]
    key = lambda r: (r["dataset"], str(float(r["epsilon"])), r["library"], str(r["split"]))
    new = {key(r): r for r in rows}
    with open(path, newline="") as f:
        old = list(csv.DictReader(f))
    missing = [k for k in new if k not in {key(r) for r in old}]
    if missing: raise SystemExit(f"rows not in {path}: {missing[:3]}")
    out = [new.get(key(r), r) for r in old]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(old[0]))
        w.writeheader()
        w.writerows(out)
    print(f"wrote {path}: {len(new)} rows of dp_cd replaced")


if __name__ == "__main__":
    import argparse, os
    from pathlib import Path
    ap = argparse.ArgumentParser(description="Out-of-the-box benchmark helpers (the benchmark "
                                 "itself runs from run.py --only outofbox).")
    ap.add_argument("--diagnose", action="store_true",
                    help="write results/outofbox_diagnosis.csv: why Electricity lost")
    ap.add_argument("--rerun-ours", default=None, metavar="DATASETS",
                    help="comma-separated datasets whose dp_cd rows of results/outofbox.csv are run "
                         "again (the dev environment suffices)")
    ap.add_argument("--data-dir", default=os.environ.get("DP_CD_DATA"))
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    results = Path(__file__).parent / "results"
    if args.rerun_ours:
        rerun_ours(args.data_dir, args.rerun_ours.split(","), args.out or results / "outofbox.csv")
    elif args.diagnose:
        diagnose(args.data_dir, args.out or results / "outofbox_diagnosis.csv")
    else:
        ap.error("give --diagnose or --rerun-ours")
