"""Resume after SIGKILL: kill a real ``hcgraph crawl`` process mid-crawl, run the same
command again, and compare with an uninterrupted crawl of the same site."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from hcsample.corpus import DEFAULT_BASE_URL, generate_corpus
from tests.conftest import cli_env
from tests.crawlserver import CrawlServer, quads_of

pytestmark = pytest.mark.slow  # real crawl processes, killed and restarted


def test_sigkill_then_rerun_equals_uninterrupted(
    crawl_server: CrawlServer, tmp_path: Path, run_cli: Any
) -> None:
    corpus = generate_corpus(60, seed=21)
    prefix = crawl_server.prefix("resume")
    # A little latency per response, so the crawl is still running when it is killed.
    crawl_server.mount(prefix, corpus.site_files(), delay=0.04)
    mirror = f"{DEFAULT_BASE_URL}={crawl_server.base}{prefix}"
    seeds = [str(corpus.stories[0]["url"]), str(corpus.stories[1]["url"])]

    def command(store: Path) -> list[str]:
        return [
            sys.executable, "-m", "hcgraph", "crawl", *seeds, "--depth", "20",
            "--mirror", mirror, "--ignore-robots", "--concurrency", "2", "--retries", "0",
            "--store", str(store),
        ]  # fmt: skip

    def json_hits() -> list[str]:
        return [h.path for h in crawl_server.hits_for(lambda p: p.startswith(prefix + "/"))]

    start = len(json_hits())
    store = tmp_path / "killed"
    proc = subprocess.Popen(
        command(store), env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 120
    while len(json_hits()) - start < 15 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL

    db = sqlite3.connect(store / "crawl" / "frontier.sqlite")
    states = dict(db.execute("SELECT state, COUNT(*) FROM urls GROUP BY state").fetchall())
    kept = {u for (u,) in db.execute("SELECT url FROM urls WHERE state IN ('done', 'fetched')")}
    status = db.execute("SELECT value FROM run WHERE key = 'status'").fetchone()[0]
    db.close()
    assert status == "running" and states.get("queued", 0) > 0, states  # killed mid-crawl
    assert kept, states

    again = run_cli(*command(store)[3:], timeout=180)  # the reruns: forked (run_cli)
    assert again.returncode in (0, 3), again.stderr
    assert "(resumed)" in again.stdout
    hits_killed_and_resumed = Counter(json_hits()[start:])

    whole = run_cli(*command(tmp_path / "whole")[3:], timeout=180)
    assert whole.returncode == again.returncode, whole.stderr
    assert quads_of(store) == quads_of(tmp_path / "whole")

    # nothing fetched before the kill (stored, or archived awaiting processing) was fetched again
    for url in kept:
        path = prefix + url.split(DEFAULT_BASE_URL, 1)[1]
        assert hits_killed_and_resumed[path] == 1, url


def test_sigterm_stops_cleanly_and_the_same_command_resumes(
    crawl_server: CrawlServer, tmp_path: Path, run_cli: Any
) -> None:
    corpus = generate_corpus(30, seed=22)
    prefix = crawl_server.prefix("sigterm")
    crawl_server.mount(prefix, corpus.site_files(), delay=0.05)
    mirror = f"{DEFAULT_BASE_URL}={crawl_server.base}{prefix}"
    seeds = [str(s["url"]) for s in corpus.stories]
    args = [
        sys.executable, "-m", "hcgraph", "crawl", *seeds, "--depth", "0", "--mirror", mirror,
        "--ignore-robots", "--concurrency", "1", "--store", str(tmp_path),
    ]  # fmt: skip
    start = len(crawl_server.hits_for(lambda p: p.startswith(prefix)))
    proc = subprocess.Popen(args, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if len(crawl_server.hits_for(lambda p: p.startswith(prefix))) - start >= 5:
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert b"run the same command again to resume" in err
    assert b"not fetched yet (resume)" in out and b"--max-stories" not in out
    report = json.loads((tmp_path / "crawl-report.json").read_text())
    assert report["status"] == "interrupted" and 0 < report["counts"]["not_fetched"] < 30
    db = sqlite3.connect(tmp_path / "crawl" / "frontier.sqlite")
    kept = {u for (u,) in db.execute("SELECT url FROM urls WHERE state IN ('done', 'fetched')")}
    db.close()
    assert kept

    again = run_cli(*args[3:], timeout=120)  # the rerun: forked (run_cli)
    assert again.returncode == 0, again.stderr
    assert json.loads((tmp_path / "crawl-report.json").read_text())["counts"]["stories"] == 30
    paths = Counter(h.path for h in crawl_server.hits_for(lambda p: p.startswith(prefix))[start:])
    for url in kept:  # what was fetched before SIGTERM was not fetched again
        assert paths[prefix + url.split(DEFAULT_BASE_URL, 1)[1]] == 1, url
