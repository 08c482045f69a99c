"""The package's exported names: one source (``_EXPORTS``), and no name that depends on
import order.

Public functions once shared names with their modules (``hcgraph.check`` was the module
``check.py`` and the function ``check``), so what ``hcgraph.check`` was depended on what had
been imported before; a hook on the package papered over it. Now no module is named like a
function of its package, and these tests keep it so.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import subprocess
import sys
import types
from pathlib import Path

import pytest

import hcgraph
from tests.conftest import cli_env

INIT = Path(hcgraph.__file__)

#: What hcgraph/__init__.py itself imports to do its work (not part of the API).
PLUMBING = {"annotations", "TYPE_CHECKING", "Any"}


def test_every_exported_name_is_importable() -> None:
    namespace: dict[str, object] = {}
    exec("from hcgraph import *", namespace)
    assert set(namespace) - {"__builtins__"} == set(hcgraph.__all__)
    for name in hcgraph.__all__:
        assert getattr(hcgraph, name) is namespace[name]


def test_all_equals_the_public_names() -> None:
    assert len(hcgraph.__all__) == len(set(hcgraph.__all__))
    assert set(hcgraph.__all__) == {"__version__", *hcgraph._EXPORTS}
    for name in hcgraph.__all__:  # load every lazy name, then look at what the package holds
        getattr(hcgraph, name)
    public = {
        name
        for name, value in vars(hcgraph).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public - PLUMBING == set(hcgraph.__all__) - {"__version__"}
    assert set(dir(hcgraph)) >= set(hcgraph.__all__)


def _type_checking_imports() -> list[tuple[str, str, str | None]]:
    """``(module, name, asname)`` of every import in ``if TYPE_CHECKING:`` of __init__.py."""
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    blocks = [
        node
        for node in tree.body
        if isinstance(node, ast.If)
        and isinstance(node.test, ast.Name)
        and node.test.id == "TYPE_CHECKING"
    ]
    assert len(blocks) == 1
    found = []
    for node in blocks[0].body:
        assert isinstance(node, ast.ImportFrom), ast.dump(node)
        module = "." * node.level + (node.module or "")
        found.extend((module, alias.name, alias.asname) for alias in node.names)
    return found


def test_type_checking_block_names_exactly_the_exports() -> None:
    """The block static checkers read names each export once, as an explicit re-export
    (``X as X``: ``__all__`` is built at run time, which mypy does not read), from a module
    that holds the very object the lazy import returns."""
    imports = _type_checking_imports()
    names = [name for _, name, _ in imports]
    missing = sorted(set(hcgraph._EXPORTS) - set(names))
    assert not missing, "add to the TYPE_CHECKING block of hcgraph/__init__.py: " + ", ".join(
        f"from {hcgraph._EXPORTS[n]} import {n} as {n}" for n in missing
    )
    assert sorted(names) == sorted(hcgraph._EXPORTS), "names not in _EXPORTS, or twice"
    for module, name, asname in imports:
        assert asname == name, f"{name}: write `import {name} as {name}` (a re-export)"
        source = importlib.import_module(module, "hcgraph")
        assert getattr(source, name) is getattr(hcgraph, name), (module, name)


def _submodules() -> list[str]:
    return sorted(m.name for m in pkgutil.walk_packages(hcgraph.__path__, "hcgraph."))


def test_no_attribute_shadows_a_submodule() -> None:
    """``hcgraph.a.b`` is the module ``a/b.py`` whatever was imported first: no package
    holds a function or class under the name of one of its modules."""
    shadowed = []
    for name in _submodules():
        module = importlib.import_module(name)
        parent, _, child = name.rpartition(".")
        if getattr(sys.modules[parent], child) is not module:
            shadowed.append(f"{name} is {type(getattr(sys.modules[parent], child)).__name__}")
    assert not shadowed


def test_no_export_is_named_like_a_module() -> None:
    """An exported name that equals a module of the package it is read from, or of hcgraph
    itself, invites the shadowing back (``trace`` is read from ``hcgraph.provenance``)."""
    clashes = []
    for name, module in hcgraph._EXPORTS.items():
        for package in {hcgraph, importlib.import_module(module, "hcgraph")}:
            children = {m.name for m in pkgutil.iter_modules(getattr(package, "__path__", []))}
            if name in children:
                clashes.append(f"{package.__name__}.{name}")
    assert clashes == []


#: Import orders that once broke (with the modules' old names), each in a fresh interpreter.
IMPORT_ORDERS = {
    "crawl then the crawler's modules": (
        "from hcgraph import crawl\n"
        "import hcgraph.crawling.worker\n"
        "import hcgraph.crawling as c\n"
        "assert callable(crawl) and c.crawl is crawl and c.CrawlReport\n"
    ),
    "check then its module": (
        "from hcgraph import check\n"
        "import hcgraph.checking as c\n"
        "assert c.CheckReport and c.check is check\n"
    ),
    "modules then the functions": (
        "import hcgraph.checking, hcgraph.exporting, hcgraph.rebuilding, hcgraph.crawling\n"
        "import hcgraph.provenance.tracing, hcgraph.provenance.auditing\n"
        "import hcgraph.provenance.versions\n"
        "from hcgraph import audit, check, crawl, export, history, rebuild, trace\n"
        "import inspect\n"
        "fs = (audit, check, crawl, export, history, rebuild, trace)\n"
        "assert all(inspect.isfunction(f) for f in fs), fs\n"
    ),
    "provenance functions then their modules": (
        "from hcgraph import audit, history, trace\n"
        "import hcgraph.provenance.tracing as t, hcgraph.provenance.auditing as a\n"
        "import hcgraph.provenance.versions as v\n"
        "assert t.Trace and a.AuditReport and v.History\n"
        "assert (t.trace, a.audit, v.history) == (trace, audit, history)\n"
    ),
    "every export, then the module defining it": (
        "import importlib, inspect, types, hcgraph\n"
        "for name in hcgraph.__all__:\n"
        "    obj = getattr(hcgraph, name)\n"
        "    if inspect.isfunction(obj) or inspect.isclass(obj):\n"
        "        module = importlib.import_module(obj.__module__)\n"
        "        exec(f'import {obj.__module__} as m', globals())\n"
        "        assert m is module, (name, m)\n"
        "        assert getattr(m, obj.__name__) is obj, name\n"
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("code", IMPORT_ORDERS.values(), ids=IMPORT_ORDERS.keys())
def test_import_order_does_not_matter(code: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", code], env=cli_env(), capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
