"Smoke tests of the Table D.1 reproduction (dp_cd.experiments.dpcd) and of `dp-cd reproduce table-d1 --quick`."
import os
from pathlib import Path
import pandas as pd
import pytest
from dp_cd.experiments.dpcd import reproduce_table_d1

DATA = os.environ.get("DP_CD_DATA", "/work/shared/data")

def test_quick_reproduction_synthetic(tmp_path):
    res = reproduce_table_d1(DATA, quick=True, out_dir=tmp_path, names=["sparse_lasso"], solvers=["DP-CD"])
    f = tmp_path / "table_d1_quick.csv"
    assert f.exists() and len(pd.read_csv(f)) == len(res) == 2
    assert (res.rel_min > -1e-9).all() and (res.rel_mean < 0.7551 + 0.05).all()

@pytest.mark.slow
def test_cli_reproduce_quick(tmp_path):
    cli = pytest.importorskip("dp_cd.cli")
    if not (Path(DATA) / "california_housing_raw.csv").exists(): pytest.skip("real data not available")
    os.environ.setdefault("DP_CD_DATA", DATA)
    assert cli.main(["reproduce", "table-d1", "--quick", "--out", str(tmp_path)]) == 0
    assert len(pd.read_csv(tmp_path / "table_d1_quick.csv")) > 0
    assert (tmp_path / "figures_4_5_1_4_6_1_quick.csv").exists() and (tmp_path / "figure_4_5_1_quick.png").exists()
