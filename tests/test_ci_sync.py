"The CI sync check passes on a committed checkout and fails when the package and a notebook disagree."
import subprocess, sys, shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

def _clone(tmp_path):
    dest = tmp_path / 'clone'
    subprocess.run(['git', 'clone', '-q', str(ROOT), str(dest)], check=True)
    return dest

def _commit(repo, msg):
    subprocess.run(['git', '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qam', msg], cwd=repo, check=True)

def _check(repo):
    return subprocess.run([sys.executable, 'tools/check_sync.py'], cwd=repo, capture_output=True, text=True)

def test_sync_check(tmp_path):
    repo = _clone(tmp_path)
    r = _check(repo); assert r.returncode == 0, r.stdout + r.stderr
    mod = repo / 'dp_cd' / 'model' / 'norms.py'          # a hand edit of the package is undone by the export
    mod.write_text(mod.read_text().replace('def mahalanobis_norm(', 'def mahalanobis_norm_edited('))
    _commit(repo, 'hand edit of the package')
    r = _check(repo); assert r.returncode == 1 and 'dp_cd/model/norms.py' in r.stdout, r.stdout
    subprocess.run(['git', 'reset', '-q', '--hard', 'HEAD~1'], cwd=repo, check=True)
    nb = repo / 'nbs' / '01_model' / '01_norms.ipynb'        # a notebook edit committed without exporting it
    nb.write_text(nb.read_text().replace('def conjugate_exponent(', 'def conjugate_exponent_renamed('))
    _commit(repo, 'notebook edit without export')
    r = _check(repo); assert r.returncode == 1 and 'dp_cd/model/norms.py' in r.stdout, r.stdout
