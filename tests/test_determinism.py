"""The test suite cannot fail by chance: CI runs hypothesis derandomised and without its example database."""
import os
import subprocess
import sys

from run_tests import hypothesis_env

PROBE = "import hypothesis as h; s = h.settings.default; print(s.derandomize, s.database is None)"


def _profile(env):
    out = subprocess.run([sys.executable, '-c', PROBE], env=env, capture_output=True, text=True)
    return out.stdout.split()


def test_default_run_is_derandomised_without_database():
    assert _profile(hypothesis_env(explore=False)) == ['True', 'True']


def test_explore_run_draws_random_examples():
    env = hypothesis_env(explore=True)
    assert 'CI' not in env
    assert _profile(env) == ['False', 'False']
