"""The web-archive libraries (the ``archive`` extra), imported on first use.

hcgraph runs without them; their absence is a one-line user error, not a traceback.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from ..errors import ExportError

_HINT = "pip install 'hcgraph[archive]'"


def _load(*names: str) -> ModuleType:
    try:
        modules = [importlib.import_module(name) for name in names]
    except ImportError as exc:
        raise ExportError(f"WARC/WACZ needs {exc.name or names[0]}: {_HINT}") from None
    return modules[0]


def warcio() -> ModuleType:
    """The ``warcio`` package with the submodules hcgraph uses loaded."""
    return _load(
        "warcio",
        "warcio.warcwriter",
        "warcio.archiveiterator",
        "warcio.statusandheaders",
        "warcio.exceptions",
    )


def wacz_main() -> ModuleType:
    """py-wacz's command module (``wacz create``, ``wacz validate``)."""
    return _load("wacz.main")
