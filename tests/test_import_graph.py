"""No import loop among the modules of `dp_cd.privacy` and of `dp_cd.solvers`, read statically.

Every import of a `dp_cd` module is read from the source with `ast` (at the top level and inside
functions: an import on use hides a loop, it does not remove it); the modules of the package must
form an acyclic graph, and import each other at the top level only.
"""
import ast
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def _imported(node, module: str) -> list:
    "The dp_cd modules an `import` / `from ... import` node names (a `from` of a package: its names)."
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "dp_cd"]
    if node.level:   # relative: resolved against the module's package
        base = module.split(".")[:-node.level]
        target = ".".join(base + ([node.module] if node.module else []))
    else: target = node.module or ""
    if target.split(".")[0] != "dp_cd": return []
    if (ROOT / Path(*target.split("."))).is_dir():   # `from package import module`
        return [f"{target}.{a.name}" for a in node.names
                if (ROOT / Path(*target.split(".")) / f"{a.name}.py").exists()] or [target]
    return [target]


def imports(package: str) -> dict:
    "module ↦ {imported module of `package`: True if the import is at the top level}."
    graph = {}
    for path in sorted((ROOT / Path(*package.split("."))).glob("*.py")):
        module, tree = _module_name(path), ast.parse(path.read_text())
        top = {id(n) for n in tree.body}
        edges = {}
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _imported(node, module):
                    if target.startswith(package + ".") and target != module:
                        edges[target] = edges.get(target, False) or id(node) in top
        graph[module] = edges
    return graph


def cycles(graph: dict) -> list:
    "The cycles of a directed graph (depth-first search; one per back edge)."
    found, state = [], {}
    def visit(u, stack):
        state[u] = "open"
        for v in graph.get(u, ()):
            if state.get(v) == "open": found.append(stack[stack.index(v):] + [v])
            elif v not in state: visit(v, stack + [v])
        state[u] = "done"
    for u in graph:
        if u not in state: visit(u, [u])
    return found


def test_cycles_finds_a_loop_and_its_absence():
    assert cycles({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}}) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b": 1}, "b": {"c": 1}, "c": {}}) == []


def test_the_reader_sees_imports_inside_functions(tmp_path):
    src = "from .b import x\ndef f():\n    from dp_cd.privacy.c import y\n"
    tree = ast.parse(src)
    names = [t for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
             for t in _imported(n, "dp_cd.privacy.a")]
    assert names == ["dp_cd.privacy.b", "dp_cd.privacy.c"]


PACKAGES = ["dp_cd.privacy", "dp_cd.solvers"]


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_loop(package):
    graph = imports(package)
    assert len(graph) >= 10, graph
    assert cycles(graph) == []


@pytest.mark.parametrize("package", PACKAGES)
def test_modules_import_each_other_at_the_top_level_only(package):
    inside = {(m, t) for m, edges in imports(package).items() for t, top in edges.items() if not top}
    assert inside == set()


def package_imports() -> dict:
    "module ↦ {imported dp_cd module} over the whole package (top level and inside functions)."
    graph = {}
    for path in sorted((ROOT / "dp_cd").rglob("*.py")):
        module = _module_name(path)
        name = module[:-len(".__init__")] if path.name == "__init__.py" else module
        graph[name] = {t for node in ast.walk(ast.parse(path.read_text()))
                       if isinstance(node, (ast.Import, ast.ImportFrom))
                       for t in _imported(node, module) if t != name}
    return graph


def test_no_import_loop_in_the_package():
    "No loop among all the modules of dp_cd (API, CLI, experiments and subpackages together)."
    graph = package_imports()
    assert len(graph) >= 40 and "dp_cd.estimators" in graph["dp_cd.tuned"], sorted(graph)
    assert cycles({m: dict.fromkeys(ts) for m, ts in graph.items()}) == []


def private_imports(package: str) -> set:
    "(module, name) for each `_name` a module of `package` imports from another of its modules."
    found = set()
    for path in sorted((ROOT / Path(*package.split("."))).glob("*.py")):
        module = _module_name(path)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and _imported(node, module):
                found |= {(module, a.name) for a in node.names
                          if a.name.startswith("_") and not a.name.startswith("__")}
    return found


def test_the_seam_and_the_runs_on_chunks_import_no_private_name():
    "The contract, the data seam and the solvers' runs on chunks use the other modules' public names."
    mine = {f"dp_cd.solvers.{m}" for m in ("contract", "chunks", "distributed")}
    assert {(m, n) for m, n in private_imports("dp_cd.solvers") if m in mine} == set()


def package_private_imports() -> set:
    "(module, name) for each `_name` a module of `dp_cd` imports from another module of `dp_cd`."
    found = set()
    for path in sorted((ROOT / "dp_cd").rglob("*.py")):
        module = _module_name(path)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and _imported(node, module):
                found |= {(module, a.name) for a in node.names
                          if a.name.startswith("_") and not a.name.startswith("__")}
    return found


def test_no_private_name_is_imported_across_modules():
    "No module of the package imports another module's `_name` (solvers, privacy, model, API)."
    assert package_private_imports() == set()


def test_the_package_reader_sees_a_private_import(tmp_path):
    "The package-wide reader finds `from ..x import _y` in a subpackage (the test above can fail)."
    pkg = tmp_path / "dp_cd" / "sub"
    pkg.mkdir(parents=True)
    (tmp_path / "dp_cd" / "a.py").write_text("def _y(): pass\n")
    (pkg / "b.py").write_text("from ..a import _y, z\n")
    globals()["ROOT"], saved = tmp_path, ROOT
    try: assert package_private_imports() == {("dp_cd.sub.b", "_y")}
    finally: globals()["ROOT"] = saved


def test_private_imports_are_found(tmp_path):
    "The reader of private imports sees `from .x import _y` (the test above can fail)."
    tree = ast.parse("from .dpcd import row_norms, _record_due\n")
    node = tree.body[0]
    assert _imported(node, "dp_cd.solvers.distributed") == ["dp_cd.solvers.dpcd"]
    assert [a.name for a in node.names if a.name.startswith("_")] == ["_record_due"]


def test_every_chunked_run_is_attached_on_import():
    "In a fresh interpreter, importing one solver module attaches every solver's run on chunks."
    import subprocess, sys, os
    code = ("import dp_cd.solvers.dpgcd\n"
            "from dp_cd.solvers.contract import SOLVERS, chunked_solvers\n"
            "print(' '.join(chunked_solvers()))\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["dp-bcd", "dp-cd", "dp-gcd", "dp-scd", "dp-sgd",
                                  "output-perturbation"]


def test_the_command_line_stays_thin():
    "The command line reads arguments and calls the library: dp_cd/cli.py stays under 800 lines."
    lines = len((ROOT / "dp_cd" / "cli.py").read_text().splitlines())
    assert 0 < lines < 800, lines


# what `from dp_cd import DPClassifier, DPRegressor` (and the tuned estimators, the transformer)
# must not import when their modules load: scikit-learn (with pandas) is imported inside the
# methods that use it (dp_cd.base), scipy's statistics and signal processing on first use
HEAVY_AT_IMPORT = ("sklearn", "pandas", "scipy.stats", "scipy.signal", "matplotlib", "dask")
ESTIMATOR_MODULES = ("dp_cd.estimators", "dp_cd.tuned", "dp_cd.preprocessing", "dp_cd.base")


def _load_time_nodes(tree):
    "The import nodes that run when the module loads (not those inside functions)."
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)): continue
        if isinstance(node, (ast.Import, ast.ImportFrom)): yield node
        stack.extend(ast.iter_child_nodes(node))


def _external_names(node) -> list:
    "The modules (and `from m import x`: `m.x`) an import node names outside the package."
    if isinstance(node, ast.Import): return [a.name for a in node.names]
    if node.level or not node.module: return []
    return [node.module] + [f"{node.module}.{a.name}" for a in node.names]


def load_time_graph() -> tuple:
    "(module ↦ dp_cd modules, module ↦ external modules) imported when each module loads."
    inner, outer = {}, {}
    for path in sorted((ROOT / "dp_cd").rglob("*.py")):
        module = _module_name(path)
        name = module[:-len(".__init__")] if path.name == "__init__.py" else module
        nodes = list(_load_time_nodes(ast.parse(path.read_text())))
        targets = {t for n in nodes for t in _imported(n, module) if t != name}
        # importing a.b.c loads the packages a and a.b first
        inner[name] = targets | {".".join(t.split(".")[:i]) for t in targets
                                 for i in range(1, t.count(".") + 1)} - {name}
        outer[name] = {e for n in nodes for e in _external_names(n)
                       if e.split(".")[0] != "dp_cd"}
    return inner, outer


def heavy_at_import(start, heavy=HEAVY_AT_IMPORT) -> set:
    "(module, heavy import) for every module loaded with `start` that imports a heavy module."
    inner, outer = load_time_graph()
    seen, todo = set(), list(start)
    while todo:
        m = todo.pop()
        if m in seen or m not in inner: continue
        seen.add(m); todo.extend(inner[m])
    return {(m, e) for m in seen for e in outer[m]
            if any(e == h or e.startswith(h + ".") for h in heavy)}


def test_the_estimators_import_no_scikit_learn_when_they_load():
    "No module that `from dp_cd import DPClassifier` loads imports scikit-learn at its top level."
    inner, _ = load_time_graph()
    assert "dp_cd.base" in inner["dp_cd.estimators"], sorted(inner["dp_cd.estimators"])
    assert heavy_at_import(("dp_cd",) + ESTIMATOR_MODULES) == set()


def test_a_top_level_scikit_learn_import_is_found(tmp_path):
    "The reader sees `from sklearn.base import ...` at the top level, and not inside a function."
    (tmp_path / "dp_cd").mkdir()
    (tmp_path / "dp_cd" / "__init__.py").write_text("")
    (tmp_path / "dp_cd" / "estimators.py").write_text(
        "from .base import X\ntry:\n    from scipy import stats\nexcept ImportError: pass\n"
        "def fit():\n    import pandas\n")
    (tmp_path / "dp_cd" / "base.py").write_text("import sklearn.base\n")
    globals()["ROOT"], saved = tmp_path, ROOT
    try: found = heavy_at_import(("dp_cd.estimators",))
    finally: globals()["ROOT"] = saved
    assert found == {("dp_cd.base", "sklearn.base"), ("dp_cd.estimators", "scipy.stats")}
