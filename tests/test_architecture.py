"""The house's shape holds: the import contracts of pyproject.toml (import-linter: the apps
depend one way, the rules and bots are pure Python, the apps never import the entry points,
the table services by concern) and modules small enough to read at once (docs/architecture.md).
CI runs only the README's test command, so the contracts run here."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parent.parent
#: "About 600 lines": a module past this is due to be split by concern.
MODULE_LINES = 600
APPS = ("rules", "bots", "core", "accounts", "tables", "friends", "club", "moderation",
        "fairplay", "tournaments", "reviews", "realtime", "notifications")


@pytest.mark.slow
def test_the_import_contracts_hold():
    # In a process of its own: the graph is read from the files, not from what this test
    # process happens to have imported.
    done = subprocess.run([str(Path(sys.executable).parent / "lint-imports"), "--no-cache"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_no_module_of_the_apps_is_too_long_to_read_at_once():
    long = {str(path.relative_to(ROOT)): n for path in (ROOT / "apps").rglob("*.py")
            if "migrations" not in path.parts
            and (n := len(path.read_text().splitlines())) > MODULE_LINES}
    assert long == {}


def test_the_table_services_share_only_public_names():
    """A module of apps/tables/services/ takes from a sibling only names without a leading
    underscore: what the modules share is public where it lives, an underscore keeps a name
    to its own module."""
    private = [f"{path.name}: {node.module}.{alias.name}"
               for path in sorted((ROOT / "apps" / "tables" / "services").glob("*.py"))
               for node in ast.walk(ast.parse(path.read_text()))
               if isinstance(node, ast.ImportFrom) and node.level == 1
               for alias in node.names if alias.name.startswith("_")]
    assert private == []


def test_the_contracts_allow_no_dependency_between_apps_that_the_code_does_not_have():
    """Every dependency between two apps that pyproject.toml's contracts allow is one the code
    has, directly or through another app: what is independent is listed as independent, so a
    new arrow (the reviews importing the tournaments, say) breaks a contract and is drawn in
    docs/architecture.md on purpose, instead of passing unnoticed. (``lint-imports`` checks the
    other half: every dependency the code has is allowed.)"""
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"][
        "contracts"]
    allowed = {(a, b) for a in APPS for b in APPS
               if a != b and _allowed(contracts, f"apps.{a}", f"apps.{b}")}
    assert sorted(allowed - _dependencies()) == []


def _dependencies() -> set[tuple[str, str]]:
    """(a, b) for each app a that imports app b, directly or through other apps."""
    graph = grimp.build_graph("apps")
    direct: dict[str, set[str]] = {a: set() for a in APPS}
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            a, b = module.split(".")[1:2], imported.split(".")[1:2]
            if a and b and a != b and a[0] in direct and b[0] in direct:
                direct[a[0]].add(b[0])
    reached: set[tuple[str, str]] = set()
    for app in APPS:
        seen, todo = set(), [app]
        while todo:
            for nxt in direct[todo.pop()] - seen:
                seen.add(nxt)
                todo.append(nxt)
        reached |= {(app, other) for other in seen}
    return reached


def _allowed(contracts: list[dict], importer: str, imported: str) -> bool:
    """Whether the contracts let ``importer`` import ``imported`` (whole apps only)."""
    for contract in contracts:
        kind = contract["type"]
        if kind == "layers" and "containers" not in contract:
            where = {}
            for depth, layer in enumerate(contract["layers"]):
                for module in re.split(r"[|:]", layer):
                    where[module.strip()] = (depth, "|" in layer)
            if importer in where and imported in where:
                (mine, apart), (theirs, _) = where[importer], where[imported]
                if mine > theirs or (mine == theirs and apart):
                    return False
        elif kind == "independence":
            if {importer, imported} <= set(contract["modules"]):
                return False
        elif kind == "forbidden" and not contract.get("allow_indirect_imports"):
            if importer in contract["source_modules"] \
                    and imported in contract["forbidden_modules"]:
                return False
    return True
