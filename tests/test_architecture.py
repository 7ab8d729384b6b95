"""The house's shape holds: the import contracts of pyproject.toml (import-linter: the apps
depend one way, the rules and bots are pure Python, the apps never import the entry points,
the table services by concern) and modules small enough to read at once (docs/architecture.md).
CI runs only the README's test command, so the contracts run here."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: "About 600 lines": a module past this is due to be split by concern.
MODULE_LINES = 600


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
