"The book builds from the notebooks, every chapter page carries its title, and broken notebooks fail the build."
import json, re, subprocess, sys
from pathlib import Path
import pytest
import build_book as bb

ROOT = Path(__file__).resolve().parents[1]

@pytest.fixture(scope='module')
def html_dir():
    r = subprocess.run([sys.executable, 'tools/build_book.py'], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return ROOT / 'book' / '_build' / 'html'

def test_every_chapter_has_its_page_and_title(html_dir):
    for nb_path in bb.notebooks():
        title = bb.title_of(json.loads(nb_path.read_text()))
        page = html_dir / f'{bb.page_of(nb_path)}.html'
        assert page.exists(), f'no page for {nb_path.name}'
        h1s = [re.sub(r'<a class="headerlink".*?</a>|<[^>]+>', '', h).strip() for h in re.findall(r'<h1[^>]*>(.*?)</h1>', page.read_text(), re.S)]
        assert title in h1s, f'{page.name}: title {title!r} not rendered as H1 (found {h1s})'

def test_norms_chapter_renders_math_figure_and_api(html_dir):
    s = (html_dir / '01_model' / '01_norms.html').read_text()
    assert r'\|w\|_{M,q}' in s                        # math survives to MathJax
    assert re.search(r'<img[^>]+\.png', s)             # the unit-ball figure
    assert '<h3>mahalanobis_norm</h3>' in s and '<h3>dual_norm</h3>' in s  # API docs from show_doc

def _nb(cells):
    return {'cells': cells, 'metadata': {}, 'nbformat': 4, 'nbformat_minor': 5}

def _md(src): return {'cell_type': 'markdown', 'metadata': {}, 'source': src}

def test_broken_notebooks_are_refused(tmp_path):
    bad_json = tmp_path / 'a.ipynb'; bad_json.write_text('{"cells": [')
    with pytest.raises(bb.BookError, match='not a valid notebook'): bb.check(bad_json)
    no_title = tmp_path / 'b.ipynb'; no_title.write_text(json.dumps(_nb([_md('just text')])))
    with pytest.raises(bb.BookError, match='no "# Title"'): bb.check(no_title)
    err = {'cell_type': 'code', 'metadata': {}, 'source': '1/0', 'execution_count': 1,
           'outputs': [{'output_type': 'error', 'ename': 'ZeroDivisionError', 'evalue': '', 'traceback': []}]}
    with_err = tmp_path / 'c.ipynb'; with_err.write_text(json.dumps(_nb([_md('# T'), err])))
    with pytest.raises(bb.BookError, match='stores an error output'): bb.check(with_err)

def test_failing_exported_code_fails_processing(tmp_path):
    bad = tmp_path / 'd.ipynb'
    code = {'cell_type': 'code', 'metadata': {}, 'source': '#| export\nraise RuntimeError("boom")', 'execution_count': None, 'outputs': []}
    bad.write_text(json.dumps(_nb([{'cell_type': 'code', 'metadata': {}, 'source': '#| default_exp broken', 'execution_count': None, 'outputs': []}, _md('# T'), code])))
    with pytest.raises(bb.BookError, match='failed'): bb.process(bad, tmp_path / 'out.ipynb', execute=False)
