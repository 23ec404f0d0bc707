"""`cejudge view RUN [RUN...]`: one self-contained HTML page per call (overview, charts, items with
filters and every stage's output, comparison of several runs, CSV download), written to disk and
printed; `--open` opens it, `--serve` serves it on 127.0.0.1 only (and only to requests for 127.0.0.1 or
localhost: DNS rebinding), `--csv` writes the item table (formula-like cells prefixed with `'`).

`cejudge_dspy.view` builds the page (view/_page.py) and draws its charts (view/_charts.py); view/assets/
holds its HTML, stylesheet and script.
"""

from __future__ import annotations

import argparse
import errno
import functools
import http.server
import sys
import webbrowser
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cejudge_dspy.cli._common import check_bounds
from cejudge_dspy.cli._run_args import BOOTSTRAP
from cejudge_dspy.cli._selective import ABSTAIN_BELOW
from cejudge_dspy.errors import InputError


def add_parsers(sub: Any) -> None:
    p = sub.add_parser(
        "view", help="write a self-contained HTML page of one or more runs (items, charts, comparison)"
    )
    p.add_argument(
        "runs",
        nargs="+",
        help="run directories written by `cejudge evaluate --out`, or one written by `cejudge consistency`",
    )
    p.add_argument(
        "-o",
        "--out",
        help="HTML file to write (default: RUN/view.html for one run, ./cejudge-view.html for several)",
    )
    p.add_argument("--csv", help="also write the item table as CSV to this file (one row per item and run)")
    p.add_argument("--open", action="store_true", help="open the page in the default browser")
    p.add_argument(
        "--serve", action="store_true", help="serve the page on http://127.0.0.1:PORT until Ctrl-C"
    )
    p.add_argument(
        "--port", type=int, default=8765, help="port for --serve (default 8765; 0 picks a free one)"
    )
    p.add_argument(
        "--bootstrap",
        type=int,
        default=1000,
        help=f"bootstrap resamples for CIs ({BOOTSTRAP.describe()}; 0: none)",
    )
    p.add_argument(
        "--abstain-below",
        type=float,
        metavar="X",
        help="show the items whose confidence is below X as abstained (default: the threshold the "
        "run's summary.json recorded, if any; see `cejudge evaluate --abstain-below`)",
    )
    p.set_defaults(handler=run_view)


def run_view(args: argparse.Namespace) -> int:
    from cejudge_dspy.files import write_file_atomic
    from cejudge_dspy.view import csv_text, item_rows, load_view_run, require_libraries, write_page

    require_libraries()
    check_port(args.port)
    check_bounds(args, (ABSTAIN_BELOW, BOOTSTRAP))
    paths = [Path(p) for p in args.runs]
    for path in paths:
        if not path.is_dir():
            raise InputError(f"{path} is not a run directory", field="runs")
    if any((path / "consistency.json").is_file() for path in paths):
        return _view_consistency(args, paths)
    if any((path / "ranking.json").is_file() for path in paths):
        return _view_ranking(args, paths)
    names = _unique_names(paths)
    out = (
        Path(args.out)
        if args.out
        else (paths[0] / "view.html" if len(paths) == 1 else Path("cejudge-view.html"))
    )

    def write() -> None:
        runs = [
            load_view_run(path, name=name, n_resamples=args.bootstrap, abstain_below=args.abstain_below)
            for path, name in zip(paths, names, strict=True)
        ]
        write_page(runs, out, n_resamples=args.bootstrap)
        print(out.resolve())
        if args.csv:
            rows = [row for run in runs for row in item_rows(run.records, run.spec, run.name, run.abstained)]
            write_file_atomic(Path(args.csv), csv_text(rows), fsync=False)  # a symlink there is refused
            print(Path(args.csv).resolve())

    return _publish(args, out, write)


def _publish(args: argparse.Namespace, out: Path, write: Callable[[], None]) -> int:
    """Write the page with `write`, then serve it (`--serve`) or open it (`--open`). The port is bound
    before anything is written: a port in use is one line, with no page left behind."""
    server = bind(out, args.port) if args.serve else None
    try:
        write()
        if server is not None:
            return serve(out, args.port, open_browser=args.open, server=server)
    finally:
        if server is not None:
            server.server_close()
    if args.open:
        webbrowser.open(out.resolve().as_uri())
    return 0


def _view_consistency(args: argparse.Namespace, paths: list[Path]) -> int:
    """The page of one consistency run: its renderings side by side and the flip matrix."""
    from cejudge_dspy.view import write_consistency_page

    if len(paths) > 1 or args.csv:
        raise InputError(
            f"{paths[0]} is a consistency run: view it on its own (without --csv), or view its child runs",
            field="runs",
        )
    out = Path(args.out) if args.out else paths[0] / "view.html"

    def write() -> None:
        write_consistency_page(paths[0], out, n_resamples=args.bootstrap)
        print(out.resolve())

    return _publish(args, out, write)


def _view_ranking(args: argparse.Namespace, paths: list[Path]) -> int:
    """The page of one ranking run (its systems with their intervals and the win-rate matrix), and the
    same tables on stdout."""
    from cejudge_dspy.cli.display import console, ranking_tables
    from cejudge_dspy.rank import read_ranking
    from cejudge_dspy.view import write_ranking_page

    if len(paths) > 1 or args.csv:
        raise InputError(f"{paths[0]} is a ranking run: view it on its own (without --csv)", field="runs")
    out = Path(args.out) if args.out else paths[0] / "view.html"
    summary = read_ranking(paths[0])
    assert summary is not None

    def write() -> None:
        for table in ranking_tables(summary):
            console().print(table)
        write_ranking_page(paths[0], out)
        print(out.resolve())

    return _publish(args, out, write)


def _unique_names(paths: list[Path]) -> list[str]:
    """Each run's label: its directory name, with the parent's prepended where two would clash."""
    names = [p.resolve().name for p in paths]
    return [
        f"{p.resolve().parent.name}/{n}" if names.count(n) > 1 else n
        for p, n in zip(paths, names, strict=True)
    ]


def check_port(port: int) -> None:
    """Refuse what is not a TCP port; 0 asks the system for any free one."""
    if not 0 <= port <= 65535:
        raise InputError(f"{port} is not a port: use 1 to 65535, or 0 for any free one", field="--port")


def bind(page: Path, port: int) -> http.server.ThreadingHTTPServer:
    """A server for `page` bound to 127.0.0.1:`port` (never other interfaces); a port in use is one line."""
    check_port(port)
    handler = functools.partial(_PageHandler, page.resolve())
    try:
        return http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise InputError(
                f"port {port} on 127.0.0.1 is in use; pick another, or 0 for any free one", field="--port"
            ) from None
        raise InputError(
            f"cannot serve on 127.0.0.1:{port} ({exc.strerror or exc})", field="--port"
        ) from None


def serve(
    page: Path,
    port: int,
    *,
    open_browser: bool = False,
    server: http.server.ThreadingHTTPServer | None = None,
) -> int:
    """Serve the page, and nothing else of its folder, on 127.0.0.1 until interrupted."""
    with server or bind(page, port) as bound:
        url = f"http://127.0.0.1:{bound.server_address[1]}/{page.name}"
        print(f"serving {url} (Ctrl-C stops)", file=sys.stderr)
        if open_browser:
            webbrowser.open(url)
        try:
            bound.serve_forever()
        except KeyboardInterrupt:
            pass
    return 0


class _PageHandler(http.server.BaseHTTPRequestHandler):
    """GET / or /NAME answers the page; every other path is 404, and a request for another host 403."""

    def __init__(self, page: Path, *args: Any, **kwargs: Any) -> None:
        self.page = page
        super().__init__(*args, **kwargs)

    def _host_allowed(self) -> bool:
        # DNS rebinding: a page on evil.example can point its name at 127.0.0.1 and read this server
        # from the user's browser; the browser still sends Host: evil.example, so only our names pass.
        host = (self.headers.get("Host") or "").strip().lower()
        port = self.server.server_address[1]
        return host in {"127.0.0.1", "localhost", f"127.0.0.1:{port}", f"localhost:{port}"}

    def do_GET(self) -> None:  # noqa: N802 - the base class's name
        if not self._host_allowed():
            self.send_error(403, "this server answers only http://127.0.0.1 or http://localhost")
            return
        if self.path.split("?")[0] not in ("/", f"/{self.page.name}"):
            self.send_error(404)
            return
        body = self.page.read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass
