"""`dp-cd fit --dask`: the table read lazily (CSV, Parquet) on a Dask cluster on the loopback
interface gives the model, the report and the charge of the in-memory fit (same seed); bad input is
one line, with nothing written and nothing charged."""
import json
import numpy as np
import pytest
from dp_cd.cli import main

pytest.importorskip("distributed")
pytest.importorskip("pyarrow")
from distributed import LocalCluster


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(err):
    return err.startswith("dp-cd: error:") and err.count("\n") == 1


@pytest.fixture(scope="module")
def scheduler():
    "An in-process two-worker cluster on 127.0.0.1 (no dashboard): its scheduler's address."
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, host="127.0.0.1", protocol="tcp://",
                      dashboard_address=None) as cluster:
        yield cluster.scheduler_address


def messy_csv(path, n=600, seed=0):
    "A regression table with a text cell, an empty cell, a short row and a long row."
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3))
    y = X @ np.array([1.0, -0.5, 0.2]) + 0.05 * rng.normal(size=n)
    rows = [[f"{v:.17g}" for v in r] for r in np.column_stack([X, y])]
    rows[5][1], rows[9][0], rows[13], rows[17] = "n/a", "", rows[13][:2], rows[17] + ["7"]
    path.write_text("a,b,c,price\n" + "\n".join(",".join(r) for r in rows) + "\n")
    return path


def fit(path, out, extra, capsys, budget=None):
    argv = ["fit", str(path), "--random-state", "3", "--out", str(out), *extra]
    if budget: argv += ["--budget-file", str(budget), "--budget-epsilon", "5"]
    code, stdout, err = run(argv, capsys)
    assert code == 0, err
    return json.loads(out.read_text()), stdout


def test_dask_local_cluster_gives_the_in_memory_model(tmp_path, capsys):
    "--dask starts a local cluster of worker processes: same coefficients (1e-9), report, charge."
    data = messy_csv(tmp_path / "d.csv")
    mem, out_mem = fit(data, tmp_path / "mem.json", ["--target", "price"], capsys, tmp_path / "b1.json")
    far, out_far = fit(data, tmp_path / "far.json", ["--target", "price", "--dask"], capsys,
                       tmp_path / "b2.json")
    np.testing.assert_allclose(far["coef"], mem["coef"], rtol=0, atol=1e-9)
    assert abs(far["intercept"] - mem["intercept"]) <= 1e-9
    assert far["privacy"] == mem["privacy"] and far["feature_names"] == mem["feature_names"] == ["a", "b", "c"]
    assert "on 600 records x 3 features" in out_far and "on 600 records x 3 features" in out_mem
    spent = [json.loads((tmp_path / b).read_text()) for b in ("b1.json", "b2.json")]
    assert [s.get("spent", s) for s in spent][0] == [s.get("spent", s) for s in spent][1]


def test_dask_parquet_text_labels_on_a_scheduler(tmp_path, capsys, scheduler):
    "A Parquet table with text labels, on --scheduler: the classifier of the CSV fit in memory."
    import pandas as pd
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(500, 4))
    label = np.where(X @ np.array([1.0, -1.0, 0.5, 0.0]) > 0, "yes", "no").astype(object)
    label[7] = "maybe"   # not in --classes: the first (negative) class, on both paths
    frame = pd.DataFrame(X, columns=list("abcd")).assign(buy=label)
    frame.to_parquet(tmp_path / "d.parquet")
    frame.to_csv(tmp_path / "d.csv", index=False, float_format="%.17g")
    opts = ["--classes", "no,yes", "--bounds", "1"]
    mem, _ = fit(tmp_path / "d.csv", tmp_path / "mem.json", opts, capsys)
    far, out = fit(tmp_path / "d.parquet", tmp_path / "far.json", opts + ["--scheduler", scheduler],
                   capsys)
    np.testing.assert_allclose(far["coef"], mem["coef"], rtol=0, atol=1e-9)
    assert far["privacy"] == mem["privacy"] and far["class_labels"] == ["no", "yes"]
    assert "on 500 records x 4 features" in out


@pytest.mark.parametrize("extra, name, code, text", [
    (["--dask", "--solver", "adassp"], "d.csv", 2, "--dask runs the solvers"),
    (["--dask", "--tune", "--classes", "0,1"], "d.csv", 2, "--tune chooses the solver"),
    (["--scheduler", "tcp://127.0.0.1:9"], "d.csv", 1, "could not reach the Dask scheduler"),
    (["--scheduler", "SCHED"], "d.npy", 1, "a row-chunked table is read lazily from .csv or .parquet"),
    (["--scheduler", "SCHED", "--target", "nope"], "d.csv", 1, "unknown target column 'nope'"),
])
def test_dask_bad_input_one_line_nothing_written_nothing_charged(tmp_path, capsys, scheduler,
                                                                  extra, name, code, text,
                                                                  monkeypatch):
    from dp_cd.solvers import chunks   # Dask retries a closed port until the timeout: 1 s, not 10
    monkeypatch.setattr(chunks.connect, "__defaults__", (1.0,))
    data = messy_csv(tmp_path / "d.csv")
    np.save(tmp_path / "d.npy", np.random.default_rng(0).uniform(-1, 1, size=(200, 4)))
    budget = tmp_path / "b.json"
    fit(data, tmp_path / "first.json", ["--bounds", "1"], capsys, budget)   # a ledger to keep
    before = budget.read_text()
    argv = ["fit", str(tmp_path / name), "--random-state", "1", "--out", str(tmp_path / "m.json"),
            "--budget-file", str(budget), *[scheduler if a == "SCHED" else a for a in extra]]
    got, out, err = run(argv, capsys)
    assert got == code and one_line_error(err) and text in err, err
    assert not (tmp_path / "m.json").exists() and budget.read_text() == before


def test_dask_non_private_missing_value_is_one_line(tmp_path, capsys, scheduler):
    "At ε = ∞ no public rule maps a missing value: one line naming the problem, nothing written."
    data = tmp_path / "d.csv"
    data.write_text("a,b,label\n" + "".join(f"{i % 7},{'n/a' if i == 5 else i % 3},{i % 2}\n"
                                             for i in range(300)))   # a text cell in column b
    argv = ["fit", str(data), "--classes", "0,1", "--epsilon", "inf", "--scheduler", scheduler,
            "--out", str(tmp_path / "m.json")]
    got, out, err = run(argv, capsys)
    assert got == 1 and one_line_error(err), err
    assert "X contains NaN or infinite values (a missing value, or a table cell that is not" in err
    assert not (tmp_path / "m.json").exists()
