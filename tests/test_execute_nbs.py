"tools/execute_nbs.py: the stored outputs are those of the run, none left over from an older one."
import importlib.util, json, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _executor():
    spec = importlib.util.spec_from_file_location("execute_nbs", ROOT / "tools" / "execute_nbs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _cell(source, outputs=()):
    return {"cell_type": "code", "execution_count": None, "id": f"c{abs(hash(source)) % 10**8}",
            "metadata": {}, "outputs": list(outputs), "source": source}


def _stream(text): return {"name": "stderr", "output_type": "stream", "text": text}


def test_a_silent_cell_loses_its_stale_output(tmp_path, monkeypatch):
    "A cell that prints nothing now loses the warning an older run stored; `slow` cells keep theirs."
    nb = {"cells": [_cell("x = 1", [_stream("old.py:1: IntegrationWarning: stale\n")]),
                    _cell("print('fresh', x)", [_stream("stale too\n")]),
                    _cell("#| slow\nprint('slow')", [_stream("last full run\n")])],
          "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                      "name": "python3"}},
          "nbformat": 4, "nbformat_minor": 5}
    fn = tmp_path / "stale.ipynb"
    fn.write_text(json.dumps(nb))
    monkeypatch.chdir(ROOT)   # nbdev's settings.ini: the `slow` flag
    assert _executor().execute(fn, set())
    cells = json.loads(fn.read_text())["cells"]
    assert cells[0]["outputs"] == []
    assert [o.get("text") for o in cells[1]["outputs"]] in (["fresh 1\n"], [["fresh 1\n"]])
    assert cells[2]["outputs"] == [_stream("last full run\n")]
