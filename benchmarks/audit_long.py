"""Long empirical privacy audits through the PUBLIC entry points (one public call per run, fresh seed each time).

The book's audit chapters (nbs/07_evidence/01_audit_mechanisms.ipynb, nbs/07_evidence/02_audit_solvers.ipynb) use fast replays of the
solvers' kernels, checked bit for bit against the public functions; this script is the slower, replay-free
counterpart: every run is a full call of the public function (validation, calibration, noise), on the same
canary pairs. It prints, for every scenario, the claimed/reported epsilon, the Clopper-Pearson lower bound at
95% confidence (threshold selected on half of the runs) and the tightness, and writes a CSV.

    python benchmarks/audit_long.py                      # all scenarios, 20000 runs per dataset (~ an hour on one core)
    python benchmarks/audit_long.py --runs 2000 --only dp_cd_one_step select_as_published
    python benchmarks/audit_long.py --out benchmarks/results/audit_long.csv

Exit status 1 if an audit of an honest claim exceeds the claim (a privacy bug), or if an audit meant to refute a
published claim does not refute it (a loss of power, reported but not a privacy bug: exit status 2).
"""
import argparse, csv, math, sys, time, warnings
from pathlib import Path
import numpy as np

from dp_cd.privacy.audit import epsilon_lower_bound
from dp_cd.model.losses import SquaredLoss
from dp_cd.model.penalties import NoPenalty, L2
from dp_cd.utils import PrivacyLeakWarning

N_REC, BIG, EPS, DELTA = 10, 1e3, 1.0, 1e-5
LOSS = SquaredLoss()

def canary_pair(p):
    "Canary x0 = (1..1)/sqrt(p) with label +-BIG, nine zero records (see nbs/07_evidence/02_audit_solvers.ipynb)."
    X = np.zeros((N_REC, p)); X[0] = 1 / math.sqrt(p)
    yD, yDp = np.zeros(N_REC), np.zeros(N_REC); yD[0], yDp[0] = BIG, -BIG
    return X, yD, yDp

# --- scenarios: name -> (make(seed) -> (stat_D, stat_D', claimed, reported), mode) -----------------------------
# mode "honest": assert lower <= claimed; "refute": the claim is known false, expect lower > claimed.
def _solver_scenario(fit, p, stat=lambda r: r.coef.sum()):
    X, yD, yDp = canary_pair(p)
    def make(seed):
        a, b = fit(X, yD, seed), fit(X, yDp, seed + 1)
        return stat(a), stat(b), a.privacy.epsilon, a.privacy.epsilon
    return make

def _dp_cd(passes):
    from dp_cd.solvers.dpcd import dp_cd
    return lambda X, y, s: dp_cd(X, y, LOSS, NoPenalty(), epsilon=EPS, delta=DELTA, n_passes=passes, smoothness=np.ones(X.shape[1]), step=0.5, clip=1.0, random_state=s)

def _dp_sgd(X, y, s):
    from dp_cd.solvers.dpsgd import dp_sgd
    return dp_sgd(X, y, LOSS, NoPenalty(), epsilon=EPS, delta=DELTA, n_passes=1, step=0.5, clip=1.0, batch_size=N_REC, random_state=s)

def _dp_sgd_sub(X, y, s):
    from dp_cd.solvers.dpsgd import dp_sgd
    return dp_sgd(X, y, LOSS, NoPenalty(), epsilon=EPS, delta=DELTA, n_passes=2, step=0.5, clip=1.0, batch_size=5, random_state=s)

def _dp_scd(X, y, s):
    from dp_cd.solvers.dpscd import dp_scd
    return dp_scd(X, y, LOSS, L2(1.0), epsilon=EPS, delta=DELTA, n_passes=3, batch_size=N_REC, clip=1.0, random_state=s)

def _scd_stat(r): return r.coef[0] * N_REC + r.params["dual"][0]   # alpha_0 + v (lam = 1)

def _outpert():
    from dp_cd.solvers.output_perturbation import output_perturbation
    X = np.zeros((N_REC, 1)); X[0] = 1.0
    def make(seed):
        out = []
        for k, sign in enumerate((1.0, -1.0)):
            y = np.zeros(N_REC); y[0] = sign
            out.append(output_perturbation(X, y, LOSS, L2(50.0), epsilon=EPS, delta=DELTA, x_norm=1.0, y_bound=1.0, random_state=seed + k))
        return out[0].coef[0], out[1].coef[0], out[0].privacy.epsilon, out[0].privacy.epsilon
    return make

def _dp_gcd():
    from dp_cd.solvers.dpgcd import dp_gcd
    X = np.zeros((N_REC, 2)); yD, yDp = np.zeros(N_REC), np.zeros(N_REC)
    X[0] = (1, 1); yD[0], yDp[0] = -BIG, BIG
    X[1] = (1, 0); yD[1] = yDp[1] = -BIG
    X[2] = (0, 1); yD[2] = yDp[2] = BIG
    fit = lambda y, s: dp_gcd(X, y, LOSS, NoPenalty(), epsilon=EPS, delta=DELTA, n_passes=1, smoothness=np.ones(2), clip=1.0, step=0.5, random_state=s)
    def make(seed):
        a, b = fit(yD, seed), fit(yDp, seed + 1)
        return -a.coef.sum(), -b.coef.sum(), EPS, a.privacy.epsilon
    return make

def _estimator():
    from dp_cd.estimators import DPRegressor
    X, yD, yDp = canary_pair(1)
    est = lambda y, s: DPRegressor(loss="squared", penalty="none", epsilon=EPS, delta=DELTA, n_passes=1, step=0.5, clip=1.0,
                                   fit_intercept=False, random_state=s, solver_options=dict(smoothness=np.ones(1))).fit(X, y)
    def make(seed):
        a, b = est(yD, seed), est(yDp, seed + 1)
        return a.coef_[0], b.coef_[0], a.privacy_.epsilon, a.privacy_.epsilon
    return make

def _select(method, refute=False):
    from dp_cd.privacy.mechanisms import select, selection_scale
    if method == "as_published": eps, u, up, sens = 2.0, np.array([3.0, 5.0]), np.array([2.0, 6.0]), 1.0
    else: eps, u, up, sens = 1.0, 0.5 * np.r_[1.0, np.zeros(19)], 0.5 * np.r_[0.0, np.ones(19)], 0.5
    cal = selection_scale(eps, sens, method)
    def make(seed):
        rng = np.random.default_rng(seed)
        return (float(select(u, sens, eps, rng, method=method) == 0), float(select(up, sens, eps, rng, method=method) == 0),
                eps, cal.epsilon)
    return make

def scenarios():
    S = {
        "dp_cd_one_step": (lambda: _solver_scenario(_dp_cd(1), 1), "honest"),
        "dp_cd_3_passes_p2": (lambda: _solver_scenario(_dp_cd(3), 2), "honest"),
        "dp_sgd_full_batch_step": (lambda: _solver_scenario(_dp_sgd, 1), "honest"),
        "dp_sgd_2_passes_q05": (lambda: _solver_scenario(_dp_sgd_sub, 2), "honest"),
        "dp_scd_3_full_batch_steps": (lambda: _solver_scenario(_dp_scd, 1, _scd_stat), "honest"),
        "output_perturbation": (_outpert, "honest"),
        "dp_gcd_one_step": (_dp_gcd, "honest"),
        "DPRegressor_dp_cd_one_step": (_estimator, "honest"),
        "select_exponential": (lambda: _select("exponential"), "honest"),
        "select_rnm": (lambda: _select("rnm"), "honest"),
        "select_as_published": (lambda: _select("as_published"), "refute"),
    }
    try: import dp_cd.solvers.dpgcd   # noqa: F401
    except ImportError: S.pop("dp_gcd_one_step")
    return S

def run(name, runs, seed=0, confidence=0.95):
    "Audit one scenario with `runs` public calls per dataset; returns a result row (dict)."
    make_fn, mode = scenarios()[name]
    make = make_fn()
    t0 = time.perf_counter(); a, b = np.empty(runs), np.empty(runs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        for r in range(runs):
            a[r], b[r], claimed, reported = make(seed + 2 * r * 7919)
    res = epsilon_lower_bound(a, b, delta=0.0 if name.startswith("select") else DELTA, confidence=confidence)
    ok = res.epsilon_lower <= reported * (1 + 1e-12) and (res.epsilon_lower <= claimed if mode == "honest" else res.epsilon_lower > claimed)
    return dict(scenario=name, mode=mode, runs=runs, claimed_eps=claimed, reported_eps=reported, delta=res.delta,
                eps_lower=res.epsilon_lower, tightness=res.epsilon_lower / claimed, ok=ok, seconds=time.perf_counter() - t0)

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=20_000, help="public calls per dataset and scenario")
    ap.add_argument("--only", nargs="*", help="scenario names (default: all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None, help="CSV file to write")
    args = ap.parse_args(argv)
    names = args.only or list(scenarios())
    unknown = set(names) - set(scenarios())
    if unknown: ap.error(f"unknown scenarios {sorted(unknown)}; choose from {list(scenarios())}")
    rows = []
    for name in names:
        row = run(name, args.runs, args.seed); rows.append(row)
        print(f"{name:28s} {row['mode']:7s} claimed eps={row['claimed_eps']:.4g} reported={row['reported_eps']:.4g} "
              f"lower={row['eps_lower']:.4f} (tightness {row['tightness']:.3f}) runs={row['runs']} "
              f"{'OK' if row['ok'] else 'FAIL'} [{row['seconds']:.0f}s]", flush=True)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with open(args.out, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0])); w.writeheader(); w.writerows(rows)
    if any(not r["ok"] and r["mode"] == "honest" for r in rows): return 1
    if any(not r["ok"] for r in rows): return 2
    return 0

if __name__ == "__main__": sys.exit(main())
