"""The SPARQL workbench of ``hcgraph serve``: YASGUI at ``/``, querying this server only.

The page, the vendored YASGUI build (npm ``@zazuko/yasgui``, MIT) and a script pointing it at
``/query`` with the saved queries as examples. No request leaves the server: the script turns
off YASGUI's outside calls and the page's ``CSP`` makes the browser refuse any missed.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .errors import ServeError
from .htmltext import script_safe
from .queries import SavedQuery, saved_queries

__all__ = [
    "CSP",
    "WORKBENCH_DIR",
    "YASGUI_SHA256",
    "YASGUI_VERSION",
    "page_html",
    "script_json",
    "script_safe",
    "workbench_files",
]

WORKBENCH_DIR = Path(__file__).resolve().parent / "data" / "workbench"
YASGUI_VERSION = "4.6.2"
# The vendored files, byte-identical to the npm package (README.md beside them).
YASGUI_SHA256 = {
    "yasgui.min.js": "55034eaac74c55f55fbd1eeed008ae38a79053651cbed2b453f1fcfd895a4b75",
    "yasgui.min.css": "085b94556b97f9928981bdedb6848fd11ad4d8d950e821f0d698c58ca538fc55",
}
_SOURCE_MAP = re.compile(rb"\n//# sourceMappingURL=\S*\s*\Z")
# Yasr's parser rewrites ``{{name}}`` in every literal of an answer into the row's ``name``
# value (or drops the braces): a story's text must show as it is, so the four calls that
# pass that hook pass the identity instead (not nothing: the XML parser calls it
# unconditionally); the build is served as shipped otherwise.
_MUSTACHE = b",applyMustacheToLiterals)"
_IDENTITY = b",e=>e)"

CSP = "; ".join(
    [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",  # YASGUI and CodeMirror set style attributes
        "img-src 'self' data:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "form-action 'self'",
        "base-uri 'none'",
    ]
)

_ASSETS = {
    "yasgui.min.js": "text/javascript; charset=utf-8",
    "yasgui.min.css": "text/css; charset=utf-8",
    "workbench.js": "text/javascript; charset=utf-8",
    "workbench.css": "text/css; charset=utf-8",
    "LICENSE-yasgui.txt": "text/plain; charset=utf-8",
}


def script_json(value: Any) -> str:
    """``value`` as JSON safe inside an HTML ``<script>`` element
    (:func:`~hcgraph.htmltext.script_safe`)."""
    return script_safe(json.dumps(value, ensure_ascii=False))


def page_html(queries: Mapping[str, SavedQuery] | None = None) -> str:
    """The workbench page, with ``queries`` (default: the saved queries) as its examples."""
    template = (WORKBENCH_DIR / "index.html").read_text(encoding="utf-8")
    shown = saved_queries() if queries is None else queries
    examples = [
        {
            "name": name,
            "title": q.title,
            "question": q.question,
            "text": q.text,
            "params": [asdict(p) for p in q.params],
        }
        for name, q in sorted(shown.items())
    ]
    return (
        template.replace("@CSP@", CSP)
        .replace("@VERSION@", YASGUI_VERSION)
        .replace("@QUERIES@", script_json(examples))
    )


def workbench_files(
    queries: Mapping[str, SavedQuery] | None = None,
) -> dict[str, tuple[str, bytes]]:
    """The workbench's files for ``Endpoint(static=...)``: path -> (media type, bytes); the
    page at ``/`` and ``/index.html``, the rest at ``/workbench/<name>``."""
    page = page_html(queries).encode("utf-8")
    files = {
        "/": ("text/html; charset=utf-8", page),
        "/index.html": ("text/html; charset=utf-8", page),
    }
    for name, media in _ASSETS.items():
        data = (WORKBENCH_DIR / name).read_bytes()
        if name in YASGUI_SHA256:
            if hashlib.sha256(data).hexdigest() != YASGUI_SHA256[name]:
                raise ServeError(
                    f"{WORKBENCH_DIR / name}: not the vendored YASGUI file (reinstall hcgraph)"
                )
            data = _SOURCE_MAP.sub(b"\n", data)  # no request for a map that is not there
            data = data.replace(_MUSTACHE, _IDENTITY)  # literals shown as they are
        files[f"/workbench/{name}"] = (media, data)
    return files
