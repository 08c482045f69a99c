"""Credentials for a push, read from an environment variable (``--auth-env VAR``), never shown.

``user:password``: Basic or Digest, whichever the server's first ``401`` asks for (Digest
preferred), then that scheme at once; ``Bearer TOKEN`` (or no colon): a bearer token;
``Digest user:password``: Digest only. :meth:`Credentials.redact` scrubs the secret (and its
Base64 form) from printed text. Requests resent after a ``401`` are remembered
(:func:`answered_challenge`): a dropped connection then means refused credentials.
"""

from __future__ import annotations

import base64
import ipaddress
import os
import weakref
from collections.abc import Generator
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx

from ..errors import PushError, visible

__all__ = [
    "Credentials",
    "answered_challenge",
    "credentials_at_risk",
    "credentials_from_env",
    "is_loopback",
]

_MASK = "***"
_UNANSWERABLE = "the server's Digest challenge cannot be answered: "
#: Requests sent again with credentials in answer to a ``401`` (see answered_challenge).
_CHALLENGED: weakref.WeakSet[httpx.Request] = weakref.WeakSet()


def answered_challenge(request: httpx.Request) -> bool:
    """True when ``request`` went out (again) with credentials in answer to a ``401``
    challenge: the server was there and asked for them, so a connection dropped on it is
    the server's answer to those credentials, not a network failure."""
    return request in _CHALLENGED


@dataclass(frozen=True, repr=False)
class Credentials:
    """A user:password, Digest or Bearer credential. ``repr`` and ``str`` never show it."""

    scheme: str  # "password" (Basic or Digest, as the server asks), "bearer" or "digest"
    variable: str
    _header: str = field(compare=False)  # Authorization: Bearer, or Basic (password)
    _secrets: tuple[str, ...] = field(compare=False)
    _digest: tuple[str, str] | None = field(default=None, compare=False)

    def __repr__(self) -> str:
        return f"Credentials({self.scheme}, from ${self.variable})"

    __str__ = __repr__

    @property
    def auth(self) -> httpx.Auth:
        """A new httpx auth hook (give one to a client: it learns the server's scheme once):
        the ``Authorization`` header on every request (Bearer), Digest, or either (password)."""
        if self._digest is None:
            return _HeaderAuth(self._header)
        if self.scheme == "digest":
            return _Digest(*self._digest)
        return _AnyAuth(self._header, *self._digest)

    @property
    def user(self) -> str | None:
        """The user name of a user:password or Digest credential (not a secret), else None."""
        return self._digest[0] if self._digest else None

    def redact(self, text: str) -> str:
        """``text`` with every form of the secret replaced by ``***``."""
        for secret in self._secrets:
            if secret:
                text = text.replace(secret, _MASK)
        return text


class _HeaderAuth(httpx.Auth):
    def __init__(self, header: str) -> None:
        self._value = header

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = self._value
        yield request


class _Digest(httpx.DigestAuth):
    """httpx's Digest flow; a request it resends after a ``401`` joins :data:`_CHALLENGED`."""

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        flow = super().auth_flow(request)
        sent = next(flow)
        while True:
            response = yield sent
            try:
                sent = flow.send(response)
            except StopIteration:
                return
            except KeyError as exc:  # httpx lacks the algorithm (SHA-512-256): no hung worker
                lacking = f"httpx has no algorithm {visible(str(exc.args[0]) if exc.args else '')}"
                raise PushError(f"{_UNANSWERABLE}{lacking}") from None
            except NotImplementedError as exc:  # qop="auth-int"
                raise PushError(f"{_UNANSWERABLE}{visible(str(exc))}") from None
            if response.status_code == 401:
                _CHALLENGED.add(sent)


class _AnyAuth(httpx.Auth):
    """Basic or Digest, whichever the server's ``401`` challenge asks for (curl's
    ``--anyauth``). The scheme, once learned, is used at once on every later request."""

    requires_request_body = True  # a challenged request is sent again, body and all

    def __init__(self, basic: str, user: str, password: str) -> None:
        self._basic = basic  # the Basic header, sent once a challenge asks for Basic
        self._digest = _Digest(user, password)
        self._scheme: str | None = None  # learned from the first challenge

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        if self._scheme == "basic":
            request.headers["Authorization"] = self._basic
            yield request
            return
        if self._scheme == "digest":
            yield from self._digest.auth_flow(request)
            return
        response = yield request
        offered = _challenges(response) if response.status_code == 401 else set()
        if "digest" in offered:
            self._scheme = "digest"
            # Hand the challenge already received to httpx's Digest flow: its first
            # (unauthenticated) request is the one just answered, so it is not sent again.
            flow = self._digest.auth_flow(request)
            next(flow)
            try:
                answered = flow.send(response)
                while True:
                    answered = flow.send((yield answered))
            except StopIteration:
                return
        if "basic" in offered:
            self._scheme = "basic"
            request.headers["Authorization"] = self._basic
            _CHALLENGED.add(request)
            yield request


def _challenges(response: httpx.Response) -> set[str]:
    """The auth schemes a ``401`` answer offers, lower-cased (``{"basic", "digest"}``)."""
    schemes = set()
    for header in response.headers.get_list("www-authenticate"):
        # One header may hold several challenges: 'Basic realm="a", Digest realm="b", …'.
        for part in header.split(","):
            word = part.strip().split(" ", 1)[0].split("=", 1)
            if len(word) == 1 and word[0]:
                schemes.add(word[0].lower())
    return schemes


def credentials_from_env(variable: str, environ: dict[str, str] | None = None) -> Credentials:
    """Read credentials from the environment variable ``variable``.

    Raises:
        PushError: the variable is unset or empty (the message names the variable only).
    """
    env = os.environ if environ is None else environ
    value = env.get(variable, "").strip()
    if not value:
        raise PushError(f"--auth-env {variable}: the environment variable is not set or empty")
    word, _, rest = value.partition(" ")  # the scheme word, any case
    if word.lower() == "digest":
        user, sep, password = rest.strip().partition(":")
        if not sep or not user:
            raise PushError(f"--auth-env {variable}: digest credentials are 'Digest user:password'")
        return Credentials("digest", variable, "", _redacted(value, password), (user, password))
    if word.lower() == "bearer" or ":" not in value:
        token = rest.strip() if word.lower() == "bearer" else value
        if not token:
            raise PushError(f"--auth-env {variable}: empty bearer token")
        return Credentials("bearer", variable, f"Bearer {token}", _redacted(token))
    user, _, password = value.partition(":")
    token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    secrets = _redacted(value, password, token)
    return Credentials("password", variable, f"Basic {token}", secrets, (user, password))


def _redacted(*secrets: str) -> tuple[str, ...]:
    """The forms of a secret to scrub from printed text (two characters would scrub words)."""
    return tuple(s for s in secrets if len(s) >= 3)


def is_loopback(url: str) -> bool:
    """True if ``url``'s host is ``localhost`` or a loopback IP address (parsed, never
    prefix-matched: ``http://127.0.0.1.evil.example`` is remote)."""
    try:
        host = (urlsplit(url.strip()).hostname or "").rstrip(".").lower()
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:  # not a URL, or a host that is neither localhost nor an IP address
        return False


def credentials_at_risk(url: str, credentials: Credentials | None) -> bool:
    """True when credentials would go over plain ``http://`` to another machine."""
    return bool(credentials) and url.strip().lower().startswith("http://") and not is_loopback(url)
