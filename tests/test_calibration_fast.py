"""DP-SGD's default accounting at batch 1 (issue 29, item B): the tightest accountant, reported as such.

At a tiny sampling rate over tens of thousands of steps the PLD's discretisation costs more than RDP's
conversion. `tightest_accountant` is the best of the two, so the noise DP-SGD calibrates for its
default `accountant="pld"` is RDP's calibration there (it was the PLD's, 5 % more noise), and the
guarantee the run reports must still be the target: the plan reports the member that certifies it.
"""
import math
import numpy as np
from dp_cd import dp_sgd, LogisticLoss, L2
from dp_cd.privacy.accountants import RDPAccountant
from dp_cd.privacy.calibration import calibrate
from dp_cd.privacy.events import PoissonSubsampledGaussianEvent
from dp_cd.privacy.pld import PLDAccountant


def test_dp_sgd_batch_one_reports_its_target_with_rdp_noise():
    n, passes, delta, rel = 3704, 19.52, 7.3e-8, "add_remove"
    T, q = int(round(passes * n)), 1 / n
    ev = PoissonSubsampledGaussianEvent
    eps = PLDAccountant(relation=rel).compose(ev(3.93, q), T).get_epsilon(delta)   # ≈ 0.0911
    z_rdp = calibrate(lambda z: RDPAccountant(relation=rel).compose(ev(z, q), T), eps, delta,
                      rtol=1e-9)
    # independent check of the premise: at RDP's noise the PLD does not certify the target
    assert PLDAccountant(relation=rel).compose(ev(z_rdp, q), T).get_epsilon(delta) > eps
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (n, 2)) / math.sqrt(2)
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    r = dp_sgd(X, y, LogisticLoss(), L2(0.1), epsilon=eps, delta=delta, n_passes=passes, step=0.5,
               relation=rel, random_state=0)
    z = r.params["noise_multiplier"]
    assert r.n_iter == T and r.params["sample_rate"] == q
    assert z <= z_rdp * (1 + 1e-6), (z, z_rdp)     # was the PLD's calibration, ≈ 5 % larger
    assert r.privacy.epsilon <= eps                # the reported guarantee meets the target ...
    rdp_eps = RDPAccountant(relation=rel).compose(ev(z, q), T).get_epsilon(delta)
    assert r.privacy.epsilon == rdp_eps and r.privacy.accountant.startswith("RDP")   # ... by RDP
