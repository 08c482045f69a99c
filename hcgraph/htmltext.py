"""Untrusted text in HTML pages and pictures: what every page hcgraph writes shares.

Bidi controls shown, JSON safe in a ``<script>``, a CSP's hashes, for the maps, the audit page,
the trace pictures and the workbench. Light (no Jinja, no networkx): ``trace`` imports it.
"""

from __future__ import annotations

import base64
import hashlib
import re

__all__ = ["script_hashes", "script_safe", "visible_bidi", "with_script_hashes"]

#: Bidi controls (embeddings, overrides, isolates) that let text display as other text.
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")


def visible_bidi(text: str) -> str:
    """Untrusted display text with each bidi control shown as ``[U+202E]``, not obeyed
    (a U+202E would draw a headline reversed: spoofed text)."""
    return _BIDI.sub(lambda m: f"[U+{ord(m.group(0)):04X}]", text) if text else text


#: Characters escaped as ``\\uXXXX`` so JSON can sit inside an HTML ``<script>`` whatever its
#: texts hold (``</script>``, ``<!--``, line separators); they occur only inside JSON strings,
#: where the escape means the same.
_SCRIPT_UNSAFE = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                  ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))  # fmt: skip


def script_safe(text: str) -> str:
    """JSON text with ``<``, ``>``, ``&``, U+2028 and U+2029 as ``\\uXXXX`` escapes: safe
    inside an HTML ``<script>`` element."""
    for char, escape in _SCRIPT_UNSAFE:
        if char in text:
            text = text.replace(char, escape)
    return text


def script_hashes(html: str, tag: str = "script") -> str:
    """A CSP source list allowing exactly the page's inline ``<tag>`` elements (no attributes),
    by hash; ``'none'`` if it has none."""
    hashes = []
    for body in re.findall(f"<{tag}>(.*?)</{tag}>", html, re.DOTALL):
        digest = base64.b64encode(hashlib.sha256(body.encode("utf-8")).digest()).decode()
        hashes.append(f"'sha256-{digest}'")
    return " ".join(hashes) or "'none'"


def with_script_hashes(html: str, tag: str = "script") -> str:
    """``html`` with its CSP's ``__hcgraph_script_src__`` (``tag`` ``style``: ``style_src``)
    placeholder replaced by :func:`script_hashes` (the first one: the policy heads the page)."""
    return html.replace(f"__hcgraph_{tag}_src__", script_hashes(html, tag), 1)
