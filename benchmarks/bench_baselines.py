"""Timing of the baselines: one DP-SGD epoch (batch size 1) and one DP-SCD pass against one `X.T @ r`
and one DP-CD pass, on California- and Electricity-sized dense problems (n x 8).

    python benchmarks/bench_baselines.py            # synthetic data of the real sizes
Reference (published C++ DP-SGD, 50 passes): 0.6476 s California, 1.8588 s Electricity.
Target: a DP-SGD epoch within 3x of a DP-CD pass.
"""
import time, warnings
import numpy as np
from dp_cd.model.losses import SquaredLoss, LogisticLoss
from dp_cd.model.penalties import L1, L2
from dp_cd.solvers.dpsgd import dp_sgd
from dp_cd.solvers.dpscd import dp_scd

def best(f, repeat=5):
    f(); ts = []
    for _ in range(repeat):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    return min(ts)

def main():
    try: from dp_cd.solvers.dpcd import dp_cd
    except ImportError: dp_cd = None
    rng = np.random.default_rng(0)
    for name, n, loss, pen in [("california", 20640, SquaredLoss(), L1(0.1)), ("electricity", 45312, LogisticLoss(), L2(1e-3))]:
        X = rng.normal(size=(n, 8)); X /= np.linalg.norm(X, axis=1).max()
        y = X @ rng.normal(size=8) if isinstance(loss, SquaredLoss) else np.sign(rng.normal(size=n))
        r = rng.normal(size=n); Xf = np.asfortranarray(X)
        t_mv = best(lambda: Xf.T @ r, 20)
        t_sgd = best(lambda: dp_sgd(X, y, loss, pen, epsilon=1.0, delta=1 / n**2, n_passes=1, step=0.1, clip=1.0, random_state=0))
        t_sgd50 = best(lambda: dp_sgd(X, y, loss, pen, epsilon=1.0, delta=1 / n**2, n_passes=50, step=0.1, clip=1.0, random_state=0), 2)
        marg = (t_sgd50 - t_sgd) / 49   # per-epoch cost without the one-off calibration/validation
        line = f"{name:12s} n={n}: X.T@r {t_mv*1e3:7.3f} ms | DP-SGD 1 pass {t_sgd*1e3:7.2f} ms, marginal epoch {marg*1e3:7.2f} ms | DP-SGD 50 passes {t_sgd50:6.3f} s"
        if isinstance(pen, L2):
            t_scd = best(lambda: dp_scd(X, y, loss, pen, epsilon=1.0, delta=1 / n**2, n_passes=1, batch_size=100, clip=0.1, random_state=0), 2)
            line += f" | DP-SCD pass (L=100) {t_scd*1e3:8.2f} ms"
        if dp_cd is not None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t_cd = best(lambda: dp_cd(X, y, loss, pen, epsilon=1.0, delta=1 / n**2, n_passes=1, random_state=0))
            line += f" | DP-CD pass {t_cd*1e3:8.2f} ms (marginal DP-SGD epoch / DP-CD pass = {marg / t_cd:.2f})"
        print(line, flush=True)

if __name__ == "__main__": main()
