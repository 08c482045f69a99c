"""Sphinx configuration of hcgraph's API reference, built strictly: ``-n -W``.

Build: ``python -m sphinx -n -W --keep-going -b html docs/api /tmp/hcgraph-api`` (tests/
test_api_reference.py runs exactly that). Everything is offline: no intersphinx inventories
are fetched or shipped, so names outside hcgraph are listed in ``nitpick_ignore_regex`` below.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path
from typing import Any

import pydantic
from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.ext import napoleon
from sphinx.pycode import ModuleAnalyzer
from sphinx.util.docutils import SphinxDirective

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import hcgraph  # noqa: E402  (after the path: the worktree's package, not an installed one)

project = "hcgraph"
author = "hcgraph contributors"
copyright = "2026, hcgraph contributors"
release = version = hcgraph.__version__

extensions = ["sphinx.ext.autodoc"]  # and napoleon, set up in setup() below

root_doc = "index"
exclude_patterns: list[str] = []
html_theme = "alabaster"
html_static_path: list[str] = []
# The pages are hand-written, not sphinx-apidoc output: one per area (store, ingest, crawling,
# …), the modules in reading order, the CLI and private helpers left out; autodoc fills them
# from the docstrings at build time, so nothing generated is committed. tests/
# test_api_reference.py checks that every module has its place in a page.
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
# Each object is documented once, in the module that defines it: ``ignore-module-all`` makes
# autodoc skip what a module imports (its ``__all__`` would re-document a sibling's classes,
# and rdflib's namespaces that ``hcgraph.vocab`` re-exports).
autodoc_default_options = {"members": True, "show-inheritance": True, "ignore-module-all": True}
napoleon_google_docstring = True
napoleon_numpy_docstring = False
nitpicky = True

# Names Sphinx cannot resolve without other projects' inventories (fetching them needs the
# network, which neither CI nor the developers' machines have): the standard library's
# modules and the third-party packages hcgraph's signatures use (``nx`` is networkx and
# ``Network`` pyvis's, as the annotations spell them). Built-in types and ``typing`` resolve
# without an inventory. hcgraph's own names are never ignored: every one must resolve.
_OUTSIDE = (
    "asyncio|collections|concurrent|contextlib|datetime|enum|io|ipaddress|logging|os|pathlib"
    "|re|sqlite3|ssl|subprocess|threading|types|email|http|urllib|multiprocessing"
    "|html|random|_asyncio|socket|multiprocessing|nx|Network"
    "|httpx|pyoxigraph|rdflib|networkx|pydantic|click|rich|jinja2|prov|pyshacl|protego|pyvis"
    "|httptools|warcio|wacz|mmap|uvloop"
)
nitpick_ignore_regex = [
    (r"py:.*", rf"({_OUTSIDE})(\..+)?"),
]


def _summary(obj: Any) -> str:
    """`` — `` and the first paragraph of an object's docstring, on one line."""
    return _summary_of(inspect.getdoc(obj) or "")


def _summary_of(doc: str) -> str:
    first = " ".join(doc.split("\n\n", 1)[0].split())
    return f" — {first}" if first else ""


class PublicApi(SphinxDirective):
    """A list of every name in ``hcgraph.__all__``, each a cross-reference to where it is
    documented and its docstring's summary: with ``-n`` the build fails when a public name
    has no documentation."""

    def run(self) -> list[nodes.Node]:
        items = nodes.bullet_list()
        context = self.env.ref_context
        outer = context.get("py:module")
        for name in hcgraph.__all__:
            if name == "__version__":
                continue
            obj = getattr(hcgraph, name)
            home = getattr(obj, "__module__", None) if callable(obj) else None
            home = home or "hcgraph" + hcgraph._EXPORTS[name]
            if callable(obj):
                summary = _summary(obj)
            else:  # module data: its ``#:`` comment
                docs = ModuleAnalyzer.for_module(home).find_attr_docs()
                summary = _summary_of("\n".join(docs.get(("", name), [])))
            line = f":py:obj:`hcgraph.{name} <{home}.{name}>`{summary}"
            item = nodes.list_item()
            # The summary's short references (``:func:`trace```) mean names of its own module.
            context["py:module"] = home
            self.state.nested_parse(StringList([line], "<public-api>"), self.content_offset, item)
            items += item
        if outer is None:
            context.pop("py:module", None)
        else:
            context["py:module"] = outer
        return [items]


def _napoleon_except_attributes(app: Sphinx) -> None:
    """Google-style sections (Args, Returns, Raises) through napoleon, but not for attributes
    and module data: napoleon reads the text before a colon in their first line as a type,
    and hcgraph's ``#:`` comments are prose (``Called with each failure: ...``)."""
    app.setup_extension("sphinx.ext.napoleon")
    (listener,) = [
        each
        for each in app.events.listeners["autodoc-process-docstring"]
        if each.handler is napoleon._process_docstring
    ]
    app.disconnect(listener.id)

    def process(app: Sphinx, what: str, name: str, obj: Any, opts: Any, lines: list[str]) -> None:
        if what not in ("attribute", "data", "property"):
            napoleon._process_docstring(app, what, name, obj, opts, lines)

    app.connect("autodoc-process-docstring", process)


def _readable_defaults(
    app: Sphinx, what: str, name: str, obj: Any, opts: Any, signature: str | None, ret: str | None
) -> tuple[str | None, str | None]:
    """A dataclass field's ``default_factory`` shows as ``<factory>``, which is not Python:
    Sphinx then splits the signature at every comma, ``dict[str, int]`` included, and the
    halves are broken cross-references. ``...`` parses, and says the same."""
    if isinstance(obj, type) and issubclass(obj, pydantic.BaseModel):
        # A story part's signature is pydantic's, with its validators and ``PydanticUndefined``
        # spelled out; a story is made by :func:`hcgraph.model.parse_story`, not by hand.
        return "", None
    return (signature.replace("<factory>", "...") if signature else signature), ret


def _public_bases(app: Sphinx, name: str, obj: Any, options: Any, bases: list[type]) -> None:
    """A private base class (``_Open``) is shown as the public classes it derives from."""
    shown = [base.__bases__ if base.__name__.startswith("_") else (base,) for base in bases]
    bases[:] = [public for each in shown for public in each]


def setup(app: Sphinx) -> dict[str, Any]:
    _napoleon_except_attributes(app)
    app.connect("autodoc-process-signature", _readable_defaults)
    app.connect("autodoc-process-bases", _public_bases)
    app.add_directive("hcgraph-public-api", PublicApi)
    return {"parallel_read_safe": True}
