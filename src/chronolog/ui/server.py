"""The live view's web server: a page, its assets, and the run's state as JSON and as
server-sent events, read from a :class:`~chronolog.monitor.RunMonitor`.

Read-only by construction: every route is a GET of what the monitor holds; nothing
reaches the program. It runs in a daemon thread beside the run (uvicorn), on loopback
unless told otherwise. The page's assets are files of the package (uPlot vendored with
its licence): it works offline.
"""
from __future__ import annotations

import asyncio
import ipaddress
import json
import re
import sys
import threading
import time
from importlib import resources

from chronolog.errors import ChronologError
from chronolog.monitor import RunMonitor

INSTALL = "the live view needs its extra: pip install 'chronolog[ui]'"
PERIOD = 0.5  # seconds between two updates of the page
ASSETS = {"uPlot.iife.min.js": "text/javascript", "uPlot.min.css": "text/css", "uPlot.LICENSE": "text/plain",
          "app.js": "text/javascript", "view.js": "text/javascript", "app.css": "text/css"}


def parse_address(text: str) -> tuple[str, int]:
    """``[HOST:]PORT`` (``--ui``): host 127.0.0.1 unless given; port 0 picks a free one."""
    found = re.fullmatch(r"(?:(\[[^\]]+\]|[^:]+):)?(\d{1,5})", text.strip())
    if not found or int(found.group(2)) > 65535:
        raise ChronologError(f"--ui {text!r}: expected [HOST:]PORT, e.g. 8050 or 0.0.0.0:8050 (0: a free port)")
    return (found.group(1) or "127.0.0.1").strip("[]"), int(found.group(2))


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


class _Streams:
    """How many pages are following the run's events now (the server's thread counts)."""

    open = 0


def _app(monitor: RunMonitor, streams: _Streams):  # type: ignore[no-untyped-def]
    from starlette.applications import Starlette
    from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
    from starlette.routing import Route

    static = resources.files("chronolog.ui") / "static"

    async def page(request) -> HTMLResponse:  # type: ignore[no-untyped-def]
        return HTMLResponse((static / "index.html").read_text(encoding="utf-8"))

    async def asset(request) -> Response:  # type: ignore[no-untyped-def]
        name = request.path_params["name"]
        if name not in ASSETS:
            return Response("not found", status_code=404, media_type="text/plain")
        return Response((static / name).read_bytes(), media_type=ASSETS[name])

    async def state(request) -> JSONResponse:  # type: ignore[no-untyped-def]
        return JSONResponse(monitor.snapshot(int(request.query_params.get("after", 0))))

    async def events(request) -> StreamingResponse:  # type: ignore[no-untyped-def]
        async def updates():  # type: ignore[no-untyped-def]
            after = 0
            streams.open += 1
            try:
                while True:
                    snapshot = monitor.snapshot(after)
                    if snapshot["outputs"]:
                        after = snapshot["outputs"][-1]["seq"]
                    yield f"data: {json.dumps(snapshot)}\n\n"
                    if snapshot["finished"] is not None or await request.is_disconnected():
                        return
                    await asyncio.sleep(PERIOD)
            finally:
                streams.open -= 1
        return StreamingResponse(updates(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})

    return Starlette(routes=[Route("/", page), Route("/static/{name}", asset), Route("/api/state", state),
                             Route("/api/events", events)])


class LiveView:
    """The server of one run: ``start()`` returns the address it listens on."""

    def __init__(self, monitor: RunMonitor, host: str, port: int) -> None:
        self.monitor, self._streams = monitor, _Streams()
        try:
            import uvicorn

            app = _app(monitor, self._streams)
        except ImportError as e:
            raise ChronologError(INSTALL) from e
        config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="chronolog-ui", daemon=True)
        self.host = host

    def start(self, timeout: float = 10.0) -> str:
        self._thread.start()
        self._thread.join(0)
        waited = 0.0
        while not self._server.started:
            if not self._thread.is_alive() or waited > timeout:
                raise ChronologError(f"--ui: the live view could not listen on {self.host} (is the port taken?)")
            self._thread.join(0.02)
            waited += 0.02
        port = self._server.servers[0].sockets[0].getsockname()[1]
        host = f"[{self.host}]" if ":" in self.host else self.host
        if not _loopback(self.host):
            print(f"chronolog: warning: the live view listens on {self.host}, not only this machine: "
                  "anyone who can reach it sees the run's outputs", file=sys.stderr)
        return f"http://{host}:{port}/"

    def stop(self, drain: float = 5.0) -> None:
        """Stop serving; after a run that finished, once every page following it has had
        its final state (at most ``drain`` seconds)."""
        deadline = time.monotonic() + drain
        while self.monitor.finished is not None and self._streams.open and time.monotonic() < deadline:
            time.sleep(0.02)
        self._server.should_exit = True
        self._thread.join(5)
