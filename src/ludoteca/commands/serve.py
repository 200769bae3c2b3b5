"""``ludoteca serve``: play in the browser with friends (lobby, tables, replays)."""

from __future__ import annotations

import argparse
import socket

from ludoteca.cli import UsageError

HELP = "start the web server: play in the browser with friends"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    parser.add_argument("--data-dir", default="data",
                        help="directory of the SQLite database (default ./data)")
    parser.add_argument("--database", metavar="URL", default=None,
                        help="SQLAlchemy URL instead of SQLite, e.g. postgresql+psycopg://user:pw@host/db")
    parser.add_argument("--ai-delay", type=float, default=0.6,
                        help="seconds an AI seat waits before moving, so people can follow (default 0.6)")
    parser.add_argument("--ai-workers", type=int, default=1,
                        help="processes computing heuristic/MCTS moves (default 1)")
    parser.add_argument("--log-level", default="warning",
                        choices=["critical", "error", "warning", "info", "debug"], help="server log level")


def run(args: argparse.Namespace) -> int:
    try:
        import uvicorn

        from ludoteca.web.app import create_app
    except ImportError as exc:
        raise UsageError(f"the web server needs the 'web' extra ({exc.name} is missing): "
                         "pip install 'ludoteca[web]'") from None
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be 0 to 65535, not {args.port}")
    if args.ai_delay < 0 or args.ai_workers < 1:
        raise UsageError("--ai-delay must be >= 0 and --ai-workers >= 1")
    if args.database and "://" not in args.database:
        raise UsageError(f"--database takes a SQLAlchemy URL such as sqlite:///file.db, not {args.database!r}")
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((args.host, args.port))
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on {args.host}:{args.port}: {exc.strerror}") from None
    sock.listen(512)
    sock.set_inheritable(True)
    try:
        app = create_app(database=args.database, data_dir=args.data_dir, ai_delay=args.ai_delay,
                         ai_workers=args.ai_workers)
    except Exception as exc:
        sock.close()
        raise UsageError(f"cannot open the database: {exc}") from None
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    print(f"ludoteca serving on http://{shown}:{port}/  (database: {_safe_url(app.state.database_url)})",
          flush=True)
    config = uvicorn.Config(app, log_level=args.log_level, ws_max_size=1024 * 1024, ws_per_message_deflate=False,
                            lifespan="on", timeout_graceful_shutdown=3)
    server = uvicorn.Server(config)
    server.run(sockets=[sock])
    return 0


def _safe_url(url: str) -> str:
    """The database URL without its password."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return url.split("@")[-1]
