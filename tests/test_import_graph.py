"""No import loop among the modules of `dp_cd.privacy` (issue 32, item 3), read statically.

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


@pytest.mark.parametrize("package", ["dp_cd.privacy"])
def test_no_import_loop(package):
    graph = imports(package)
    assert len(graph) >= 10, graph
    assert cycles(graph) == []


@pytest.mark.parametrize("package", ["dp_cd.privacy"])
def test_modules_import_each_other_at_the_top_level_only(package):
    inside = {(m, t) for m, edges in imports(package).items() for t, top in edges.items() if not top}
    assert inside == set()
