"""Issue 14, item 9: the plain-http credential warning parses the host (no prefix match)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hcgraph.cli import cli
from hcgraph.push.auth import credentials_at_risk, credentials_from_env, is_loopback


@pytest.mark.parametrize(
    ("url", "loopback"),
    [
        ("http://localhost:7878/", True),
        ("http://LOCALHOST./x", True),
        ("http://127.0.0.1:7878", True),
        ("http://127.9.9.9/", True),
        ("http://[::1]:7878/", True),
        ("http://localhost.evil.example/", False),
        ("http://127.0.0.1.evil.example/", False),
        ("http://localhost@evil.example/", False),
        ("http://[::2]/", False),
        ("http://10.0.0.1/", False),
        ("http://example.org/", False),
        ("not a url", False),
    ],
)
def test_is_loopback(url: str, loopback: bool) -> None:
    assert is_loopback(url) is loopback


def test_credentials_at_risk() -> None:
    creds = credentials_from_env("X", {"X": "alice:s3cret"})
    assert credentials_at_risk("http://localhost.evil.example/", creds)
    assert not credentials_at_risk("http://localhost:7878/", creds)
    assert not credentials_at_risk("https://evil.example/", creds)
    assert not credentials_at_risk("http://evil.example/", None)


@pytest.mark.parametrize(
    ("endpoint", "warned"),
    [("http://localhost.evil.example:9", True), ("http://127.0.0.1:9", False)],
)
def test_cli_warns_for_lookalike_host(
    tmp_path: Path, seed_path: Path, endpoint: str, warned: bool
) -> None:
    runner = CliRunner()
    store = tmp_path / "store"
    assert runner.invoke(cli, ["ingest", str(seed_path), "--store", str(store)]).exit_code == 0
    args = ["push", "--endpoint", endpoint, "--auth-env", "HC_AUTH", "--dry-run"]
    result: Any = runner.invoke(
        cli, [*args, "--store", str(store)], env={"HC_AUTH": "alice:s3cret"}
    )
    assert ("sending credentials over plain http://" in result.stderr) is warned


#: Per option: URLs urllib or httpx refuses, and a word of the reason each gives.
BAD_URLS = {
    "--endpoint": {
        "http://[::1": "Invalid IPv6 URL",
        "http://127.0.0.1:99999": "Port out of range 0-65535",
        "http://127.0.0.1:abc": "Port could not be cast",
        "http://127.0.0.1:9/\x01": "non-printable",
    },
    "--gsp-path": {
        "http://[::1": "Invalid IPv6 URL",
        "http://127.0.0.1:99999/store": "Port out of range",
        "store\x01": "non-printable",  # a relative path, joined to the endpoint
    },
    "--update-path": {"http://127.0.0.1:99999/update": "Port out of range"},
    "--query-path": {"http://[::1": "Invalid IPv6 URL"},
}


@pytest.mark.parametrize(
    ("option", "url", "why"),
    [(option, url, why) for option, urls in BAD_URLS.items() for url, why in urls.items()],
)
def test_bad_url_is_one_line_before_anything_is_written(
    tmp_path: Path, seed_path: Path, invoke: Any, option: str, url: str, why: str
) -> None:
    """A URL urllib or httpx refuses (bad IPv6 literal, port, control character) was a
    ValueError/OverflowError traceback, after the endpoint went into push-state.json."""
    store = tmp_path / "store"
    assert invoke("ingest", seed_path, "--store", store).exit_code == 0
    extra = [] if option == "--endpoint" else ["--endpoint", "http://127.0.0.1:9"]
    protocol = ["--protocol", "update"] if option == "--update-path" else []
    result = invoke("push", *extra, *protocol, option, url, "--store", store)
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"error: {option} must be a valid http(s) URL: "), lines[0]
    assert why in result.stderr
    assert not (store / "push-state.json").exists()
