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
