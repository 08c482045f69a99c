"""Where a stored story came from: crawled from its own URL, or read from a local file.

The pipeline refuses a local file that would replace a crawled story unless ``--replace``.
"""

from __future__ import annotations

import pyoxigraph as ox

from .iris import mint
from .store import Store
from .vocab import HC

__all__ = ["crawled_from"]

_SOURCE = ox.NamedNode(str(HC.sourceLocation))


def crawled_from(store: Store, story_url: str) -> str | None:
    """The http(s) URL the stored version of ``story_url`` was crawled from, or None (absent,
    or read from a local file)."""
    sha = store.raw_sha256(story_url)
    if sha is None:
        return None
    graph = ox.NamedNode(story_url)
    for quad in store.quads(mint("ingest", sha), _SOURCE, None, graph):
        source = quad.object
        if isinstance(source, ox.Literal) and source.value.startswith(("http://", "https://")):
            return source.value
    return None
