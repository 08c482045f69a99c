"""Credentials for a push, read from an environment variable and never shown.

``--auth-env VAR`` names a variable (the secret itself never appears on the command line,
where ``ps`` and shell history would see it). Its value is one of:

* ``user:password`` → HTTP Basic;
* ``Bearer TOKEN`` (or a value with no colon) → ``Authorization: Bearer TOKEN``;
* ``Digest user:password`` → HTTP Digest (Virtuoso's ``/sparql-auth`` and
  ``/sparql-graph-crud-auth`` take only Digest).

The secret is kept inside an :class:`httpx.Auth` object; :meth:`Credentials.redact` scrubs
it (and its Base64 form) from any text hcgraph prints, in case a server echoes it back.
"""

from __future__ import annotations

import base64
import ipaddress
import os
from collections.abc import Generator
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx

from ..errors import PushError

__all__ = ["Credentials", "credentials_at_risk", "credentials_from_env", "is_loopback"]

_MASK = "***"


@dataclass(frozen=True, repr=False)
class Credentials:
    """A Basic or Bearer credential. ``repr`` and ``str`` never show the secret."""

    scheme: str  # "basic", "bearer" or "digest"
    variable: str
    _header: str = field(compare=False)
    _secrets: tuple[str, ...] = field(compare=False)
    _digest: tuple[str, str] | None = field(default=None, compare=False)

    def __repr__(self) -> str:
        return f"Credentials({self.scheme}, from ${self.variable})"

    __str__ = __repr__

    @property
    def auth(self) -> httpx.Auth:
        """An httpx auth hook: the ``Authorization`` header on every request, or Digest."""
        if self._digest is not None:
            return httpx.DigestAuth(*self._digest)
        return _HeaderAuth(self._header)

    def redact(self, text: str) -> str:
        """``text`` with every form of the secret replaced by ``***``."""
        for secret in self._secrets:
            if secret:
                text = text.replace(secret, _MASK)
        return text

    def describe(self) -> str:
        """What to tell the user: the scheme and the variable, not the value."""
        return f"{self.scheme} credentials from ${self.variable}"


class _HeaderAuth(httpx.Auth):
    def __init__(self, header: str) -> None:
        self._value = header

    def __repr__(self) -> str:
        return "_HeaderAuth(***)"

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = self._value
        yield request


def credentials_from_env(variable: str, environ: dict[str, str] | None = None) -> Credentials:
    """Read credentials from the environment variable ``variable``.

    Raises:
        PushError: the variable is unset or empty (the message names the variable only).
    """
    env = os.environ if environ is None else environ
    value = env.get(variable, "").strip()
    if not value:
        raise PushError(f"--auth-env {variable}: the environment variable is not set or empty")
    if value.lower() == "digest" or value[:7].lower() == "digest ":
        user, sep, password = value[7:].strip().partition(":")
        if not sep or not user:
            raise PushError(f"--auth-env {variable}: digest credentials are 'Digest user:password'")
        secrets = tuple(s for s in (value, password) if len(s) >= 3)
        return Credentials("digest", variable, "", secrets, (user, password))
    if value.lower() == "bearer" or value[:7].lower() == "bearer ":
        return _bearer(variable, value[6:].strip())
    if ":" not in value:
        return _bearer(variable, value)
    user, _, password = value.partition(":")
    token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    secrets = tuple(s for s in (value, password, token) if len(s) >= 3)
    return Credentials("basic", variable, f"Basic {token}", secrets)


def _bearer(variable: str, token: str) -> Credentials:
    if not token:
        raise PushError(f"--auth-env {variable}: empty bearer token")
    secrets = (token,) if len(token) >= 3 else ()
    return Credentials("bearer", variable, f"Bearer {token}", secrets)


def is_loopback(url: str) -> bool:
    """True if ``url``'s host is this machine: ``localhost`` or a loopback IP address.

    The host is parsed, never prefix-matched: ``http://localhost.evil.example`` and
    ``http://127.0.0.1.evil.example`` are remote; ``http://127.0.0.2`` and ``http://[::1]``
    are loopback.
    """
    try:
        host = urlsplit(url.strip()).hostname
    except ValueError:
        return False
    if not host:
        return False
    host = host.rstrip(".").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def credentials_at_risk(url: str, credentials: Credentials | None) -> bool:
    """True when credentials would go over plain ``http://`` to another machine."""
    return bool(credentials) and url.strip().lower().startswith("http://") and not is_loopback(url)
