import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'tools'))

if os.environ.get('DP_CD_TEST_COMPILES'):   # set by tools/run_tests.py: where to write numba's
    import json                              # compilations in this process ({kernel: [count, CPU s]})
    from run_tests import Compiles
    _compiles = Compiles()
    _compiles.install()

    def pytest_sessionfinish(session, exitstatus):
        Path(os.environ['DP_CD_TEST_COMPILES']).write_text(json.dumps(_compiles.kernels))
