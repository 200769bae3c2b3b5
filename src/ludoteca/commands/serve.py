"""``ludoteca serve``: play in the browser with friends (lobby, tables, replays)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import socket
from typing import Any

from ludoteca.cli import UsageError
from ludoteca.core import i18n as hook
from ludoteca.core.i18n import N_, _
from ludoteca.i18n import add_lang_argument, use_language
from ludoteca.web.limits import ServerLimits
from ludoteca.web.security import normalize_origin

HELP = N_("start the web server: play in the browser with friends")
BUS_SECRET_ENV = "LUDOTECA_BUS_SECRET"
"""The environment variable holding the workers' shared bus secret (--bus-secret-file's alternative)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help=_("address to listen on (default 127.0.0.1)"))
    parser.add_argument("--port", type=int, default=8000, help=_("port (default 8000; 0 picks a free one)"))
    parser.add_argument("--data-dir", default="data",
                        help=_("directory of the SQLite database (default ./data)"))
    parser.add_argument("--database", metavar="URL", default=None,
                        help=_("SQLAlchemy URL instead of SQLite, e.g. postgresql+psycopg://user:pw@host/db"))
    parser.add_argument("--redis", metavar="URL", default=None,
                        help=_("Redis URL (redis://host:6379/0) through which several workers share their tables' "
                               "news; needed with --workers above 1 (docs/web.md, 'Several workers')"))
    parser.add_argument("--bus-secret-file", metavar="FILE", default=None,
                        help=_("file holding the secret that the workers sharing --redis sign their messages with "
                               "(at least 16 characters, the same for every worker); or the environment variable "
                               "LUDOTECA_BUS_SECRET; generated when --workers N starts them together"))
    parser.add_argument("--bus-secret", metavar="SECRET", default=None,
                        help=_("the workers' shared secret itself (other users of the machine may read a command "
                               "line: prefer --bus-secret-file or LUDOTECA_BUS_SECRET)"))
    parser.add_argument("--workers", type=int, default=1, metavar="N",
                        help=_("worker processes sharing this address (default 1); more than 1 needs PostgreSQL "
                               "(--database) and --redis; a worker that dies is restarted"))
    parser.add_argument("--drain", type=float, default=None, metavar="SECONDS",
                        help=_("on SIGTERM, seconds a worker answers /readyz with 503 and refuses new websockets "
                               "before it hands its tables over and stops (default 1 with --redis, else 0)"))
    parser.add_argument("--ai-delay", type=float, default=0.6,
                        help=_("seconds an AI seat waits before moving, so people can follow (default 0.6)"))
    parser.add_argument("--ai-workers", type=int, default=1,
                        help=_("processes computing heuristic/MCTS moves (default 1)"))
    parser.add_argument("--analysis", choices=["all", "request", "off"], default="request",
                        help=_("which finished games are analysed move by move (skill and luck, on the replay page): "
                               "all, those a visitor asks for (request, the default) or none (off)"))
    parser.add_argument("--analysis-workers", type=int, default=1, metavar="N",
                        help=_("processes analysing finished games, at the lowest CPU priority (default 1)"))
    parser.add_argument("--allowed-origin", action="append", default=[], metavar="URL",
                        help=_("another origin whose pages may use this server (websockets, creating tables, "
                               "joining), e.g. https://games.example.org; repeatable. The server's own address "
                               "is always allowed"))
    parser.add_argument("--stats-token", metavar="TOKEN", default=None,
                        help=_("serve /api/stats (timings for operators) to requests with the header "
                               "'Authorization: Bearer TOKEN'; without it /api/stats does not exist"))
    parser.add_argument("--rematch-hold", type=float, default=120.0, metavar="SECONDS",
                        help=_("seconds a rematch keeps each previous player's seat for them (default 120)"))
    parser.add_argument("--stall-after", type=float, default=300.0, metavar="SECONDS",
                        help=_("seconds without a move, the player to move being away, before the lobby "
                               "shows a table as stalled (default 300)"))
    parser.add_argument("--create-rate", type=float, default=10.0, metavar="N",
                        help=_("tables one client address may create per minute, after a burst (default 10)"))
    parser.add_argument("--create-burst", type=int, default=20, metavar="N",
                        help=_("tables one client address may create at once (default 20)"))
    parser.add_argument("--max-spectators", type=int, default=200, metavar="N",
                        help=_("connections watching one table without a seat (default 200)"))
    parser.add_argument("--waiting-ttl", type=float, default=30.0, metavar="MINUTES",
                        help=_("minutes after which a table nobody joined expires (default 30; 0: never)"))
    parser.add_argument("--resume-limit", type=int, default=2000, metavar="N",
                        help=_("tables in play rebuilt at start-up, the most recently active; the others "
                               "when someone opens them (default 2000)"))
    parser.add_argument("--log-level", default="warning",
                        choices=["critical", "error", "warning", "info", "debug"], help=_("server log level"))
    parser.add_argument("--log-format", default="text", choices=["text", "json"],
                        help=_("'json': every log line is a JSON object, with one line per request "
                               "(default text)"))
    parser.add_argument("--forwarded-allow-ips", metavar="ADDRESSES", default=None,
                        help=_("comma-separated addresses (or networks) of the reverse proxies whose "
                               "X-Forwarded-For and X-Forwarded-Proto are trusted, e.g. 127.0.0.1 for nginx "
                               "on this machine; default none: the connection's own address counts"))
    parser.add_argument("--head-timeout", type=float, default=10.0, metavar="SECONDS",
                        help=_("seconds a request's head may take to arrive before the connection is "
                               "closed (default 10)"))
    parser.add_argument("--keep-alive", type=int, default=5, metavar="SECONDS",
                        help=_("seconds an idle HTTP connection is kept open (default 5)"))
    parser.add_argument("--lab", action="store_true",
                        help=_("open the lab in the browser (/lab): logged-in accounts queue runs and balance "
                               "searches, played apart from live play at the lowest CPU priority (docs/lab.md)"))
    parser.add_argument("--lab-ray", metavar="ADDRESS", default=None,
                        help=_("with --lab: play the lab's runs on the Ray cluster at ADDRESS instead of this machine"))
    parser.add_argument("--lab-jobs", type=int, default=1, metavar="N",
                        help=_("with --lab: processes playing a lab run on this machine (default 1)"))
    parser.add_argument("--smtp", metavar="URL", default=None,
                        help=_("send the players' e-mail notices through this SMTP server: "
                               "smtp://user:password@host:port (STARTTLS when offered) or smtps://…; "
                               "without it the server sends no e-mail"))
    parser.add_argument("--public-url", metavar="URL", default=None,
                        help=_("the address players reach the server at, for the links of e-mails and "
                               "pushes, such as https://games.example.org"))
    parser.add_argument("--webhook-private", action="store_true",
                        help=_("let webhooks call addresses of private networks (a club's own server)"))
    add_lang_argument(parser, "command's messages (the web pages follow each browser's language)")


def run(args: argparse.Namespace) -> int:
    """Start the server. The command's own messages are in ``--lang`` (or the locale's language);
    the server itself runs with English as the default of ``_()``: each page and each message to a
    browser is translated for that browser."""
    use_language(args.lang)
    try:
        sock, app, settings = _open(args)
        if args.workers > 1:
            try:
                _prepare_schema(settings)
            except UsageError:
                sock.close()
                raise
        host, port = sock.getsockname()[:2]
        shown = f"[{host}]" if sock.family == socket.AF_INET6 else host
        print(_("ludoteca serving on {url}  (database: {database})").format(
            url=f"http://{shown}:{port}/", database=_safe_url(app.state.database_url)), flush=True)
        if args.workers > 1:
            print(_("{n} workers, news through Redis at {redis}").format(
                n=args.workers, redis=_safe_url(args.redis)), flush=True)
    finally:
        hook.install(None)
    import uvicorn

    common: dict[str, Any] = {"log_level": args.log_level, "ws_max_size": 1024 * 1024,
                              "ws_per_message_deflate": False, "lifespan": "on", "timeout_graceful_shutdown": 3}
    common.update(_connection_options(args))
    if args.workers == 1:
        uvicorn.Server(_config(uvicorn.Config(app, **common), args)).run(sockets=[sock])
        return 0
    # Several processes on one socket: uvicorn's supervisor starts each worker (importing the
    # factory, which reads the settings from the environment), restarts one that dies, and
    # passes SIGTERM/SIGINT on to all of them.
    from uvicorn.supervisors import Multiprocess

    from ludoteca.web.launch import SETTINGS_ENV

    del app  # the workers build their own
    os.environ[SETTINGS_ENV] = json.dumps(settings)
    config = _config(uvicorn.Config("ludoteca.web.launch:factory", factory=True, workers=args.workers, **common),
                     args)
    Multiprocess(config, sockets=[sock]).run()
    sock.close()
    return 0


def _connection_options(args: argparse.Namespace) -> dict[str, Any]:
    """uvicorn's options for what reaches a worker: forwarded headers trusted only from the proxies
    named by ``--forwarded-allow-ips`` (uvicorn's own default would trust 127.0.0.1), request heads
    bounded (web/hub/heads.py), idle connections closed, and the log format."""
    from ludoteca.web.hub.heads import HeadTimeoutProtocol

    proxies = _proxies(args.forwarded_allow_ips)
    options: dict[str, Any] = {"proxy_headers": bool(proxies), "forwarded_allow_ips": proxies or "",
                               "http": HeadTimeoutProtocol, "timeout_keep_alive": args.keep_alive,
                               "h11_max_incomplete_event_size": 64 * 1024}
    if args.log_format == "json":
        from ludoteca.web.logs import log_config

        options.update(log_config=log_config(args.log_level), log_level=None)
    return options


def _config(config: Any, args: argparse.Namespace) -> Any:
    """uvicorn's ``Config`` with the head timeout the protocol reads (heads.py; it travels with the
    config to every worker process)."""
    config.head_timeout = args.head_timeout
    return config


def _proxies(text: str | None) -> list[str]:
    """The trusted proxies of ``--forwarded-allow-ips`` (UsageError for anything but addresses and
    networks, or ``*``)."""
    import ipaddress

    found = [p.strip() for p in (text or "").split(",") if p.strip()]
    for proxy in found:
        if proxy == "*":
            continue
        try:
            ipaddress.ip_network(proxy, strict=False)
        except ValueError:
            raise UsageError(_("--forwarded-allow-ips takes addresses or networks separated by commas, such as "
                               "127.0.0.1,10.0.0.0/8, not {value}").format(value=repr(proxy))) from None
    return found


def _open(args: argparse.Namespace) -> tuple[socket.socket, Any, dict[str, Any]]:
    """The listening socket, the application and its settings (launch.build_app), or a UsageError
    saying what is wrong."""
    try:  # the web extra is optional: imported here to say so clearly when it is missing
        import uvicorn  # noqa: F401

        from ludoteca.web.launch import build_app
    except ImportError as exc:
        raise UsageError(_("the web server needs the 'web' extra ({module} is missing): "
                           "pip install 'ludoteca[web]'").format(module=exc.name)) from None
    if not 0 <= args.port <= 65535:
        raise UsageError(_("--port must be 0 to 65535, not {port}").format(port=args.port))
    if args.ai_delay < 0 or args.ai_workers < 1:
        raise UsageError(_("--ai-delay must be >= 0 and --ai-workers >= 1"))
    if not 1 <= args.analysis_workers <= 64:
        raise UsageError(_("--analysis-workers must be 1 to 64, not {n}").format(n=args.analysis_workers))
    limits = _limits(args)
    if args.rematch_hold < 0 or args.stall_after < 0:
        raise UsageError(_("--rematch-hold and --stall-after are seconds, 0 or more"))
    if not (math.isfinite(args.head_timeout) and 0 < args.head_timeout <= 300) or not 1 <= args.keep_alive <= 300:
        raise UsageError(_("--head-timeout and --keep-alive are seconds, more than 0 and at most 300"))
    _proxies(args.forwarded_allow_ips)
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
    _check_workers(args)
    lab = _lab(args)
    bus_secret = _bus_secret(args)
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
    settings: dict[str, Any] = {
        "database": args.database, "data_dir": args.data_dir, "ai_delay": args.ai_delay,
        "ai_workers": args.ai_workers, "allowed_origins": list(args.allowed_origin),
        "stats_token": args.stats_token, "rematch_hold": args.rematch_hold, "stall_after": args.stall_after,
        "limits": dataclasses.asdict(limits), "redis": args.redis, "drain": args.drain,
        "bus_secret": bus_secret, "analysis": args.analysis, "analysis_processes": args.analysis_workers}
    settings["lab"] = lab
    settings["notices"] = _notices(args)
    try:
        app = build_app(settings)
    except Exception as exc:
        sock.close()
        raise UsageError(_("cannot open the database: {error}").format(error=exc)) from None
    return sock, app, settings


def _notices(args: argparse.Namespace) -> dict[str, Any]:
    """The notices' settings (web/notices/setup.py); UsageError for a bad --smtp or --public-url."""
    from ludoteca.web.notices.mail import BadSmtpUrl, SmtpConfig

    if args.smtp:
        try:
            SmtpConfig.parse(args.smtp)
        except BadSmtpUrl as exc:
            raise UsageError(f"--smtp: {exc}") from None
    if args.public_url and not args.public_url.startswith(("http://", "https://")):
        raise UsageError(_("--public-url is an address such as https://games.example.org"))
    return {"smtp": args.smtp, "public_url": args.public_url, "webhook_private": args.webhook_private}


def _prepare_schema(settings: dict[str, Any]) -> None:
    """Create the tables once, here, before the workers start: N processes creating them at the
    same moment on an empty PostgreSQL database would collide (and a worker failing at start-up
    stops the supervisor)."""
    from ludoteca.web.hub.leases import LeaseStore
    from ludoteca.web.repository.store import Repository, database_url

    try:
        repo = Repository(database_url(settings["data_dir"], settings["database"]))
    except Exception as exc:
        raise UsageError(_("cannot open the database: {error}").format(error=exc)) from None
    try:
        LeaseStore(repo.engine)
    finally:
        repo.close()


def _check_workers(args: argparse.Namespace) -> None:
    """Several workers need a shared database server and Redis (UsageError otherwise)."""
    if args.redis is not None and args.redis.split("://", 1)[0] not in ("redis", "rediss", "unix"):
        raise UsageError(_("--redis takes a URL such as redis://127.0.0.1:6379/0, not {url}").format(
            url=repr(_safe_url(args.redis))))
    if args.drain is None:  # one process alone has no other worker to hand its clients to
        args.drain = 1.0 if args.redis or args.workers > 1 else 0.0
    if not math.isfinite(args.drain) or not 0 <= args.drain <= 60:
        raise UsageError(_("--drain is 0 to 60 seconds"))
    if args.workers < 1 or args.workers > 64:
        raise UsageError(_("--workers must be 1 to 64, not {n}").format(n=args.workers))
    if args.workers == 1:
        return
    if not args.database or args.database.split(":", 1)[0].split("+", 1)[0] == "sqlite":
        raise UsageError(_("--workers {n} needs a database server that several processes share, such as "
                           "--database postgresql+psycopg://user:pw@host/db: SQLite is for one process").format(
                               n=args.workers))
    if not args.redis:
        raise UsageError(_("--workers {n} needs --redis redis://host:6379/0: the workers pass their "
                           "tables' news to each other through Redis").format(n=args.workers))


def _bus_secret(args: argparse.Namespace) -> str | None:
    """The secret the workers sign their bus messages with (bus.py): --bus-secret-file,
    --bus-secret or LUDOTECA_BUS_SECRET; generated for the workers of one --workers N; None without
    --redis. UsageError when --redis has none, or it is too short."""
    from ludoteca.web.hub.bus import MIN_SECRET, new_secret

    if args.bus_secret is not None and args.bus_secret_file is not None:
        raise UsageError(_("give --bus-secret or --bus-secret-file, not both"))
    secret = args.bus_secret
    if args.bus_secret_file is not None:
        try:
            with open(args.bus_secret_file, encoding="utf-8") as file:
                secret = file.read(4096).strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(_("cannot read the bus secret from {file}: {error}").format(
                file=args.bus_secret_file, error=getattr(exc, "strerror", None) or exc)) from None
    if secret is None:
        secret = os.environ.get(BUS_SECRET_ENV) or None
    if not args.redis:
        return None
    if secret is None:
        if args.workers > 1:
            return new_secret()  # started together here: they share it through their settings
        raise UsageError(_("--redis needs the secret the workers share to sign their messages: "
                           "--bus-secret-file FILE or the environment variable {env} (docs/web.md, "
                           "'The bus')").format(env=BUS_SECRET_ENV))
    if len(secret.encode()) < MIN_SECRET:
        raise UsageError(_("the bus secret needs at least {n} characters").format(n=MIN_SECRET))
    return str(secret)


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


def _lab(args: argparse.Namespace) -> dict[str, Any] | None:
    """The lab's settings (web/labs/settings.py) from ``--lab``, ``--lab-ray``, ``--lab-jobs``; None: off."""
    if not args.lab:
        if args.lab_ray is not None or args.lab_jobs != 1:
            raise UsageError(_("--lab-ray and --lab-jobs are for --lab"))
        return None
    if not 1 <= args.lab_jobs <= 64:
        raise UsageError(_("--lab-jobs must be 1 to 64, not {n}").format(n=args.lab_jobs))
    if args.lab_ray is not None:
        try:
            import ray  # noqa: F401
        except ImportError:
            raise UsageError(_("--lab-ray needs Ray: pip install 'ludoteca[ray]'")) from None
    return {"folder": os.path.join(args.data_dir, "lab"), "ray": args.lab_ray, "jobs": args.lab_jobs}
