"""Every registered solver refuses what it cannot run, with one error naming both (issue 32, item 2).

A loss that carries no kernels (a subclass of a library loss that declares none of its own, or a
`Loss` written from the base class), a penalty that carries no kernels (a subclass of a library
penalty that declares none of its own, or a `Penalty` written from the base class) and an accountant
name outside the registry are refused by every registered solver before anything is read, by a
`ValueError` that names the solver and the thing refused. No solver takes no loss. A new loss
declared as one class with its kernels (the smoothed hinge of dp_cd.model.losses) is taken by DP-CD,
DP-GCD, DP-SGD, DP-BCD, vertical DP-CD, the growth-adaptive method, primalDP-SCD and output
perturbation (which also asks the class to declare `bounded_deriv`) with no edit to them, and its
constants come from what the class declares. A solver that needs a fact of a penalty (AdaSSP and the
growth-adaptive method: a quadratic penalty whose weight `enet_weights` gives) takes a user's class that
declares it and refuses one that does not, naming both. A loss of the growth algorithms is one class
with its two kernels too.
"""
import numpy as np
import pytest
from numba import njit

import dp_cd   # registers every solver
import dp_cd.solvers.vertical   # registers dp-vcd (not imported by `dp_cd`)
from dp_cd.model.losses import Loss, SquaredLoss, SmoothHingeLoss
from dp_cd.model.penalties import Penalty, L2, PENALTY_KERNELS
from dp_cd.privacy.registry import ACCOUNTANTS
from dp_cd.solvers.contract import SOLVERS


class UnknownLoss(SquaredLoss):
    "A user's subclass of a library loss that declares no kernels of its own (e.g. a new phi in Python)."
    code = 97
    def value(self, X, y, w): return 0.5 * super().value(X, y, w)
    def __repr__(self): return "UnknownLoss()"


class HalfLoss(Loss):
    "A user's loss written from the base class, without kernels: phi(z, y) = (z - y)^2 / 2."
    code, name = 96, "half"
    def __repr__(self): return "HalfLoss()"


class UnknownPenalty(L2):
    "A user's subclass of a library penalty that declares no kernels of its own."
    def value(self, w): return 0.5 * super().value(w)
    def __repr__(self): return "UnknownPenalty()"


class HalfPenalty(Penalty):
    "A user's penalty written from the base class, without kernels: psi(w) = ||w||_2^2 / 4."
    def __init__(self): self.params = np.array([0.5])
    def __repr__(self): return "HalfPenalty()"


class NonNegativeL1(Penalty):
    "A user's penalty in one class with its kernels: psi_j(v) = lam v for v >= 0, +inf for v < 0."
    def __init__(self, lam): self.params = np.array([float(lam)])
    def __repr__(self): return f"NonNegativeL1(lam={self.params[0]})"

    @staticmethod
    @njit(cache=True)
    def value_1d(params, j, x): return params[0] * x if x >= 0 else np.inf

    @staticmethod
    @njit(cache=True)
    def prox_1d(params, j, x, step): return max(x - step * params[0], 0.0)

    @staticmethod
    @njit(cache=True)
    def subdiff_1d(params, j, x):
        if x > 0: return params[0], params[0]
        if x < 0: return np.inf, -np.inf
        return -np.inf, params[0]

    @staticmethod
    @njit(cache=True)
    def conj_1d(params, j, v): return 0.0 if v <= params[0] else np.inf

    @staticmethod
    @njit(cache=True)
    def conj_bound_1d(params, j): return params[0]


def _data(solver):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3)) / 4
    y = np.sign(rng.normal(size=40)) if "dp-scd" in solver else rng.normal(size=40) / 4
    return X, y


NAMES = sorted(SOLVERS)


def test_the_registry_holds_the_solvers():
    assert {"dp-cd", "dp-gcd", "dp-sgd", "dp-scd"} <= set(NAMES), NAMES


@pytest.mark.parametrize("name", NAMES)
def test_no_empty_capability_tuple(name):
    s = SOLVERS[name]
    assert s.losses, f"{name}: empty `losses` would mean every library loss"
    assert s.penalties, f"{name}: empty `penalties` would mean every penalty"
    if "accountant" in s.option_names: assert s.accountants, name


@pytest.mark.parametrize("loss", [UnknownLoss(), HalfLoss()], ids=repr)
@pytest.mark.parametrize("name", NAMES)
def test_an_unknown_loss_is_refused_naming_both(name, loss):
    X, y = _data(name)
    with pytest.raises(ValueError) as e:
        SOLVERS[name].fit(X, y, loss, L2(0.1), epsilon=1.0, delta=1e-5)
    assert name in str(e.value) and type(loss).__name__ in str(e.value), str(e.value)


@pytest.mark.parametrize("penalty", [UnknownPenalty(0.1), HalfPenalty()], ids=repr)
@pytest.mark.parametrize("name", NAMES)
def test_an_unknown_penalty_is_refused_naming_both(name, penalty):
    X, y = _data(name)
    loss = SOLVERS[name].losses[0]()
    with pytest.raises(ValueError) as e:
        SOLVERS[name].fit(X, y, loss, penalty, epsilon=1.0, delta=1e-5)
    assert name in str(e.value) and type(penalty).__name__ in str(e.value), str(e.value)
    with pytest.raises(NotImplementedError, match="carries no kernels"): penalty.kernel_args()


@pytest.mark.parametrize("name", NAMES)
def test_every_solver_takes_only_penalties_that_carry_their_kernels(name):
    s = SOLVERS[name]
    assert all(c.token is not None and set(PENALTY_KERNELS) <= c.kernels for c in s.penalties), name
    assert UnknownPenalty not in s.penalties and HalfPenalty not in s.penalties


@pytest.mark.parametrize("name", [n for n in NAMES if "accountant" in SOLVERS[n].option_names])
def test_an_unknown_accountant_is_refused_naming_both(name):
    X, y = _data(name)
    s = SOLVERS[name]
    assert "prv" not in ACCOUNTANTS
    with pytest.raises(ValueError) as e:
        s.fit(X, y, s.losses[0](), s.penalties[0](*(() if s.penalties[0].__name__ in
              ("NoPenalty",) else (0.1,))), epsilon=1.0, delta=1e-5, accountant="prv")
    assert "accountant" in str(e.value) and "'prv'" in str(e.value) and name in str(e.value), str(e.value)


@pytest.mark.parametrize("name", NAMES)
def test_every_solver_takes_the_losses_that_carry_its_kernels(name):
    s = SOLVERS[name]
    assert s.losses and all(set(s.loss_kernels) <= c.kernels for c in s.losses), name
    assert UnknownLoss not in s.losses and HalfLoss not in s.losses


@pytest.mark.parametrize("name", ["dp-cd", "dp-gcd", "dp-sgd", "dp-bcd", "dp-vcd",
                                  "growth-adaptive", "primal-dp-scd", "output-perturbation"])
def test_a_new_loss_is_one_class(name):
    "The smoothed hinge, declared in one class, runs through the solver; its constants are its own."
    s = SOLVERS[name]
    assert SmoothHingeLoss in s.losses
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 3)) / 3
    y = np.where(X @ np.array([2.0, -1.0, 0.5]) + rng.normal(size=200) / 10 > 0, 1.0, -1.0)
    loss = SmoothHingeLoss(0.5)
    assert loss.curvature == 2.0 and loss.sup_deriv == 1.0
    kw = (dict(x_norm=float(np.linalg.norm(X, axis=1).max()))
          if name in ("growth-adaptive", "output-perturbation") else {})
    r = s.fit(X, y, loss, L2(0.01), epsilon=np.inf, delta=0.0, random_state=0, **kw)
    assert np.all(np.isfinite(r.coef)) and loss.value(X, y, r.coef) < loss.value(X, y, np.zeros(3))
    r = s.fit(X, y, loss, L2(0.01), epsilon=1.0, delta=1e-5, random_state=0, **kw)
    assert np.all(np.isfinite(r.coef)) and r.privacy.epsilon <= 1.0 + 1e-9


@pytest.mark.parametrize("name", ["dp-cd", "dp-gcd", "dp-sgd", "dp-bcd"])
def test_a_new_penalty_is_one_class(name):
    "A penalty declared in one class with its kernels runs through the solver, with no edit to it."
    s = SOLVERS[name]
    assert NonNegativeL1 in s.penalties
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 3)) / 3
    y = X @ np.array([0.5, -0.3, 0.2]) + rng.normal(size=300) / 20
    loss, pen = SquaredLoss(), NonNegativeL1(0.01)
    for eps, delta in ((np.inf, 0.0), (1.0, 1e-5)):
        r = s.fit(X, y, loss, pen, epsilon=eps, delta=delta, random_state=0)
        assert np.all(r.coef >= 0), r.coef   # every iterate is a prox of the penalty
        if eps == np.inf:   # the non-private run descends, and holds -0.3 at the bound 0
            assert r.coef[1] == 0.0, r.coef
            assert loss.value(X, y, r.coef) + pen.value(r.coef) < loss.value(X, y, np.zeros(3))


def test_a_solver_that_narrows_its_penalties_refuses_a_new_one():
    X, y = _data("dp-scd")
    with pytest.raises(ValueError, match=r"'dp-scd' does not support NonNegativeL1\(lam=0.1\)"):
        SOLVERS["dp-scd"].fit(X, y, SquaredLoss(), NonNegativeL1(0.1), epsilon=1.0, delta=1e-5)


class UserRidge(Penalty):
    "A user's ridge in one class: psi_j(v) = lam v^2 / 2, declared quadratic, with its weights."
    quadratic = True
    def __init__(self, lam): self.params = np.array([float(lam)])
    def __repr__(self): return f"UserRidge(lam={self.params[0]})"

    @staticmethod
    @njit(cache=True)
    def value_1d(params, j, x): return 0.5 * params[0] * x * x

    @staticmethod
    @njit(cache=True)
    def prox_1d(params, j, x, step): return x / (1.0 + step * params[0])

    @staticmethod
    @njit(cache=True)
    def subdiff_1d(params, j, x): return params[0] * x, params[0] * x

    @staticmethod
    @njit(cache=True)
    def conj_1d(params, j, v): return 0.5 * v * v / params[0]

    @staticmethod
    @njit(cache=True)
    def conj_bound_1d(params, j): return np.inf

    @staticmethod
    @njit(cache=True)
    def enet_weights(params): return 0.0, params[0]


class UndeclaredRidge(UserRidge):
    "The same kernels, without the declaration: it does not say it is quadratic."
    quadratic = False
    @staticmethod
    @njit(cache=True)
    def enet_weights(params): return 0.0, params[0]


@pytest.mark.parametrize("name", ["adassp", "growth-adaptive"])
def test_a_solver_takes_the_penalties_that_declare_what_it_needs(name):
    "A quadratic penalty declared by a user runs and gives L2's model; one that is not is refused."
    s = SOLVERS[name]
    assert UserRidge in s.penalties and UndeclaredRidge not in s.penalties
    assert NonNegativeL1 not in s.penalties
    rng = np.random.default_rng(2)
    X = rng.normal(size=(400, 3))
    X /= np.linalg.norm(X, axis=1).max()
    y = X @ np.array([0.5, -0.3, 0.2]) + rng.normal(size=400) / 20
    kw = dict(x_norm=1.0, y_bound=2.0)
    a = s.fit(X, y, SquaredLoss(), UserRidge(0.1), epsilon=1.0, delta=1e-5, random_state=0, **kw)
    b = s.fit(X, y, SquaredLoss(), L2(0.1), epsilon=1.0, delta=1e-5, random_state=0, **kw)
    assert np.array_equal(a.coef, b.coef)
    for pen in (UndeclaredRidge(0.1), NonNegativeL1(0.1)):
        with pytest.raises(ValueError) as e:
            s.fit(X, y, SquaredLoss(), pen, epsilon=1.0, delta=1e-5, **kw)
        assert f"solver {name!r} does not support {pen!r}" in str(e.value), str(e.value)
        assert "quadratic = True" in str(e.value), str(e.value)


def test_least_squares_statistics_need_the_squared_residual():
    "AdaSSP needs phi'(z, y) = 2 (z - y) (`residual_scale`): the other losses are refused by name."
    s = SOLVERS["adassp"]
    assert s.losses == (SquaredLoss,)
    with pytest.raises(ValueError, match=r"'adassp' does not support SmoothHingeLoss\(gamma=0.5\).*"
                                         r"residual_scale = 2.0"):
        s.fit(*_data("adassp"), SmoothHingeLoss(0.5), L2(0.1), epsilon=1.0, delta=1e-5,
              x_norm=1.0, y_bound=1.0)


def test_growth_losses_carry_their_kernels():
    "Each loss of Algorithms 1-2 is one class with its token; a class declaring none is refused."
    from dp_cd.solvers.growth import GrowthLoss, PowerLoss, LocationLoss, RegressionLoss
    toks = {c.token.dtype.names[0] for c in (PowerLoss, LocationLoss, RegressionLoss)}
    assert len(toks) == 3 and GrowthLoss.token is None
    class Shifted(LocationLoss): "declares no kernels of its own"
    with pytest.raises(NotImplementedError, match="carries no kernels"):
        Shifted(2).value(np.zeros(2), np.zeros((3, 2)))
    with pytest.raises(TypeError, match="declares kernels but not mean_grad"):
        class Half(GrowthLoss): mean_value = PowerLoss.mean_value


def test_a_new_growth_loss_is_one_class():
    "A user's loss for Algorithms 1-2, one class with its two kernels, runs with no edit to them."
    from dp_cd.solvers.growth import GrowthLoss, LocationLoss, epoch_growth

    class MeanLoss(GrowthLoss):
        "F(x; s) = ||x - s||^2 / 2: the location loss of exponent 2, written by a user."
        shown = ("kappa",)
        def __init__(self): super().__init__(2.0)

        @property
        def reach_offset(self): return 1.0   # ||x - s|| <= ||x|| + 1

        @staticmethod
        @njit(cache=True)
        def mean_value(kappa, mu, b, x, S):
            n, d = S.shape[0], x.shape[0]
            tot = 0.0
            for i in range(n):
                r2 = 0.0
                for j in range(d): r2 += (x[j] - S[i, j]) ** 2
                tot += r2 / 2.0 / n
            return tot

        @staticmethod
        @njit(cache=True)
        def mean_grad(kappa, mu, b, x, S, out):
            n, d = S.shape[0], x.shape[0]
            for j in range(d): out[j] = 0.0
            for i in range(n):
                for j in range(d): out[j] += (x[j] - S[i, j]) / n

    rng = np.random.default_rng(3)
    S = rng.normal(size=(3000, 2)) / 3
    S /= np.maximum(1.0, np.linalg.norm(S, axis=1))[:, None]
    mine, ref, x = MeanLoss(), LocationLoss(2), np.array([0.3, -0.2])
    assert mine.token is not None and mine.token.dtype != ref.token.dtype
    assert np.isclose(mine.value(x, S), ref.value(x, S), rtol=1e-12)
    assert np.allclose(mine.grad(x, S), ref.grad(x, S), rtol=1e-12, atol=1e-15)
    assert mine.lipschitz(1.0) == ref.lipschitz(1.0) and mine.smoothness(1.0) == ref.smoothness(1.0)
    a, b = (epoch_growth(S, loss, np.zeros(2), 1.0, 1.5, epsilon=1.0, delta=1e-5, random_state=0)
            for loss in (mine, ref))
    assert np.allclose(a.x, b.x, atol=1e-9) and a.privacy.epsilon == b.privacy.epsilon
