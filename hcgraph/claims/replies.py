"""Archived manifest replies into the store: one reply graph per manifest, kept current.

:func:`load_replies` reads the newest answer per manifest from the manifest archive and
replaces a reply graph only when that answer changed, so running it again writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ManifestError, ReplyShapeError
from ..provenance._graph import claim_id, manifest_id, rows
from ..store import Store
from ..vocab import HC, REPLY_GRAPHS
from .fetching import ArchivedReply, archived_replies, manifest_archive
from .graphing import reply_graph, reply_ntriples
from .reply import ManifestReply, parse_reply

__all__ = ["LoadReport", "ReplyState", "load_replies", "reply_states"]


@dataclass
class LoadReport:
    """What :func:`load_replies` did: manifest ids whose reply graph it wrote, left as they
    were, and replies it could not read (id, JSON path, reason)."""

    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    bad_shape: list[tuple[str, str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class ReplyState:
    """What the store holds about one manifest's reply: its status, the SHA-256 of the
    reply read (``None`` for a 404) and each claim's text (``None``: listed without text)."""

    status: str
    sha256: str | None
    claims: dict[str, str | None]
    fetch: str = ""  # the IRI of the fetch that got this answer


def _read(answer: ArchivedReply) -> tuple[ManifestReply | None, tuple[str, str] | None]:
    """The reply an archived answer holds, or why it could not be read (JSON path, reason)."""
    if answer.body is None:
        return None, None
    try:
        return parse_reply(answer.body, answer.record.fetch_url, answer.manifest_id), None
    except ReplyShapeError as exc:
        return None, (exc.json_path, exc.reason)


def load_replies(store: Store, archive_of: Path | None = None) -> LoadReport:
    """Bring every manifest's reply graph up to date with the manifest archive (the store's
    own, or that of the store directory ``archive_of``: a rebuild's staging store reads the
    archive of the store it replaces).

    Raises:
        ManifestError: the store is in memory (it has no archive).
    """
    where = archive_of or store.directory
    if where is None:
        raise ManifestError("manifest replies need an on-disk store (--store DIR)")
    report = LoadReport()
    held = {mid: state.sha256 or state.status for mid, state in reply_states(store).items()}
    changed: dict[str, str] = {}
    with manifest_archive(where) as archive:
        answers = archived_replies(archive)
    for mid, answer in sorted(answers.items()):
        reply, problem = _read(answer)
        if problem is not None:
            report.bad_shape.append((mid, *problem))
        if held.get(mid) == (answer.sha256 or "not-found"):
            report.unchanged.append(mid)
            continue
        changed[reply_graph(mid)] = reply_ntriples(answer, reply, problem)
        report.written.append(mid)
    for start in range(0, len(changed), 500):
        store.replace_graphs(dict(list(changed.items())[start : start + 500]))
    return report


_STATES = f"""
SELECT ?g ?m ?status ?fetch ?sha ?claim ?text WHERE {{ GRAPH ?g {{
  ?m <{HC.replyStatus}> ?status . ?fetch a <{HC.ManifestFetch}> .
  OPTIONAL {{ ?reply <{HC.sha256}> ?sha }}
  OPTIONAL {{ ?claim prov:wasQuotedFrom ?reply . OPTIONAL {{ ?claim prov:value ?text }} }}
}} FILTER STRSTARTS(STR(?g), "{REPLY_GRAPHS}") }}
"""


def reply_states(store: Store) -> dict[str, ReplyState]:
    """Manifest id → what its reply graph holds (only manifests with a reply graph)."""
    found: dict[str, ReplyState] = {}
    for _, m, status, fetch, sha, claim, text in rows(store, _STATES):
        mid = manifest_id(m or "")
        if mid not in found:
            found[mid] = ReplyState(status or "", sha, {}, fetch or "")
        if claim is not None:
            found[mid].claims[claim_id(claim)] = text
    return found
