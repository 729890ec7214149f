"""Every registered solver refuses what it cannot run, with one error naming both (issue 32, item 2).

A loss, a penalty and an accountant the library does not know (a `Loss` and a `Penalty` subclass
with codes of their own, an accountant name outside the registry) are refused by every registered
solver before anything is read, by a `ValueError` that names the solver and the thing refused. No
solver declares an empty capability tuple, which `Solver.check_supports` would read as "every loss of
the library" or "every penalty".
"""
import numpy as np
import pytest

import dp_cd   # registers every solver
from dp_cd.model.losses import Loss, SquaredLoss
from dp_cd.model.penalties import Penalty, L2
from dp_cd.privacy.registry import ACCOUNTANTS
from dp_cd.solvers.contract import SOLVERS


class UnknownLoss(SquaredLoss):
    "A user's loss with a code no kernel computes."
    code = 97
    def __repr__(self): return "UnknownLoss()"


class HalfLoss(Loss):
    "A user's loss written from the base class, without kernels: phi(z, y) = (z - y)^2 / 2."
    code, name = 96, "half"
    def __repr__(self): return "HalfLoss()"


class UnknownPenalty(L2):
    "A user's penalty with a code no kernel computes."
    code = 98
    def __repr__(self): return "UnknownPenalty()"


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


@pytest.mark.parametrize("name", NAMES)
def test_an_unknown_penalty_is_refused_naming_both(name):
    X, y = _data(name)
    loss = SOLVERS[name].losses[0]()
    with pytest.raises(ValueError) as e:
        SOLVERS[name].fit(X, y, loss, UnknownPenalty(0.1), epsilon=1.0, delta=1e-5)
    assert name in str(e.value) and "UnknownPenalty" in str(e.value), str(e.value)


@pytest.mark.parametrize("name", [n for n in NAMES if "accountant" in SOLVERS[n].option_names])
def test_an_unknown_accountant_is_refused_naming_both(name):
    X, y = _data(name)
    s = SOLVERS[name]
    assert "prv" not in ACCOUNTANTS
    with pytest.raises(ValueError) as e:
        s.fit(X, y, s.losses[0](), s.penalties[0](*(() if s.penalties[0].__name__ in
              ("NoPenalty",) else (0.1,))), epsilon=1.0, delta=1e-5, accountant="prv")
    assert "accountant" in str(e.value) and "'prv'" in str(e.value) and name in str(e.value), str(e.value)
