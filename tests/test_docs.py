"""The README and docs/ are tested: the quick start is the two promised commands, the
generated parts are current (cog), every command is documented and only real ones are, the
option tables name real options, links resolve, and the marked examples run with the output
they show (rules in ``tests/support/docblocks.py``)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from cogapp import Cog
from cogapp.errors import CogCheckFailed

from hcgraph.cli import COMMANDS, cli
from tests.conftest import ROOT, cli_env, free_port
from tests.support import docblocks

README_PATH = ROOT / "README.md"
README = README_PATH.read_text(encoding="utf-8")
PAGES = [README_PATH, *sorted((ROOT / "docs").glob("*.md"))]
ALL_TEXT = "\n".join(page.read_text(encoding="utf-8") for page in PAGES)
COG_START = "[[[" + "cog"  # split so that cog does not read this file's text as a marker


def _name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def test_quick_start_is_two_commands() -> None:
    quick = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", quick, re.S)
    assert blocks[0].strip() == "pip install -e . && hcgraph demo"
    assert blocks[1].strip() == (
        "./scripts/install-test-deps && pip install -e '.[test]' && python -m pytest"
    )
    ci = (ROOT / ".ci" / "run").read_text()
    assert "scripts/install-test-deps" in ci and "python3 -m pytest" in ci
    assert "pip install -q -e '.[test]'" in ci
    # The installer works as root and as a user: sudo only when not root.
    installer = (ROOT / "scripts" / "install-test-deps").read_text()
    assert 'if [ "$(id -u)" -eq 0 ]; then SUDO=(); else SUDO=(sudo); fi' in installer
    assert os.access(ROOT / "scripts" / "install-test-deps", os.X_OK)


def test_readme_is_short() -> None:
    """The README is the front page (the anchors: httpx ~5 kB, rdflib ~11 kB); the manual
    is in docs/."""
    assert len(README.encode()) <= 12_500
    for job in ("hcgraph query source-reuse", "output/map.html", "hcgraph push"):
        assert job in README
    for page in PAGES[1:]:
        assert f"docs/{page.name}" in README, f"the README does not link docs/{page.name}"


def test_cog_output_is_current(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The generated parts (command table, --help reference, module map) match the code;
    `cog -r -I . README.md docs/*.md` regenerates them."""
    generated = [p for p in PAGES if COG_START in p.read_text(encoding="utf-8")]
    assert {_name(p) for p in generated} >= {"README.md", "docs/commands.md"}
    monkeypatch.chdir(ROOT)
    try:
        Cog().callable_main(
            ["cog", "--check", "--diff", "-I", str(ROOT)] + [_name(p) for p in generated]
        )
    except CogCheckFailed:
        pytest.fail(
            "generated docs are stale; run `cog -r -I . README.md docs/*.md`\n"
            + capsys.readouterr().out
        )


def test_every_command_is_documented() -> None:
    commands = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    for name in COMMANDS:
        assert f"hcgraph {name}" in README, f"README does not mention `hcgraph {name}`"
        assert f"## `hcgraph {name}`" in commands


def test_docs_mention_only_real_commands() -> None:
    mentioned = set(re.findall(r"`hcgraph ([a-z]+)", ALL_TEXT))
    mentioned |= set(re.findall(r"^\$ hcgraph ([a-z]+)", ALL_TEXT, re.M))
    assert mentioned <= set(COMMANDS), mentioned - set(COMMANDS)


def _options(name: str) -> set[str]:
    command = cli.get_command(click.Context(cli), name)
    assert command is not None
    return {opt for param in command.params for opt in param.opts + param.secondary_opts}


def test_option_tables_name_real_options() -> None:
    """A table after ``<!-- options: COMMAND -->`` names only that command's options."""
    tables = 0
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in re.finditer(r"<!-- options: ([a-z]+) -->\n((?:\|.*\n)+)", text):
            tables += 1
            real = _options(match.group(1))
            for row in match.group(2).splitlines()[2:]:
                first = row.split("|")[1]
                named = set(re.findall(r"--[a-z][a-z-]*", first))
                assert named, f"{page.name}: no option in row {row!r}"
                assert named <= real, (
                    f"{page.name}: {sorted(named - real)} not options of {match.group(1)}"
                )
    assert tables >= 2


def test_vocabulary_table_names_declared_terms() -> None:
    from hcgraph.vocab import HC

    graph = (ROOT / "docs" / "graph.md").read_text(encoding="utf-8")
    table = graph.split("## Vocabulary", 1)[1].split("\n## ", 1)[0]
    used = set(re.findall(r"hc:([A-Za-z0-9]+)", table))
    assert used <= set(dir(HC)), used - set(dir(HC))
    assert len(used) > 30


def test_saved_query_table_lists_every_saved_query() -> None:
    from hcgraph.queries import saved_queries

    text = (ROOT / "docs" / "queries.md").read_text(encoding="utf-8")
    table = re.search(r"<!-- saved queries -->\n((?:\|.*\n)+)", text)
    assert table
    named = {row.split("|")[1].strip().strip("`") for row in table.group(1).splitlines()[2:]}
    assert named == set(saved_queries())


def _anchors(page: Path) -> set[str]:
    """GitHub's heading ids: lower case, punctuation dropped, spaces to hyphens."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_relative_links_resolve() -> None:
    """Links between the pages (and into the repository) point at files and headings
    that exist."""
    for page in PAGES:
        text = re.sub(r"<!--.*?-->", "", page.read_text(encoding="utf-8"), flags=re.S)
        for target, anchor in re.findall(r"\]\(([^)#\s]*)(?:#([^)\s]*))?\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            path = (page.parent / target) if target else page
            assert path.exists(), f"{_name(page)}: broken link {target}"
            if anchor and path.suffix == ".md":
                assert anchor in _anchors(path), f"{_name(page)}: no heading #{anchor} in {target}"


#: A docstring sending the reader to a part of a page: ``"Title" in docs/page.md`` or
#: ``docs/page.md ("Title")``.
_POINTERS = (
    re.compile(r'"([^"\n]+)"\s+in\s+(docs/[\w-]+\.md)'),
    re.compile(r'(docs/[\w-]+\.md)\s*\(\s*"([^"\n]+)"\s*\)'),
)


def test_docstring_pointers_name_a_part_of_their_page() -> None:
    """A part of a page a module names (``"The raw archive" in docs/crawling.md``) is there:
    a heading, a paragraph's bold lead-in or a paragraph that starts with it."""
    found = 0
    for path in sorted((ROOT / "hcgraph").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        pointers = list(_POINTERS[0].findall(text))
        pointers += [(title, page) for page, title in _POINTERS[1].findall(text)]
        for title, page in pointers:
            found += 1
            doc = (ROOT / page).read_text(encoding="utf-8")
            part = re.compile(rf"^(?:#+ |\*\*)?{re.escape(title)}", re.M)
            assert part.search(doc), f"{_name(path)}: {page} has no part {title!r}"
    assert found >= 5  # the patterns still find the pointers


def test_there_are_runnable_blocks() -> None:
    found = {_name(page): docblocks.blocks(page) for page in PAGES}
    assert {b.lang for bs in found.values() for b in bs} >= {"console", "bash", "python"}
    for page in ("README.md", "docs/crawling.md", "docs/queries.md", "docs/provenance.md"):
        assert found[page], f"{page} has no runnable block"


def test_console_steps_and_matching() -> None:
    """The block rules themselves, on a made-up block."""
    block = docblocks.Block(
        Path("x.md"), 1, "console", "demo",
        "$ hcgraph a \\\n    --b c\nline one\n...\nlast\n$ echo $?\n3\n",
    )  # fmt: skip
    steps = docblocks.steps(block)
    assert [s.command for s in steps] == ["hcgraph a --b c", "echo $?"]
    assert steps[0].expected is not None
    assert docblocks.matches(steps[0].expected, "line one  \nx\ny\nlast\n")
    assert not docblocks.matches(steps[0].expected, "line one\nlast but not least")
    assert docblocks.matches("took ... s", "took 1.2 s")


def test_documented_functions_survive_their_submodules() -> None:
    """`from hcgraph import export, check` (as the docs write it) gives the functions, even
    after `hcgraph.exporting` and `hcgraph.checking` the modules were imported."""
    code = (
        "import hcgraph.exporting, hcgraph.checking\n"
        "from hcgraph import check, export\n"
        "assert callable(export) and callable(check), (export, check)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=cli_env(), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr


# --- the runnable blocks ------------------------------------------------------------------


@pytest.fixture(scope="module")
def docs_env(
    tmp_path_factory: pytest.TempPathFactory, fresh_cli_forkserver: object
) -> dict[str, str]:
    """The environment the blocks run in: ``hcgraph`` is this checkout, at 100 columns. Each
    ``hcgraph`` a block runs is its own process, forked from the session's
    ``fresh_cli_forkserver`` (the CLI imported afresh in it, with the block's streams and
    environment) by a small client (``forkserver.CLIENT``) instead of an interpreter start."""
    from tests.support.forkserver import CLIENT, ForkServer

    bin_dir = tmp_path_factory.mktemp("bin")
    shim = bin_dir / "hcgraph"
    if isinstance(fresh_cli_forkserver, ForkServer):
        client = bin_dir / "hcgraph-client.py"
        client.write_text(CLIENT)
        sockets = " ".join(f'"{path}"' for path in fresh_cli_forkserver.sockets)
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -I -S "{client}" {sockets} -- "$@"\n')
    else:
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m hcgraph "$@"\n')
    shim.chmod(0o755)
    python = bin_dir / "python"
    python.symlink_to(sys.executable)
    env = cli_env()
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    env["COLUMNS"] = "100"
    env.pop("FORCE_COLOR", None)
    return env


def _scratch(directory: Path) -> Path:
    """A directory that looks like a clone, as far as the docs' examples go."""
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copytree(ROOT / "tests" / "fixtures", directory / "tests" / "fixtures")
    shutil.copytree(ROOT / "queries", directory / "queries")
    return directory


@pytest.fixture(scope="module")
def demo_output(tmp_path_factory: pytest.TempPathFactory, docs_env: dict[str, str]) -> Path:
    """The ``output/`` of one ``hcgraph demo`` run, copied for each page."""
    where = tmp_path_factory.mktemp("demo")
    hcgraph = shutil.which("hcgraph", path=docs_env["PATH"])
    assert hcgraph is not None
    done = subprocess.run(
        [hcgraph, "demo"], cwd=where, env=docs_env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return where / "output"


@pytest.mark.slow
@pytest.mark.parametrize("page", [p for p in PAGES if docblocks.blocks(p)], ids=_name)
def test_runnable_blocks(
    page: Path, tmp_path: Path, demo_output: Path, docs_env: dict[str, str]
) -> None:
    """Every ``<!-- test -->`` block of the page, in order, gives the output it shows."""
    found = docblocks.blocks(page)
    shared = _scratch(tmp_path / "page")
    shutil.copytree(demo_output, shared / "output")
    for i, block in enumerate(found):
        cwd = _scratch(tmp_path / f"fresh-{i}") if block.mode == "fresh" else shared
        if block.lang == "python":
            docblocks.check_python(block, cwd, docs_env)
        elif block.lang in {"console", "bash", "sh"}:
            docblocks.check_shell(block, cwd, docs_env, free_port())
        else:
            pytest.fail(f"{block.where}: cannot run a {block.lang!r} block")
