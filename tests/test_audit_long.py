"""Replay-free audits through the public entry points (benchmarks/audit_long.py), at sizes too long for CI.

    python -m pytest tests/test_audit_long.py -m slow -q      # about 15-30 minutes on one loaded core

The non-slow smoke test only checks that the reproduction command runs end to end."""
import importlib.util, subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("audit_long", ROOT / "benchmarks" / "audit_long.py")
audit_long = importlib.util.module_from_spec(spec); spec.loader.exec_module(audit_long)

HONEST = [k for k, (_, mode) in audit_long.scenarios().items() if mode == "honest"]

def test_command_runs(tmp_path):
    out = tmp_path / "audit.csv"
    r = subprocess.run([sys.executable, "benchmarks/audit_long.py", "--runs", "40", "--only", "dp_cd_one_step", "select_rnm",
                        "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert out.read_text().count("\n") == 3 and "dp_cd_one_step" in r.stdout

@pytest.mark.slow
@pytest.mark.parametrize("name", HONEST)
def test_public_audit_never_exceeds_the_claim(name):
    row = audit_long.run(name, runs=4000 if name.startswith(("dp_scd", "dp_sgd_2")) else 10_000, seed=1)
    assert row["eps_lower"] <= row["claimed_eps"] and row["eps_lower"] <= row["reported_eps"], row

@pytest.mark.slow
def test_public_select_as_published_is_refuted():
    row = audit_long.run("select_as_published", runs=30_000, seed=2)
    assert row["claimed_eps"] < row["eps_lower"] <= row["reported_eps"], row
