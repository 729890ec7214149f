"Smoke run of the benchmark command (`benchmarks/run.py`): it runs end to end on tiny data and prints ratios. Not a timed test."
import csv, math, re, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

def test_benchmark_command_prints_ratios(tmp_path):
    out = tmp_path / "results"
    r = subprocess.run([sys.executable, "benchmarks/run.py", "--quick", "--only", "speed", "--n-max", "2000",
                        "--repeat", "1", "--solvers", "dp_cd", "--min-time", "0.005", "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    # every timed line states its ratio to the X.T @ r floor; the full calls also to the thesis' C++ timings
    ratios = re.findall(r"=\s+([0-9.]+) x floor", r.stdout)
    assert len(ratios) >= 6, r.stdout
    assert any("DP-CD pass" in line and "x floor" in line for line in r.stdout.splitlines())
    assert re.search(r"x published C\+\+", r.stdout), r.stdout
    rows = list(csv.DictReader(open(out / "speed.csv")))
    assert {row["dataset"] for row in rows} == {"california", "electricity"}
    floor = [row for row in rows if row["what"] == "floor X.T @ r"]
    assert len(floor) == 2 and all(float(row["vs_floor"]) == 1.0 for row in floor)
    for row in rows:
        s, v = float(row["seconds"]), float(row["vs_floor"])
        # measured times are positive; "fixed set-up" rows are differences of noisy times, clamped at 0
        assert (s >= 0 if "set-up" in row["what"] else s > 0) and math.isfinite(v) and v >= 0, row
        # the ratio column is the quotient of the two measured times (not a typed-in number)
        f = next(x for x in floor if x["dataset"] == row["dataset"])
        assert math.isclose(v, s / float(f["seconds"]), rel_tol=1e-9)
