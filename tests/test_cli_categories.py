"""`dp-cd fit --categories COLUMN=A,B,...`: a text column declared categorical with its PUBLIC
categories is one-hot encoded by the estimators (as a pandas column of `pd.CategoricalDtype`), in
memory and with `--dask` (CSV and Parquet: the same model for the same seed); a value outside the
declared categories is missing (no one-hot column set), never a refusal; `predict` reads the column
back from a CSV file by the model's feature names `column=category`."""
import json
import numpy as np
import pytest
from dp_cd.cli import main
from dp_cd.model_files import load_model

COLOURS = ["red", "green", "blue"]


def table(n=700, seed=0):
    "A regression table with a text column of 3 declared colours and one undeclared ('mauve')."
    import pandas as pd
    rng = np.random.default_rng(seed)
    colour = rng.choice(COLOURS + ["mauve"], n)
    x = rng.uniform(-1, 1, size=(n, 2))
    effect = np.select([colour == "red", colour == "green"], [1.0, -1.0], 0.0)
    price = x @ np.array([1.0, -0.5]) + effect + 0.05 * rng.normal(size=n)
    return pd.DataFrame({"a": x[:, 0], "colour": colour, "b": x[:, 1], "price": price})


def fit(path, out, extra, capsys):
    code = main(["fit", str(path), "--categories", "colour=" + ",".join(COLOURS), "--bounds", "1",
                 "--target-bound", "4", "--random-state", "3", "--out", str(out), *extra])
    stdout, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out.read_text()), stdout


@pytest.mark.parametrize("epsilon", ["1", "inf"])
def test_declared_categories_are_one_hot_columns(tmp_path, capsys, epsilon):
    data = tmp_path / "d.csv"
    table().to_csv(data, index=False, float_format="%.17g")
    model, out = fit(data, tmp_path / "m.json", ["--epsilon", epsilon], capsys)
    assert model["feature_names"] == ["a", "colour=red", "colour=green", "colour=blue", "b"]
    assert "on 700 records x 5 features" in out
    coef = dict(zip(model["feature_names"], model["coef"]))
    if epsilon == "inf":   # the non-private model finds the colours' effects (0 for blue, mauve)
        assert coef["colour=red"] - coef["colour=blue"] == pytest.approx(1.0, abs=0.1)
        assert coef["colour=green"] - coef["colour=blue"] == pytest.approx(-1.0, abs=0.1)
    else:   # the one-hot columns have the public scale: nothing of the budget spent on them
        assert "one-hot columns of declared categories" in out
    assert main(["predict", str(tmp_path / "m.json"), str(data), "--out",
                 str(tmp_path / "p.csv")]) == 0
    pred = np.loadtxt(tmp_path / "p.csv", skiprows=1)   # the estimator's own encoding of a frame:
    import pandas as pd
    frame = table().drop(columns="price")
    frame["colour"] = pd.Categorical(frame.colour.where(frame.colour.isin(COLOURS)), COLOURS)
    est = load_model(tmp_path / "m.json")
    np.testing.assert_allclose(pred, est.predict(frame), rtol=0, atol=1e-12)


def test_an_undeclared_text_column_names_the_option(tmp_path, capsys):
    data = tmp_path / "d.csv"
    table().to_csv(data, index=False)
    assert main(["fit", str(data), "--epsilon", "inf"]) == 1
    err = capsys.readouterr().err
    assert "column 'colour' is not numeric" in err and "--categories colour=A,B" in err


@pytest.mark.parametrize("spec, text", [
    (["colour"], "--categories 'colour': declare each column once"),
    (["colour=", ], "--categories 'colour=': declare each column once"),
    (["colour=red", "colour=blue"], "--categories 'colour=blue': declare each column once"),
    (["price=1,2"], "--categories of 'price': not a feature column"),
    (["shade=red"], "--categories of 'shade': not a feature column"),
])
def test_bad_declarations_are_usage_errors(tmp_path, capsys, spec, text):
    data = tmp_path / "d.csv"
    table().to_csv(data, index=False)
    argv = ["fit", str(data), "--out", str(tmp_path / "m.json")]
    for s in spec: argv += ["--categories", s]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("dp-cd: error:") and err.count("\n") == 1 and text in err, err
    assert not (tmp_path / "m.json").exists()


def test_categories_of_a_file_without_columns_are_refused(tmp_path, capsys):
    np.save(tmp_path / "d.npy", np.zeros((10, 3)))
    assert main(["fit", str(tmp_path / "d.npy"), "--categories", "x0=1,2"]) == 2
    assert "--categories name columns of a CSV file" in capsys.readouterr().err


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
@pytest.mark.parametrize("placement", [None, "spread"])
def test_dask_gives_the_in_memory_model(tmp_path, capsys, monkeypatch, suffix, placement):
    "On a local cluster (gathered when small, or kept lazy: 'spread'), CSV and Parquet."
    pytest.importorskip("distributed")
    pytest.importorskip("pyarrow")
    from distributed import LocalCluster
    from dp_cd.solvers import chunks
    monkeypatch.setattr(chunks, "PLACEMENT", placement)
    frame = table()
    frame.to_csv(tmp_path / "d.csv", index=False, float_format="%.17g")
    frame.to_parquet(tmp_path / "d.parquet")
    mem, _ = fit(tmp_path / "d.csv", tmp_path / "mem.json", [], capsys)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, host="127.0.0.1",
                      protocol="tcp://", dashboard_address=None) as cluster:
        far, out = fit(tmp_path / ("d" + suffix), tmp_path / "far.json",
                       ["--scheduler", cluster.scheduler_address], capsys)
    np.testing.assert_allclose(far["coef"], mem["coef"], rtol=0, atol=1e-9)
    assert far["feature_names"] == mem["feature_names"] and far["privacy"] == mem["privacy"]
    assert "on 700 records x 5 features" in out


@pytest.mark.parametrize("extra, text", [(["--test-file", "TEST"], "R^2 on"),
                                         (["--tune"], "tuned privately")])
def test_a_held_out_file_and_a_tuned_fit_read_the_same_categories(tmp_path, capsys, extra, text):
    data, test = tmp_path / "d.csv", tmp_path / "t.csv"
    table().to_csv(data, index=False)
    table(seed=1).to_csv(test, index=False)
    model, out = fit(data, tmp_path / "m.json", [str(test) if e == "TEST" else e for e in extra],
                     capsys)
    assert text in out and "on 700 records x 5 features" in out
    assert model["feature_names"] == ["a", "colour=red", "colour=green", "colour=blue", "b"]
