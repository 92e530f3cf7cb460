"""A run's record and its report: ``chronolog run ... --record DIR`` keeps what the live view
showed at the end of the run (``DIR/run.json``, the monitor's snapshot); ``chronolog report
DIR`` writes it as one self-contained HTML file (the live page's charts and output table,
its scripts, styles and data inlined: for CI artefacts and sharing, no server, no network).
"""
from __future__ import annotations

import json
import os
import re
from importlib import resources
from pathlib import Path

from chronolog.errors import ChronologError
from chronolog.monitor import RunMonitor

RECORD = "run.json"


def write_record(monitor: RunMonitor, folder: str) -> Path:
    """Keep the monitor's final state in ``folder`` (created if need be)."""
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    target = path / RECORD
    partial = path / f".{RECORD}.partial"
    partial.write_text(json.dumps(monitor.snapshot(), ensure_ascii=False), encoding="utf-8")
    os.replace(partial, target)
    return target


def write_report(folder: str, output: str | None = None) -> Path:
    """The HTML report of the run recorded in ``folder``; where it was written."""
    record = Path(folder) / RECORD
    if not record.is_file():
        raise ChronologError(f"{folder}: no run recorded there (expected {record}; record one with "
                             "chronolog run ... --record DIR)")
    try:
        state = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ChronologError(f"{record}: not a run record ({e})") from None
    target = Path(output) if output else Path(folder) / "report.html"
    target.write_text(_page(state), encoding="utf-8")
    return target


def _page(state: dict) -> str:
    static = resources.files("chronolog.ui") / "static"

    def text(name: str) -> str:
        return (static / name).read_text(encoding="utf-8")

    def script(code: str) -> str:
        return "<script>" + code.replace("</script", "<\\/script") + "</script>"

    page = text("index.html")
    page = re.sub(r'<link rel="stylesheet" href="/static/([\w.]+)">', lambda m: f"<style>{text(m.group(1))}</style>", page)
    data = json.dumps(state, ensure_ascii=False).replace("</", "<\\/")
    boot = f"const RUN = {data};\n$(\"filters\").addEventListener(\"input\", render);\nshow(RUN);\n"
    page = page.replace('<script src="/static/app.js"></script>', script(boot))
    page = re.sub(r'<script src="/static/([\w.]+)"></script>', lambda m: script(text(m.group(1))), page)
    licence = text("uPlot.LICENSE").replace("&", "&amp;").replace("<", "&lt;")
    page = page.replace('<a href="/static/uPlot.LICENSE">uPlot</a>',
                        f"uPlot (<details><summary>licence</summary><pre>{licence}</pre></details>)")
    return page.replace("<title>chronolog: live view</title>", "<title>chronolog: run report</title>")
