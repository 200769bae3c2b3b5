"""``ludoteca serve``: play in the browser with friends (lobby, tables, replays)."""

from __future__ import annotations

import argparse
import math
import socket
from typing import Any

from ludoteca.cli import UsageError
from ludoteca.core import i18n as hook
from ludoteca.core.i18n import _
from ludoteca.i18n import add_lang_argument, use_language
from ludoteca.web.limits import ServerLimits
from ludoteca.web.security import normalize_origin

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
    parser.add_argument("--allowed-origin", action="append", default=[], metavar="URL",
                        help="another origin whose pages may use this server (websockets, creating tables, "
                             "joining), e.g. https://games.example.org; repeatable. The server's own address "
                             "is always allowed")
    parser.add_argument("--stats-token", metavar="TOKEN", default=None,
                        help="serve /api/stats (timings for operators) to requests with the header "
                             "'Authorization: Bearer TOKEN'; without it /api/stats does not exist")
    parser.add_argument("--rematch-hold", type=float, default=120.0, metavar="SECONDS",
                        help="seconds a rematch keeps each previous player's seat for them (default 120)")
    parser.add_argument("--stall-after", type=float, default=300.0, metavar="SECONDS",
                        help="seconds without a move, the player to move being away, before the lobby "
                             "shows a table as stalled (default 300)")
    parser.add_argument("--create-rate", type=float, default=10.0, metavar="N",
                        help="tables one client address may create per minute, after a burst (default 10)")
    parser.add_argument("--create-burst", type=int, default=20, metavar="N",
                        help="tables one client address may create at once (default 20)")
    parser.add_argument("--max-spectators", type=int, default=200, metavar="N",
                        help="connections watching one table without a seat (default 200)")
    parser.add_argument("--waiting-ttl", type=float, default=30.0, metavar="MINUTES",
                        help="minutes after which a table nobody joined expires (default 30; 0: never)")
    parser.add_argument("--resume-limit", type=int, default=2000, metavar="N",
                        help="tables in play rebuilt at start-up, the most recently active; the others "
                             "when someone opens them (default 2000)")
    parser.add_argument("--log-level", default="warning",
                        choices=["critical", "error", "warning", "info", "debug"], help="server log level")
    add_lang_argument(parser, "command's messages (the web pages follow each browser's language)")


def run(args: argparse.Namespace) -> int:
    """Start the server. The command's own messages are in ``--lang`` (or the locale's language);
    the server itself runs with English as the default of ``_()``: each page and each message to a
    browser is translated for that browser."""
    use_language(args.lang)
    try:
        sock, app = _open(args)
        host, port = sock.getsockname()[:2]
        shown = f"[{host}]" if sock.family == socket.AF_INET6 else host
        print(_("ludoteca serving on {url}  (database: {database})").format(
            url=f"http://{shown}:{port}/", database=_safe_url(app.state.database_url)), flush=True)
    finally:
        hook.install(None)
    import uvicorn

    config = uvicorn.Config(app, log_level=args.log_level, ws_max_size=1024 * 1024, ws_per_message_deflate=False,
                            lifespan="on", timeout_graceful_shutdown=3)
    server = uvicorn.Server(config)
    server.run(sockets=[sock])
    return 0


def _open(args: argparse.Namespace) -> tuple[socket.socket, Any]:
    """The listening socket and the application, or a UsageError saying what is wrong."""
    try:  # the web extra is optional: imported here to say so clearly when it is missing
        import uvicorn  # noqa: F401

        from ludoteca.web.app import create_app
    except ImportError as exc:
        raise UsageError(_("the web server needs the 'web' extra ({module} is missing): "
                           "pip install 'ludoteca[web]'").format(module=exc.name)) from None
    if not 0 <= args.port <= 65535:
        raise UsageError(_("--port must be 0 to 65535, not {port}").format(port=args.port))
    if args.ai_delay < 0 or args.ai_workers < 1:
        raise UsageError(_("--ai-delay must be >= 0 and --ai-workers >= 1"))
    limits = _limits(args)
    if args.rematch_hold < 0 or args.stall_after < 0:
        raise UsageError(_("--rematch-hold and --stall-after are seconds, 0 or more"))
    if args.stats_token is not None and len(args.stats_token) < 8:
        raise UsageError(_("--stats-token needs at least 8 characters"))
    for origin in args.allowed_origin:
        try:
            normalize_origin(origin)
        except ValueError as exc:
            raise UsageError(f"--allowed-origin: {exc}") from None
    if args.database and "://" not in args.database:
        raise UsageError(_("--database takes a SQLAlchemy URL such as sqlite:///file.db, not {url}").format(
            url=repr(args.database)))
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((args.host, args.port))
    except OSError as exc:
        sock.close()
        raise UsageError(_("cannot listen on {address}: {error}").format(
            address=f"{args.host}:{args.port}", error=exc.strerror)) from None
    sock.listen(512)
    sock.set_inheritable(True)
    try:
        app = create_app(database=args.database, data_dir=args.data_dir, ai_delay=args.ai_delay,
                         ai_workers=args.ai_workers, allowed_origins=args.allowed_origin,
                         stats_token=args.stats_token, rematch_hold=args.rematch_hold,
                         stall_after=args.stall_after, limits=limits)
    except Exception as exc:
        sock.close()
        raise UsageError(_("cannot open the database: {error}").format(error=exc)) from None
    return sock, app


def _limits(args: argparse.Namespace) -> ServerLimits:
    """The server's limits from the command line (UsageError naming a bad one)."""
    checks = [("--create-rate", args.create_rate, 0), ("--create-burst", args.create_burst, 1),
              ("--max-spectators", args.max_spectators, 0), ("--waiting-ttl", args.waiting_ttl, 0),
              ("--resume-limit", args.resume_limit, 0)]
    for flag, value, least in checks:
        if not math.isfinite(value) or value < least:
            raise UsageError(_("{flag} must be at least {least}, not {value}").format(flag=flag, least=least,
                                                                                      value=value))
    return ServerLimits(create_per_minute=args.create_rate, create_burst=args.create_burst,
                        max_spectators=args.max_spectators, waiting_ttl=args.waiting_ttl * 60,
                        resume_limit=args.resume_limit)


def _safe_url(url: str) -> str:
    """The database URL without its password."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return url.split("@")[-1]
