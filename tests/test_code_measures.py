"tools/code_measures.py on small synthetic notebooks: every measure, and the exit code of --check."
import json
import subprocess
import sys
from pathlib import Path

import pytest

import code_measures as cm

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / 'tools' / 'code_measures.py'
PARAMS = ', '.join(f'a{i}' for i in range(12))
NB_A = [
    ('markdown', '# A notebook; with a semicolon in prose'),
    ('code', '#| export\ndef f(a, b):\n    "doc"\n\n    return a + b\n'),
    ('code', "#| exporti\nx = 1; y = 2\ns = 'a;b'  # c; d\n"),
    ('code', "z = 3\nprint(z);\nw = '" + 'x' * 100 + "'\nv = '" + 'y' * 120 + "'\n"),
    ('code', '#| export\n%time q = 1\ndef g(' + PARAMS + ', b):\n    pass\n'),
    ('code', f'#| export\nclass C:\n    def m(self, {PARAMS}):\n        pass\n'),
    ('code', '#| export\ndef broken(:\n    pass\n'),
]
NB_B = [
    ('code', '#|export\ndef h(*args, a, b=1, ' + ', '.join(f'k{i}' for i in range(10)) + ', **kw):\n'
             + ''.join(f'    t{i} = {i}\n' for i in range(20))),
    ('code', '#| hide\n\nimport os\n'),
    ('code', '#| export utils\ndef wide(' + ', '.join(f'p{i}' for i in range(14)) + '): pass\n'),
]


def write_notebook(path, cells):
    "A minimal nbformat-4 notebook with the given (cell type, source) cells."
    path.parent.mkdir(parents=True, exist_ok=True)
    nb = {'cells': [{'cell_type': kind, 'metadata': {}, 'source': src.splitlines(True),
                     **({'outputs': [], 'execution_count': None} if kind == 'code' else {})}
                    for kind, src in cells],
          'metadata': {}, 'nbformat': 4, 'nbformat_minor': 5}
    path.write_text(json.dumps(nb), encoding='utf-8')


@pytest.fixture
def nbs(tmp_path):
    "A folder with two notebooks, one in a sub-folder, and a checkpoint that must be ignored."
    write_notebook(tmp_path / 'a.ipynb', NB_A)
    write_notebook(tmp_path / 'sub' / 'b.ipynb', NB_B)
    write_notebook(tmp_path / '.ipynb_checkpoints' / 'a-checkpoint.ipynb', NB_A)
    return tmp_path


def run(*args):
    "Run the script and return the finished process."
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True,
                          text=True)


def test_semicolons_join_statements_only():
    src = "a = 1; b = 2\ns = ';'\n# ;\nc = 3;\nif a: f(); g()\n!echo a; b\n"
    assert cm.semicolon_lines(src) == {0, 4}


def test_directives_and_lines():
    src = '#| export\n#| hide\n\nx = 1\n#| not a directive after code\n\ny = 2\n'
    assert cm.directives(src) == ['export', 'hide']
    assert [i for i, _ in cm.code_lines(src)] == [3, 6]


def test_parameter_counts():
    tree = cm.ast.parse('def f(a, /, b, *c, d, **e): pass\n'
                        'class K:\n    def m(self, x): pass\n    def n(y): pass\n'
                        'def self_at_top(self): pass\n')
    # positional (positional-only and positional-or-keyword, without self/cls), keyword-only
    assert cm.functions(tree) == [('f', (2, 1)), ('K.m', (1, 0)), ('K.n', (1, 0)),
                                  ('self_at_top', (1, 0))]


def test_groups(nbs):
    s = cm.measure(nbs)
    assert s['notebooks'] == 2
    assert s['exported'] == {
        'cells': 7, 'lines': 35, 'median_lines': 3, 'max_lines': 21,
        'long': 0, 'share_long': 0.0, 'very_long': 0, 'share_very_long': 0.0,
        'semicolon': 1, 'share_semicolon': 1 / 35}
    a = s['all']
    assert (a['cells'], a['lines'], a['median_lines'], a['max_lines']) == (9, 40, 3, 21)
    assert (a['long'], a['very_long'], a['semicolon']) == (2, 1, 1)
    assert a['share_long'] == pytest.approx(2 / 40)


def test_largest_and_functions(nbs):
    s = cm.measure(nbs)
    assert s['largest_exported'][:2] == [{'notebook': 'sub/b.ipynb', 'cell': 0, 'lines': 21},
                                         {'notebook': 'a.ipynb', 'cell': 1, 'lines': 3}]
    f = s['functions']
    assert f['cells_with_magics'] == 1    # %time: g and its 13 parameters are not read
    assert f['cells_not_parsing'] == 1
    assert f['count'] == 2
    assert [(w['name'], w['params'], w['notebook'], w['cell']) for w in f['worst']] == [
        ('wide', 14, 'sub/b.ipynb', 2), ('C.m', 12, 'a.ipynb', 5)]
    # h(*args, a, b=1, k0, ..., k9, **kw): 12 keyword-only options, listed but not a miss
    assert f['keyword_only_count'] == 1
    assert [(w['name'], w['params']) for w in f['keyword_only']] == [('h', 12)]


def test_per_notebook(nbs):
    rows = {r['notebook']: r for r in cm.measure(nbs)['per_notebook']}
    assert list(rows) == ['a.ipynb', 'sub/b.ipynb']
    a, b = rows['a.ipynb'], rows['sub/b.ipynb']
    size = ('cells', 'exported_cells', 'median_exported_lines', 'lines')
    assert tuple(a[k] for k in size) == (6, 5, 3, 17)
    assert (a['long'], a['very_long'], a['semicolon']) == (2, 1, 1)
    assert a['share_semicolon'] == pytest.approx(1 / 17)
    assert tuple(b[k] for k in size) == (3, 2, 11, 23)
    assert b['share_long'] == b['share_semicolon'] == 0


def test_check_exit_code_and_json(nbs, tmp_path_factory):
    r = run(nbs, '--check', '--json')
    assert r.returncode == 1, r.stderr
    missed = json.loads(r.stdout)['violations']
    assert len(missed) == 2 and 'function' in missed[1], missed
    assert run(nbs).returncode == 0          # without --check the measures only print
    clean = tmp_path_factory.mktemp('clean')
    write_notebook(clean / 'c.ipynb', [('code', '#| export\ndef f(x):\n    return x; \n')])
    r = run(clean, '--check')
    assert r.returncode == 0 and 'all targets met' in r.stdout, r.stdout + r.stderr


def test_check_thresholds(nbs, monkeypatch):
    "Each target trips on its own."
    monkeypatch.setattr(cm, 'TOO_MANY_PARAMS', 15)
    monkeypatch.setattr(cm, 'MAX_SHARE_SEMICOLON', 0.03)
    assert cm.measure(nbs)['violations'] == []
    monkeypatch.setattr(cm, 'MAX_MEDIAN_EXPORTED_LINES', 2)
    monkeypatch.setattr(cm, 'LONG', 30)
    missed = cm.measure(nbs)['violations']
    assert [m.split()[0] for m in missed] == ['median', 'lines'], missed


def test_table_fits_100_columns(nbs):
    for folder in (nbs, ROOT / 'nbs'):
        r = run(folder)
        assert r.returncode == 0, r.stderr
        assert 'exported code cells' in r.stdout and 'per notebook' in r.stdout
        assert max(map(len, r.stdout.splitlines())) <= 100
