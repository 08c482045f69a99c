"""Where a triple store takes data: endpoint URL → Graph Store, query and update URLs.

A *preset* is one product's layout relative to ``--endpoint``; ``--gsp-path`` and friends
override one service. Credentials never go in the URL (logs and the push state would keep
them): use ``--auth-env``.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import httpx

from ..errors import PushError

__all__ = ["PRESETS", "Preset", "RemoteEndpoint", "resolve_endpoint"]


@dataclass(frozen=True)
class Preset:
    """The usual paths of one store product, relative to its endpoint URL (``""``: itself);
    ``authenticated``: ``(gsp, query, update)`` for a push with credentials; ``bulk``: the
    GSP service also takes a whole dataset through the bulk loader (:mod:`.protocols`)."""

    gsp: str
    query: str
    update: str
    content_type: str = "application/n-triples"
    authenticated: tuple[str, str, str] | None = None
    bulk: bool = False


PRESETS: dict[str, Preset] = {
    "oxigraph": Preset("store", "query", "update", bulk=True),
    "fuseki": Preset("data", "sparql", "update"),
    "graphdb": Preset("rdf-graphs/service", "", "statements"),
    "virtuoso": Preset(
        "sparql-graph-crud",
        "sparql",
        "sparql",
        "text/turtle",
        ("sparql-graph-crud-auth", "sparql-auth", "sparql-auth"),
    ),
    "neptune": Preset("sparql/gsp/", "sparql", "sparql"),
}


@dataclass(frozen=True)
class RemoteEndpoint:
    """The resolved URLs of one remote triple store: ``url`` as given, normalised (the push
    state's key); its GSP, query and update services; the GSP body's media type; and where
    the bulk loader takes many graphs at once (``None``: no such service)."""

    url: str
    gsp_url: str
    query_url: str
    update_url: str
    content_type: str = "application/n-triples"
    bulk_url: str | None = None


def resolve_endpoint(
    url: str,
    preset: str = "oxigraph",
    *,
    gsp_path: str | None = None,
    query_path: str | None = None,
    update_path: str | None = None,
    authenticated: bool = False,
) -> RemoteEndpoint:
    """Resolve ``url`` with a preset and optional path overrides.

    ``authenticated``: the push carries credentials; a preset with services of its own for
    those (Virtuoso's ``*-auth``) picks them. An explicit path always wins.

    Raises:
        PushError: the URL is not http(s), has no host, carries credentials, or the preset
            is unknown.
    """
    base = _check_url(url, "--endpoint")
    if "?" in base:
        raise PushError("--endpoint must not have a query string; use --gsp-path and friends")
    layout = PRESETS.get(preset)
    if layout is None:
        known = ", ".join(sorted(PRESETS))
        raise PushError(f"unknown endpoint preset {preset!r}; choose one of: {known}")

    defaults = (layout.gsp, layout.query, layout.update)
    if authenticated and layout.authenticated is not None:
        defaults = layout.authenticated
    overrides = {"gsp": gsp_path, "query": query_path, "update": update_path}
    gsp, query, update = (
        _join(base, default if path is None else path, f"--{service}-path")
        for (service, path), default in zip(overrides.items(), defaults, strict=True)
    )
    bulk = gsp if layout.bulk else None
    return RemoteEndpoint(base, gsp, query, update, layout.content_type, bulk)


def _check_url(url: str, option: str) -> str:
    try:
        parts = urlsplit(url.strip())
    except ValueError as exc:  # a bracket left open ("http://[::1"): no URL in the message
        raise PushError(f"{option} must be a valid http(s) URL: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise PushError(f"{option} must be an http:// or https:// URL with a host")
    if parts.username is not None or parts.password is not None:
        # Never echo the URL: it holds a secret.
        raise PushError(
            f"{option} must not contain credentials; put them in an environment variable "
            "and pass --auth-env VAR"
        )
    try:
        # a bad port (urllib), or what httpx cannot send: here, not as a traceback later
        parts.port  # noqa: B018 -- read for its ValueError
        httpx.URL(url.strip())
    except (ValueError, httpx.InvalidURL) as exc:
        raise PushError(f"{option} must be a valid http(s) URL: {exc}") from None
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme, parts.netloc.lower(), path, parts.query, ""))


def _join(base: str, path: str, option: str) -> str:
    if "://" in path:
        return _check_url(path, option) + ("/" if path.endswith("/") else "")
    if not path:
        return base
    joined = base + "/" + path.lstrip("/")
    _check_url(joined, option)  # a path httpx cannot send (a control character) fails here
    return joined
