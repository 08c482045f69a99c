"""What was pushed where: per endpoint, the content hash of each graph last pushed.

Kept as JSON in the store directory (``push-state.json``) so that it travels with the
store it describes. Only endpoint URLs (which never hold credentials, see
:mod:`.endpoints`), graph IRIs and SHA-256 hashes are written. A graph is recorded only
after the server acknowledged it with a 2xx answer, so an interrupted push never marks
unsent graphs as sent; the file is replaced atomically.

If the remote store is wiped or changed by someone else, the state cannot know: use
``--all`` (or ``--verify`` to find out).
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from .._io import write_atomic
from ..errors import OutputError, PushError

__all__ = ["STATE_FILE", "PushState"]

STATE_FILE = "push-state.json"
_FORMAT = "hcgraph-push-state/1"


class PushState:
    """Hashes of the graphs pushed to each endpoint, loaded from and saved to ``path``.

    ``path=None`` keeps the state in memory only (an in-memory store has nowhere to put it).
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._endpoints: dict[str, dict[str, Any]] = {}
        if path is not None and path.exists():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise PushError(
                    f"{path}: unreadable push state ({exc}); delete it to start over"
                ) from exc
            if not isinstance(data, dict) or data.get("format") != _FORMAT:
                raise PushError(f"{path}: not an hcgraph push state file")
            self._endpoints = dict(data.get("endpoints", {}))

    @classmethod
    def for_store(cls, directory: Path | None) -> PushState:
        """The state file of the store at ``directory`` (in memory for ``None``)."""
        return cls(directory / STATE_FILE if directory is not None else None)

    def graphs(self, endpoint: str) -> dict[str, str]:
        """Graph IRI → SHA-256 last pushed to ``endpoint``."""
        entry = self._endpoints.setdefault(endpoint, {"graphs": {}})
        graphs: dict[str, str] = entry.setdefault("graphs", {})
        return graphs

    def is_current(self, endpoint: str, iri: str, sha256: str) -> bool:
        """True when ``endpoint`` last received exactly this content for ``iri``."""
        return self.graphs(endpoint).get(iri) == sha256

    def record(self, endpoint: str, iri: str, sha256: str) -> None:
        """Note that ``endpoint`` acknowledged ``iri`` with content ``sha256``."""
        self.graphs(endpoint)[iri] = sha256

    def save(self, endpoint: str) -> None:
        """Stamp ``endpoint`` with the time and write the file atomically."""
        entry = self._endpoints.setdefault(endpoint, {"graphs": {}})
        entry["pushed_at"] = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()
        if self.path is None:
            return
        data = {"format": _FORMAT, "endpoints": self._endpoints}
        text = json.dumps(data, indent=1, sort_keys=True) + "\n"
        try:
            write_atomic(self.path, text.encode("utf-8"))
        except OutputError as exc:
            raise PushError(f"cannot save the push state: {exc}") from None
