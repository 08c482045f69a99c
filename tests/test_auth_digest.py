"""``--auth-env`` with ``Digest user:password`` gives HTTP Digest (Virtuoso's authenticated
services accept nothing else); the secret never shows."""

from __future__ import annotations

import httpx
import pytest

from hcgraph.errors import PushError
from hcgraph.push.auth import credentials_from_env


def test_digest_credentials() -> None:
    creds = credentials_from_env("V", {"V": "Digest alice:s3cret-pw"})
    assert creds.scheme == "digest"
    assert isinstance(creds.auth, httpx.DigestAuth)
    assert "s3cret" not in repr(creds) and "s3cret" not in str(creds)
    assert creds.user == "alice"  # what the push's refusal names (never the secret)
    assert creds.redact("oops s3cret-pw echoed") == "oops *** echoed"


def test_digest_answers_the_challenge() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        header = request.headers.get("Authorization", "")
        seen.append(header.split(" ")[0])
        if header.startswith("Digest ") and 'username="alice"' in header:
            return httpx.Response(201)
        return httpx.Response(
            401, headers={"WWW-Authenticate": 'Digest realm="r", nonce="n", qop="auth"'}
        )

    creds = credentials_from_env("V", {"V": "Digest alice:pw"})
    with httpx.Client(transport=httpx.MockTransport(handler), auth=creds.auth) as client:
        assert client.put("http://127.0.0.1:1/g", content=b"x").status_code == 201
    assert seen == ["", "Digest"]


@pytest.mark.parametrize("value", ["Digest ", "Digest nocolon", "Digest :pw"])
def test_bad_digest_value_is_refused(value: str) -> None:
    with pytest.raises(PushError, match="Digest user:password"):
        credentials_from_env("V", {"V": value})
