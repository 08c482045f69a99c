"""What the CLI prints to a terminal, with a hostile story: no story byte drives the terminal.

Every command's human output runs in a real pseudo-terminal (``os.openpty``), so rich takes
it for a terminal and styles it. The story's headline, paragraphs, key facts, manifest
titles, publisher names, URLs and file names carry escape sequences (an OSC 8 hyperlink to
another site, SGR colours, an erase), DEL, NEL and other C1 controls, bidi overrides and
isolates, and a tag character. The output may hold rich's own colours (SGR) and nothing
else: each hostile text starts with a unique marker, and what follows the marker must be
the escaped form. Then the same commands with their output piped: whole lines (``grep``).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import signal
import struct
import subprocess
import sys
import termios
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SEED, cli_env
from tests.crawlserver import CrawlServer, Site, page, story
from tests.support.forkserver import drain_terminal
from tests.support.refuser import refusing_server

pytestmark = pytest.mark.slow

#: What may follow a marker: the payload's first bytes, escaped (``\x1b]8;;https://evil``).
ESCAPED = "\\x1b]8;;https://evil.example/"
ESCAPED_MD = "\\\\x1b\\]8;;https://evil.example/"  # the same in Markdown: \\x1b\]8;;
PAYLOAD = (
    "\x1b]8;;https://evil.example/\x1b\\click me\x1b]8;;\x1b\\ \x1b[31mred\x1b[0m \x07bell "
    "\x7fdel \x85nel \x9b2J \u202erlo \u2066lri \u200ertl \u061calm \U000e0041tag \r\x1b[2K end"
)
# The test's own oracle (not hcgraph's): C0 but tab and newline, DEL, C1, bidi controls and
# marks, tag characters, lone surrogates (from bytes that are not UTF-8).
RAW = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
    "\U000e0000-\U000e007f\ud800-\udfff]"
)
SGR = re.compile(r"\x1b\[[0-9;]*m")  # rich's own styling
# What rich itself writes to a terminal: CSI sequences (styling, and a progress bar's cursor
# moves and line erases), a carriage return before one. Stripped; nothing else is allowed.
OWN = re.compile(r"\r?\x1b\[[0-9;?]*[A-Za-z]")


def hostile(tag: str) -> str:
    return f"@@{tag}@@{PAYLOAD}"


def hostile_doc(seed: Path, slug: str = "hostile") -> dict[str, Any]:
    """The seed story with every text a person reads made hostile (markers name the field)."""
    doc = json.loads(seed.read_text())
    # A story URL cannot hold an ESC (not an IRI), but can hold bidi controls.
    doc["url"] = f"https://news.example.org/stories/2026-10-21/{slug}-\u202eevil\u2066/"
    doc["links"]["json"] = doc["url"] + "index.json"
    doc["headline"] = hostile("headline")
    for i, section in enumerate(doc["sections"]):
        section["heading"] = hostile(f"heading{i}")
        for j, para in enumerate(section["paragraphs"]):
            para["markdown"] = hostile(f"para{i}-{j}") + " " + para["markdown"]
    for i, fact in enumerate(doc["key_facts"]):
        fact["text"] = hostile(f"fact{i}")
    for i, manifest in enumerate(doc["manifests"]):
        manifest["title"] = hostile(f"title{i}")
        manifest["source_name"] = hostile(f"pub{i}")
    doc["manifests"][0]["source_url"] = "https://papers.example.org/\u202etxt.exe\u2066"
    doc["publishers"] = [hostile("declared-pub")]  # declared, not derived: an audit finding
    return doc


#: The session's ``fresh_cli_forkserver`` (None: an interpreter per command), set by ``forks``.
_FORKS: list[Any] = []


@pytest.fixture(scope="module", autouse=True)
def forks(fresh_cli_forkserver: Any) -> Iterator[Any]:
    """The commands run as real processes forked from a server that imported the libraries
    but not hcgraph's CLI: each makes its consoles for its own terminal or pipe."""
    _FORKS[:] = [fresh_cli_forkserver]
    yield fresh_cli_forkserver
    _FORKS.clear()


def run_pty(*args: object, cwd: Path) -> tuple[int, str]:
    """``python -m hcgraph ARGS`` with stdin, stdout and stderr on a pseudo-terminal."""
    master, slave = os.openpty()
    # wide, so a marker and what follows it are on one line
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 4000, 0, 0))
    env = cli_env()
    env.pop("NO_COLOR", None)
    env.pop("COLUMNS", None)
    env["TERM"] = "xterm-256color"
    proc: Any
    if _FORKS and _FORKS[0] is not None:
        proc = _FORKS[0].spawn(list(map(str, args)), env=env, cwd=cwd, fds=(slave,) * 3)
    else:
        proc = subprocess.Popen(
            [sys.executable, "-m", "hcgraph", *map(str, args)],
            stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=env, close_fds=True,
        )  # fmt: skip
    os.close(slave)
    output = drain_terminal(master)
    code = proc.wait(timeout=120)
    return code, output.decode("utf-8", "surrogateescape")


def assert_safe(output: str, *tags: str) -> None:
    """No raw control, bidi or tag character in ``output`` but rich's SGR styling; each
    ``tag``'s marker is there, followed by the escaped payload."""
    assert "\x1b[31mred" not in output and "\x1b[2K end" not in output  # the story's own CSI
    text = OWN.sub("", output.replace("\r\n", "\n"))
    raw = sorted({f"U+{ord(c):04X}" for c in RAW.findall(text)})
    assert not raw, f"raw characters reached the terminal: {raw}\n{text[:3000]}"
    for tag in tags:
        marker = f"@@{tag}@@"
        assert marker in text, f"{marker} not shown:\n{text[:3000]}"
        for piece in text.split(marker)[1:]:
            assert piece.startswith((ESCAPED, ESCAPED_MD)), f"{marker}: {piece[:80]!r}"


@pytest.fixture(scope="module")
def hostile_store(tmp_path_factory: pytest.TempPathFactory, forks: Any) -> dict[str, Any]:
    """A store holding the hostile story (ingested in a terminal), plus its ingest output."""
    work = tmp_path_factory.mktemp("hostile")
    doc = hostile_doc(SEED)
    (work / "story.json").write_text(json.dumps(doc))
    (work / "again.json").write_text(json.dumps(doc))  # the same url twice: a warning
    bad_name = work / "bad@@fname@@\x1b]8;;https:\x1b\\.json"
    bad_name.write_text(json.dumps({"schema": "hangingcontext.desk/1", "type": "story",
                                    "headline": hostile("badheadline")}))  # fmt: skip
    code, out = run_pty("ingest", "story.json", "again.json", bad_name.name, "--store", "s",
                        cwd=work)  # fmt: skip
    return {"dir": work, "doc": doc, "ingest": (code, out)}


def test_ingest_failures_and_warnings(hostile_store: dict[str, Any]) -> None:
    code, out = hostile_store["ingest"]
    assert code == 3 and "failed:" in out and "same url" in out
    assert "bad@@fname@@\\x1b]8;;https:\\x1b\\.json" in SGR.sub("", out)
    assert_safe(out)


@pytest.mark.parametrize(
    ("args", "tags"),
    [
        (["trace", "{url}"], ["headline", "para0-0", "fact0", "title0", "pub0"]),
        (["trace", "{url}#s1-p1"], ["headline", "para0-0", "title0", "pub0"]),
        (["trace", "1792439777014362933"], ["headline", "title0", "pub0"]),
        (["trace", "{url}", "--format", "md"], ["headline", "para0-0", "title0"]),
        (["audit"], ["declared-pub"]),
        (["audit", "--format", "md"], ["headline", "declared-pub"]),
        (["stats"], []),
        (["check"], []),
        (["query", "story-trail", "-p", "story={url}"], ["title0"]),
        (["query", "story-trail", "-p", "story={url}", "--format", "md"], ["title0"]),
        (["query", "source-reuse"], []),
        (["history", "{url}"], []),
        (["history", "{url}", "--format", "md"], []),
        (["trace", "{url}x"], []),  # an error message quoting the target
    ],
)
def test_command_output_in_a_terminal(
    hostile_store: dict[str, Any], args: list[str], tags: list[str]
) -> None:
    url = hostile_store["doc"]["url"]
    argv = [a.format(url=url) for a in args]
    code, out = run_pty(*argv, "--store", "s", cwd=hostile_store["dir"])
    assert code in (0, 1, 3), out
    assert_safe(out, *tags)


def test_history_and_crawl_in_a_terminal(crawl_server: CrawlServer, tmp_path: Path) -> None:
    """Two crawled versions: the history table and its changes, and crawl's own output."""
    site = Site(crawl_server)
    m = "1811111111111111111"
    manifests = [{"manifest_id": m, "source_name": hostile("cpub"), "title": hostile("ctitle")}]
    first = story("a", page("bad"), headline=hostile("v1"), manifests=manifests)
    doc = json.loads(first)
    doc["headline"] = hostile("v2")
    doc["sections"][0]["paragraphs"][0]["markdown"] = hostile("edit") + " text"
    site.add("bad", json.dumps({"schema": "hangingcontext.desk/1", "headline": PAYLOAD}).encode())
    args = ["--mirror", site.mirror, "--ignore-robots", "--store", "s", "--depth", "1"]
    for body in (first, json.dumps(doc).encode()):
        site.add("a", body)
        code, out = run_pty("crawl", page("a"), *args, cwd=tmp_path)
        assert code == 3 and "failed:" in out, out
        assert_safe(out)
    code, out = run_pty("history", page("a"), "--store", "s", cwd=tmp_path)
    assert code == 0 and "headline changed" in out and "paragraph edited" in out
    assert_safe(out, "edit")
    # Piped: every change on one line, whole (it was one word per line at 80 columns).
    piped = _piped(tmp_path, "history", page("a"), "--store", "s")
    edited = [line for line in piped.splitlines() if "paragraph edited s1-p1" in line]
    assert len(edited) == 1 and edited[0].rstrip().endswith("text")
    row = [line for line in piped.splitlines() if "headline changed" in line and "│" in line]
    assert row and "paragraph edited" in row[0]  # the summary cell unbroken


def _piped(cwd: Path, *args: object) -> str:
    """The command's stdout through a pipe (not a terminal), with a terminal-ish width set
    the way a narrow terminal would: it must not matter."""
    env = cli_env()
    env.pop("COLUMNS", None)
    if _FORKS and _FORKS[0] is not None:
        proc = _FORKS[0].run(list(map(str, args)), env=env, cwd=cwd, timeout=120)
    else:
        proc = subprocess.run(
            [sys.executable, "-m", "hcgraph", *map(str, args)],
            capture_output=True, text=True, cwd=cwd, env=env, timeout=120,
        )  # fmt: skip
    assert proc.returncode in (0, 3), proc.stderr
    return proc.stdout


def test_piped_trace_prints_whole_lines(tmp_path: Path) -> None:
    """``hcgraph trace URL#s1-p1 | grep TITLE`` finds the title, and the URL, whole."""
    from tests.conftest import SEED_URL

    _piped(tmp_path, "ingest", SEED, "--store", "s")
    doc = json.loads(SEED.read_text())
    out = _piped(tmp_path, "trace", SEED_URL + "#s1-p1", "--store", "s")
    cited = doc["sections"][0]["paragraphs"][0]["cites"][0]["manifest_id"]
    manifest = next(m for m in doc["manifests"] if m["manifest_id"] == cited)
    assert len(manifest["title"]) > 60
    assert [line for line in out.splitlines() if manifest["title"] in line]
    assert [line for line in out.splitlines() if manifest["source_url"] in line]
    paragraph = " ".join(doc["sections"][0]["paragraphs"][0]["markdown"].split())
    assert [line for line in out.splitlines() if paragraph in line]  # 600 characters
    # the same to a file (-o)
    _piped(tmp_path, "trace", SEED_URL + "#s1-p1", "--store", "s", "-o", "t.txt")
    assert paragraph in (tmp_path / "t.txt").read_text()
    # --width wraps at N columns
    narrow = _piped(tmp_path, "trace", SEED_URL + "#s1-p1", "--store", "s", "--width", "60")
    assert max(len(line) for line in narrow.splitlines()) <= 60
    assert not [line for line in narrow.splitlines() if manifest["title"] in line]


def test_piped_audit_and_query_print_whole_lines(tmp_path: Path) -> None:
    from tests.conftest import SEED_URL

    _piped(tmp_path, "ingest", SEED, "--store", "s")
    doc = json.loads(SEED.read_text())
    out = _piped(tmp_path, "query", "story-trail", "-p", f"story={SEED_URL}", "--store", "s")
    for manifest in doc["manifests"]:
        assert [line for line in out.splitlines() if manifest["title"] in line]
    out = _piped(tmp_path, "audit", "--store", "s")
    assert [line for line in out.splitlines() if "promise" in line]


def test_ingest_prints_each_failure_as_it_happens(tmp_path: Path) -> None:
    """A bad file among good ones: its failure line comes before the summary, and a run
    stopped after it (SIGINT, while it waits on the next input) has printed it already."""
    doc = json.loads(SEED.read_text())
    (tmp_path / "a-bad.json").write_text('{"schema": "hangingcontext.desk/1"}')
    names = ["a-bad.json"]
    for i in range(300):  # more than one batch (250): the first batch ends with the bad file
        doc["url"] = f"https://news.example.org/stories/2026-10-21/s{i}/"
        doc["id"] = str(1_880_000_000_000_000_000 + i)
        (tmp_path / f"s{i:03}.json").write_text(json.dumps(doc))
        names.append(f"s{i:03}.json")
    # A finished run: the failure line first, the summary last.
    proc = subprocess.run(
        [sys.executable, "-m", "hcgraph", "ingest", *names, "--store", "s1"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path,
        env=cli_env(), timeout=300,
    )  # fmt: skip
    lines = proc.stdout.splitlines()
    assert proc.returncode == 3
    fail = next(i for i, line in enumerate(lines) if line.startswith("failed: a-bad.json"))
    assert fail < next(i for i, line in enumerate(lines) if line.startswith("ingested 300"))
    # A run that never ends: the last input is a FIFO nobody writes to.
    os.mkfifo(tmp_path / "zz-fifo.json")
    proc2 = subprocess.Popen(
        [sys.executable, "-m", "hcgraph", "ingest", *names, "zz-fifo.json", "--store", "s2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        env=cli_env(),
    )  # fmt: skip
    assert proc2.stderr is not None
    first = proc2.stderr.readline()  # blocks until the failure is printed
    assert first.startswith("failed: a-bad.json"), first
    proc2.send_signal(signal.SIGINT)
    out, err = proc2.communicate(timeout=120)
    assert proc2.returncode == 130 and "interrupted" in err
    assert "ingested" not in out  # stopped: no summary, but the failure was shown


def test_push_failures_in_a_terminal(hostile_store: dict[str, Any]) -> None:
    """Graph names (the story URL holds an RLO) and the server's hostile answer, escaped."""
    with refusing_server(400, hostile("server").encode()) as url:
        code, out = run_pty("push", "--endpoint", url, "--all", "--retries", "0",
                            "--store", "s", cwd=hostile_store["dir"])  # fmt: skip
    assert code == 3 and "failed:" in out, out
    assert "hostile-\\u202eevil\\u2066" in out  # the story's graph, named
    assert_safe(out, "server")
