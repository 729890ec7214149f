"""The `dp-cd` command line: each command, the installed console script, and every bad-input case of
the issue (one clear line on stderr, non-zero exit, nothing written)."""
import json, os, subprocess, sys, warnings
from pathlib import Path
import numpy as np
import pytest
from dp_cd.cli import main, load_model

BIN = Path(sys.executable).parent

def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err

def one_line_error(err):
    return err.startswith("dp-cd: error:") and err.count("\n") == 1

@pytest.fixture
def csv_file(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(1000, 3)); y = X @ np.array([1.0, -0.5, 0.2]) + 0.05 * rng.normal(size=1000)
    p = tmp_path / "train.csv"
    np.savetxt(p, np.column_stack([X, y]), delimiter=",", header="a,b,c,price", comments="")
    return p

def write_csv(path, header, rows):
    path.write_text(",".join(header) + "\n" + "\n".join(",".join(map(str, r)) for r in rows) + "\n")
    return path

def test_console_script_help_and_version():
    r = subprocess.run([BIN / "dp-cd", "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "examples:" in r.stdout and "demo" in r.stdout
    for cmd in ("demo", "fit", "predict", "datasets", "reproduce"):
        r = subprocess.run([BIN / "dp-cd", cmd, "--help"], capture_output=True, text=True)
        assert r.returncode == 0 and "example" in r.stdout, cmd
    r = subprocess.run([BIN / "dp-cd", "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and "dp_cd" in r.stdout

def test_fit_predict_roundtrip(csv_file, tmp_path, capsys):
    model = tmp_path / "m.json"
    code, out, err = run(["fit", str(csv_file), "--target", "price", "--feature-bound", "1", "--seed", "0", "--out", str(model)], capsys)
    assert code == 0, err
    assert "replace-one" in out and "R^2" in out and "PrivacyLeakWarning" not in err
    est = load_model(model)
    assert est.privacy_["epsilon"] <= 1 + 1e-9 and est.privacy_["relation"] == "replace_one"
    code, out, err = run(["predict", str(model), str(csv_file)], capsys)
    assert code == 0 and len(out.split()) == 1000
    pred = np.array(out.split(), dtype=float)
    truth = np.loadtxt(csv_file, delimiter=",", skiprows=1)[:, -1]
    assert np.corrcoef(pred, truth)[0, 1] > 0.5      # the private model learned something

def test_fit_json_and_leak_warning(csv_file, capsys):
    code, out, err = run(["fit", str(csv_file), "--json", "--seed", "1"], capsys)
    assert code == 0
    d = json.loads(out)
    assert d["format"] == "dp_cd-model" and d["privacy"][0]["relation"] == "replace_one"
    assert "PrivacyLeakWarning" in err and d["privacy_leak_warnings"]   # smoothness computed from the data

def test_classification_and_named_dataset(tmp_path, capsys):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 2)); y = (X[:, 0] > 0).astype(int)
    p = write_csv(tmp_path / "c.csv", ["u", "v", "label"], np.column_stack([X, y]).tolist())
    code, out, err = run(["fit", str(p), "--target", "label", "--epsilon", "5", "--seed", "0"], capsys)
    assert code == 0 and "accuracy" in out
    code, out, err = run(["fit", "log1", "--epsilon", "1", "--passes", "2", "--seed", "0", "--json"], capsys)
    assert code == 0 and json.loads(out)["estimator"] == "DPClassifier"

def test_fit_per_sample_clipping(csv_file, capsys):
    "--clipping sample: per-sample l2 clipping, one Gaussian release per pass (+ p Laplace releases of the private constants)."
    code, out, err = run(["fit", str(csv_file), "--target", "price", "--feature-bound", "1", "--clipping", "sample", "--clip", "2",
                          "--passes", "4", "--seed", "0", "--json"], capsys)
    assert code == 0, err
    rep = json.loads(out)["privacy"][0]
    assert rep["epsilon"] <= 1 + 1e-9 and rep["releases"] == 4 + 4   # 4 passes; M_j of 3 features + intercept estimated privately
    assert any("passes" in n and "l2" in n for n in rep["notes"])

def test_datasets_command(capsys):
    code, out, err = run(["datasets"], capsys)
    assert code == 0 and "log1" in out and "california" in out

BAD = [  # (argv after the data file, file content builder or None, expected code, expected text)
    (["--target", "nope"], None, 1, "unknown target column"),
    (["--epsilon", "0"], None, 1, "epsilon must be > 0"),
    (["--epsilon", "-1"], None, 1, "epsilon must be > 0"),
    (["--delta", "1.5"], None, 1, "delta must be < 1"),
    (["--delta", "0"], None, 1, "delta must be > 0"),
    (["--solver", "magic"], None, 2, "invalid choice"),
    (["--loss", "hinge"], None, 2, "invalid choice"),
    (["--penalty", "l3"], None, 2, "invalid choice"),
    (["--smoothness", "private"], None, 2, "needs --smoothness-bound"),
    (["--clipping", "row"], None, 2, "invalid choice"),
    (["--clipping", "sample", "--solver", "dp-sgd"], None, 2, "is a dp-cd option"),
]

@pytest.mark.parametrize("extra,_,code,text", BAD)
def test_bad_options(csv_file, tmp_path, capsys, extra, _, code, text):
    out_file = tmp_path / "model.json"
    c, out, err = run(["fit", str(csv_file), *extra, "--out", str(out_file)], capsys)
    assert c == code and text in err and one_line_error(err), err
    assert not out_file.exists() and not list(tmp_path.glob(".model.json*"))

def test_bad_data_files(tmp_path, capsys):
    out_file = tmp_path / "model.json"
    cases = [
        (tmp_path / "missing.csv", "no such file"),
        (write_csv(tmp_path / "text.csv", ["a", "city", "y"], [[1, "Lille", 2], [2, "Paris", 3]]), "column 'city' is not numeric"),
        (write_csv(tmp_path / "nan.csv", ["a", "y"], [[1, 2], ["nan", 3], [2, 1]]), "NaN"),
        (write_csv(tmp_path / "inf.csv", ["a", "y"], [[1, 2], ["inf", 3], [2, 1]]), "infinity"),
        (write_csv(tmp_path / "const.csv", ["a", "y"], [[1, 2], [2, 2], [3, 2]]), "constant"),
        (write_csv(tmp_path / "ragged.csv", ["a", "b", "y"], [[1, 2, 3], [1, 2]]), "has 2 fields"),
        (tmp_path / "unknown.xyz", "unknown file type"),
    ]
    (tmp_path / "unknown.xyz").write_text("1,2\n")
    (tmp_path / "empty.csv").write_text("")
    cases.append((tmp_path / "empty.csv", "empty"))
    for path, text in cases:
        c, out, err = run(["fit", str(path), "--out", str(out_file)], capsys)
        assert c == 1 and text.lower() in err.lower() and one_line_error(err), (path, err)
    single = write_csv(tmp_path / "single.csv", ["a", "y"], [[1, 1], [2, 1], [3, 1]])
    c, out, err = run(["fit", str(single), "--task", "classification", "--out", str(out_file)], capsys)
    assert c == 1 and "single class" in err and one_line_error(err)
    notlabels = write_csv(tmp_path / "float.csv", ["a", "y"], [[1, 0.5], [2, 1.7], [3, 2.2]])
    c, out, err = run(["fit", str(notlabels), "--task", "classification", "--out", str(out_file)], capsys)
    assert c == 1 and "not class labels" in err and one_line_error(err)
    assert not out_file.exists()

def test_budget_file(csv_file, tmp_path, capsys):
    ledger, model = tmp_path / "budget.json", tmp_path / "m.json"
    args = ["fit", str(csv_file), "--feature-bound", "1", "--budget-file", str(ledger), "--budget-epsilon", "1.5"]
    c, out, err = run(args + ["--epsilon", "1"], capsys)
    assert c == 0 and json.loads(ledger.read_text())["spent"][0][0] == 1.0
    before = ledger.read_text()
    c, out, err = run(args + ["--epsilon", "1", "--out", str(model)], capsys)
    assert c == 1 and "privacy budget exceeded" in err and one_line_error(err)
    assert ledger.read_text() == before and not model.exists()
    # the refusal happens before the data is parsed: a broken file gives the budget error, not a parse error
    broken = write_csv(tmp_path / "broken.csv", ["a", "city", "y"], [[1, "x", 2]] * 3)
    c, out, err = run(["fit", str(broken), "--budget-file", str(ledger), "--epsilon", "1"], capsys)
    assert c == 1 and "privacy budget exceeded" in err

def test_unknown_reproduction_and_usage(capsys):
    c, out, err = run(["reproduce", "table-99"], capsys)
    assert c == 2 and "unknown reproduction" in err and one_line_error(err)
    c, out, err = run(["frobnicate"], capsys)
    assert c == 2 and one_line_error(err)
    c, out, err = run([], capsys)
    assert c == 2

def test_predict_errors(csv_file, tmp_path, capsys):
    c, out, err = run(["predict", str(tmp_path / "nomodel.json"), str(csv_file)], capsys)
    assert c == 1 and "cannot read the model" in err and one_line_error(err)
    (tmp_path / "x.json").write_text('{"a": 1}')
    c, out, err = run(["predict", str(tmp_path / "x.json"), str(csv_file)], capsys)
    assert c == 1 and "not a dp_cd model" in err

def test_debug_shows_traceback(tmp_path):
    r = subprocess.run([BIN / "dp-cd", "--debug", "fit", str(tmp_path / "missing.csv")], capture_output=True, text=True)
    assert r.returncode != 0 and "Traceback" in r.stderr

def test_demo_main_job(tmp_path):
    "The README's main job, as installed: prints the table and privacy reports, writes the PNG."
    png = tmp_path / "demo.png"
    r = subprocess.run([BIN / "dp-cd", "demo", "--runs", "1", "--plot", str(png)], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    for solver in ("dp-cd", "dp-gcd", "dp-sgd"): assert f"\n{solver} " in r.stdout
    assert "replace-one" in r.stdout and "NOT differentially private" not in r.stdout
    assert png.exists() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    r = subprocess.run([BIN / "dp-cd", "demo", "--runs", "1", "--plot", "", "--json", "--no-tune"], capture_output=True, text=True, cwd=tmp_path)
    d = json.loads(r.stdout)
    assert [row["solver"] for row in d["rows"]] == ["dp-cd", "dp-gcd", "dp-sgd"] and all(row["privacy"]["is_private"] for row in d["rows"])
