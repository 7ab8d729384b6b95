#!/usr/bin/env python
"""Compile every locale/**/LC_MESSAGES/*.po into .mo with Babel (pure Python, no gettext).

Equivalent to `manage.py compilemessages` for this project, but works on a fresh machine
without the msgfmt binary. Run from anywhere: paths are relative to the project root.
"""

import sys
from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    count = 0
    for po_path in sorted((ROOT / "locale").glob("*/LC_MESSAGES/*.po")):
        mo_path = po_path.with_suffix(".mo")
        with po_path.open("rb") as po_file:
            catalog = read_po(po_file, locale=po_path.parent.parent.name)
        with mo_path.open("wb") as mo_file:
            write_mo(mo_file, catalog)
        count += 1
    print(f"compilemessages: {count} catalog(s) compiled")
    return 0


if __name__ == "__main__":
    sys.exit(main())
