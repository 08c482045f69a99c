"""The workbench's files (hcgraph.workbench): what `hcgraph serve` puts at / and /workbench/."""

from __future__ import annotations

import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import httpx
import pytest

from hcgraph import Endpoint, Store
from hcgraph.queries import parse_query_text, saved_queries
from hcgraph.workbench import (
    CSP,
    WORKBENCH_DIR,
    YASGUI_SHA256,
    YASGUI_VERSION,
    page_html,
    script_json,
    workbench_files,
)


class _Blocks(HTMLParser):
    """The page's elements as an HTML parser reads them: script blocks, src/href URLs."""

    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self.urls: list[str] = []
        self.metas: list[dict[str, str | None]] = []
        self._open: dict[str, str | None] | None = None
        self._text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        for key in ("src", "href"):
            if found.get(key):
                self.urls.append(str(found[key]))
        if tag == "meta":
            self.metas.append(found)
        if tag == "script":
            self._open, self._text = found, ""

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self._text += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._open is not None:
            self.scripts.append((self._open, self._text))
            self._open = None


def _parse(html: str) -> _Blocks:
    blocks = _Blocks()
    blocks.feed(html)
    blocks.close()
    return blocks


def _examples(html: str) -> list[dict[str, Any]]:
    blocks = _parse(html)
    data = [text for attrs, text in blocks.scripts if attrs.get("id") == "hc-queries"]
    assert len(data) == 1
    examples = json.loads(data[0])
    assert isinstance(examples, list)
    return examples


def test_page_offers_every_saved_query_with_its_description() -> None:
    files = workbench_files()
    media, page = files["/"]
    assert media.startswith("text/html")
    examples = {e["name"]: e for e in _examples(page.decode())}
    queries = saved_queries()
    assert set(examples) == set(queries)
    for name, query in queries.items():
        assert examples[name]["title"] == query.title and query.title
        assert examples[name]["question"] == query.question
        assert examples[name]["text"] == query.text
        assert [p["name"] for p in examples[name]["params"]] == [p.name for p in query.params]
    assert "publisher-reach" in examples


def test_page_loads_only_files_the_server_serves() -> None:
    """Every URL the page names is relative and in the static mapping (or data:)."""
    files = workbench_files()
    blocks = _parse(files["/"][1].decode())
    assert blocks.urls
    for url in blocks.urls:
        if url.startswith("data:"):
            continue
        assert not re.match(r"^[a-z]+:|^//", url), url
        assert "/" + url in files, url
    assert files["/workbench/yasgui.min.js"][0].startswith("text/javascript")
    assert files["/workbench/yasgui.min.css"][0].startswith("text/css")
    assert "MIT License" in files["/workbench/LICENSE-yasgui.txt"][1].decode()
    served = files["/workbench/yasgui.min.js"][1]
    vendored = (WORKBENCH_DIR / "yasgui.min.js").read_bytes()
    assert b"sourceMappingURL" in vendored[-200:] and b"sourceMappingURL" not in served[-200:]
    # Served as shipped but for the map comment and the four calls of Yasr's ``{{name}}`` hook.
    # The identity goes in its place: Yasr's XML parser calls the hook unconditionally.
    hook = b",applyMustacheToLiterals)"
    assert vendored.count(hook) == 4 and hook not in served
    assert vendored.replace(hook, b",e=>e)").startswith(served.rstrip())
    assert files["/workbench/yasgui.min.css"][1] == (WORKBENCH_DIR / "yasgui.min.css").read_bytes()


def test_vendored_yasgui_is_the_npm_build() -> None:
    for name, digest in YASGUI_SHA256.items():
        assert hashlib.sha256((WORKBENCH_DIR / name).read_bytes()).hexdigest() == digest
    readme = (WORKBENCH_DIR / "README.md").read_text()
    assert all(d in readme for d in YASGUI_SHA256.values()) and YASGUI_VERSION in readme


def test_page_carries_a_content_security_policy() -> None:
    blocks = _parse(page_html())
    policies = [
        m["content"] for m in blocks.metas if m.get("http-equiv") == "Content-Security-Policy"
    ]
    assert policies == [CSP]
    directives = dict(d.strip().split(" ", 1) for d in CSP.split(";"))
    assert directives["default-src"] == "'none'"
    assert directives["connect-src"] == "'self'"
    assert directives["script-src"] == "'self'"  # the inline JSON block is data, not a script


def test_query_text_cannot_break_out_of_the_json_block() -> None:
    hostile = (
        "# title: </script><script>alert(1)</script> & <!-- x\n"
        "# question: ends </SCRIPT > the block? <!--<script>\n"
        "SELECT * { ?s ?p '</script><img src=x onerror=alert(1)>' } # ]]> @CSP@ \u2028\n"
    )
    query = parse_query_text(hostile, name="evil</script>")
    html = page_html({"evil</script>": query})
    assert "</script><script>" not in html.split('id="hc-queries">', 1)[1].split("</script>", 1)[0]
    blocks = _parse(html)
    # Still exactly the three script elements of the template: JSON, YASGUI, the workbench.
    assert [a.get("id") or a.get("src") for a, _ in blocks.scripts] == [
        "hc-queries", "workbench/yasgui.min.js", "workbench/workbench.js"
    ]  # fmt: skip
    (example,) = _examples(html)
    assert example["name"] == "evil</script>"
    assert example["text"] == hostile
    assert example["title"] == query.title


def test_script_json_round_trips() -> None:
    value = {"a": "</script><!-- & > \u2028 é", "b": [1, None, True]}
    text = script_json(value)
    assert not set("<>&") & set(text)
    assert json.loads(text) == value


@pytest.mark.slow  # server processes
def test_the_server_serves_the_workbench(tmp_path: Path) -> None:
    """The ~1 MB of workbench files are served whole, with their media type, on new
    connections."""
    store_dir = tmp_path / "store"
    with Store(store_dir):
        pass
    files = workbench_files()
    with Endpoint(store_dir, port=0, workers=1, static=files) as ep:
        base = ep.query_url.rsplit("/", 1)[0]
        with httpx.Client(trust_env=False, timeout=30) as client:
            for _ in range(8):  # new connections
                got = client.get(f"{base}/workbench/yasgui.min.js", headers={"Connection": "close"})
                assert got.status_code == 200
                assert got.content == files["/workbench/yasgui.min.js"][1]
                assert got.headers["content-type"] == files["/workbench/yasgui.min.js"][0]
