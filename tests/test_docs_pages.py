"""Docs that run: every example of the pages under docs/ and of the README.

One convention for every page (docs/languages/lars.md has its own, tests/lars/test_docs.py):

- a fenced block whose info string has ``title=NAME`` (```` ```dotr title=fire.dotr ````)
  is a file; it is written as NAME for every later command of its page (a later block
  with the same title replaces it);
- a ```` ```sh ```` block holds one ``chronolog ...`` command, or several, one per line,
  that build on each other (a file one writes, the next reads); they are run in turn in a
  fresh folder holding the page's files so far (and ``examples``, the repository's
  examples), through ``chronolog.cli.main`` in this process; a ``run`` must use
  ``--runner inprocess``; every command but the last must succeed;
- the ```` ```output ```` block right after it is the commands' exact standard output,
  and an optional ```` ```stderr ```` block after that its exact standard error (then the
  command's exit status is that of ``sh exit=N``, 0 unless given).

Other blocks (``text``, ``console``, indented code) are not run. ``CHRONOLOG_UPDATE_DOCS=1``
rewrites the output and stderr blocks from what the commands print (review the diff).
"""
from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from chronolog.cli import main

ROOT = Path(__file__).resolve().parents[1]
OWN_TEST = {ROOT / "docs" / "languages" / "lars.md"}  # tests/lars/test_docs.py runs its examples
PAGES = sorted(p for p in (ROOT / "docs").rglob("*.md") if p not in OWN_TEST) + [ROOT / "README.md"]

FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.M | re.S)


@dataclass
class Block:
    lang: str
    attrs: dict[str, str]
    body: str
    start: int  # offsets of the body in the page
    end: int


@dataclass
class Example:
    page: Path
    line: int
    command: str
    exit: int
    files: dict[str, str]
    output: Block
    index: int  # the page's n-th sh block
    stderr: Block | None = None
    where: str = field(init=False)

    def __post_init__(self) -> None:
        self.where = f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(text: str) -> list[Block]:
    found = []
    for m in FENCE.finditer(text):
        info = m.group(1).split()
        lang = info[0] if info else ""
        attrs = dict(item.partition("=")[::2] for item in info[1:])
        found.append(Block(lang, attrs, m.group(2), m.start(2), m.end(2)))
    return found


def examples(page: Path) -> list[Example]:
    text = page.read_text(encoding="utf-8")
    found: list[Example] = []
    files: dict[str, str] = {}
    items = blocks(text)
    for n, block in enumerate(items):
        if "title" in block.attrs:
            files[block.attrs["title"]] = block.body
        if block.lang != "sh":
            continue
        line = text.count("\n", 0, block.start)
        output = items[n + 1] if n + 1 < len(items) else None
        if output is None or output.lang != "output":
            raise AssertionError(f"{page.relative_to(ROOT)}:{line}: a sh block needs an output block right after it")
        stderr = items[n + 2] if n + 2 < len(items) and items[n + 2].lang == "stderr" else None
        found.append(Example(page, line, block.body.strip(), int(block.attrs.get("exit", "0")), dict(files),
                             output, len(found), stderr))
    return found


EXAMPLES = [e for page in PAGES for e in examples(page)]


def run(example: Example, folder: Path) -> tuple[int, str, str]:
    """The command's exit status, standard output and standard error."""
    for name, body in example.files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(body, encoding="utf-8")
    (folder / "examples").symlink_to(ROOT / "examples")
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="")
    err = io.StringIO()
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        for command in example.command.splitlines():
            argv = shlex.split(command)
            assert argv[0] == "chronolog", f"{example.where}: a sh block holds chronolog commands"
            if argv[1] == "run":
                assert "--runner" in argv and argv[argv.index("--runner") + 1] == "inprocess", \
                    f"{example.where}: examples run in-process (--runner inprocess)"
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                status = main(argv[1:])
            out.flush()
            if status != 0:
                break
    finally:
        os.chdir(cwd)
    return status, out.buffer.getvalue().decode("utf-8"), err.getvalue()  # type: ignore[attr-defined]


def test_every_page_is_found() -> None:
    names = {str(p.relative_to(ROOT)) for p in PAGES}
    assert {"README.md", "docs/architecture.md", "docs/cli.md", "docs/formats.md", "docs/languages/dotr.md",
            "docs/spark.md"} <= names
    for page in ("docs/architecture.md", "docs/cli.md", "docs/formats.md", "docs/languages/dotr.md",
                 "README.md"):
        assert any(e.page == ROOT / page for e in EXAMPLES), f"{page} has no example that runs"


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.where for e in EXAMPLES])
def test_example(example: Example, tmp_path: Path) -> None:
    status, stdout, stderr = run(example, tmp_path)
    if os.environ.get("CHRONOLOG_UPDATE_DOCS"):
        assert status == example.exit, f"{example.where}: exit status {status}: {stderr}"
        _update(example, stdout, stderr)
        return
    assert (status, stdout) == (example.exit, example.output.body), f"{example.where}: {stderr}"
    if example.stderr is not None:
        assert stderr == example.stderr.body, example.where


def _update(example: Example, stdout: str, stderr: str) -> None:
    """Rewrite the example's output (and stderr) blocks in its page."""
    text = example.page.read_text(encoding="utf-8")
    items = blocks(text)
    n = [i for i, b in enumerate(items) if b.lang == "sh"][example.index]
    replace = [(items[n + 1], stdout)] + ([(items[n + 2], stderr)] if example.stderr is not None else [])
    for target, new in sorted(replace, key=lambda r: -r[0].start):
        text = text[:target.start] + new + text[target.end:]
    example.page.write_text(text, encoding="utf-8")
