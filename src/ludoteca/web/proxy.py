"""nginx in front of several ``ludoteca serve`` workers: the configuration.

:func:`site_config` is the part that goes inside nginx's ``http { }`` (for example as
``/etc/nginx/conf.d/ludoteca.conf``); :func:`standalone_config` is a whole ``nginx.conf`` whose
pid file, logs and temporary files all live in one folder, so nginx runs as an ordinary user
(``nginx -p DIR -c DIR/nginx.conf -e DIR/error.log``; the tests run it so). From the shell::

    python -m ludoteca.web.proxy --listen 127.0.0.1:8080 --worker 127.0.0.1:8001 --worker 127.0.0.1:8002

What the configuration does:

- **Round robin, nothing sticky**: each request goes to the next worker address; any worker can serve
  any client (the workers share tables through the database and the bus). nginx keeps no idle
  connection to the workers (no upstream ``keepalive``): each request opens its own, so behind one
  address served by ``ludoteca serve --workers N`` the kernel hands each request to one of the N
  processes (about evenly, not strictly in turn) instead of one kept connection pinning every
  request to the same process.
- **The default server** of its ``listen`` (``default_server``): a request by IP address, or with a
  ``Host`` no other site names, reaches ludoteca. Debian's own default site must be disabled
  (``rm /etc/nginx/sites-enabled/default``), otherwise ``nginx -t`` reports a duplicate default server.
- **Websockets** (``/ws/``): the ``Upgrade``/``Connection`` headers are passed on, and a socket
  may stay quiet for :data:`WS_READ_TIMEOUT` seconds (the server pings every 20 s).
- **Retries only where they are safe**: a request goes to the next worker when the first cannot
  be reached (``error``, ``timeout``) or answers 502/503; nginx never re-sends a request with a
  non-idempotent method (POST) once it has reached a worker (``non_idempotent`` is not given), so
  a POST is retried only when no worker saw it. At most :data:`NEXT_UPSTREAM_TRIES` workers are
  tried, within :data:`NEXT_UPSTREAM_TIMEOUT` seconds.
- **Headers**: ``Host`` as the browser sent it (the server's Origin check compares the page's
  origin with it), ``X-Forwarded-For`` set to the client's address and ``X-Forwarded-Proto``. A
  worker believes them only from the proxies it is told of: start each with ``ludoteca serve
  --forwarded-allow-ips ADDRESS`` (nginx's address as the worker sees it: 127.0.0.1 on the same
  machine); without it every client has nginx's address (one bucket for all in the limits).
- **Run as root** (``--run-dir``): nginx's workers need an account that can write the temporary
  folders (request bodies over 16 KiB are written to ``DIR/client_body``): the configuration names
  the owner of ``DIR`` in a ``user`` line (when root owns it: ``www-data`` if it can enter ``DIR``,
  else root itself, with a warning); nginx creates the folders for that account.
- The access log names the worker of each request (``upstream=``).
"""

from __future__ import annotations

import argparse
import os
import pwd
import re
import stat
import sys
from collections.abc import Sequence
from pathlib import Path

MAX_WORKERS = 64
WS_READ_TIMEOUT = 120
HTTP_READ_TIMEOUT = 30
CONNECT_TIMEOUT = 2
NEXT_UPSTREAM_TRIES = 3
NEXT_UPSTREAM_TIMEOUT = 10
MAX_BODY = "1m"

_HOST = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252}))$")
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")
_PATH_OK = re.compile(r"^[^\s;{}\"'$\\#]+$")


def check_address(text: str, what: str = "a worker") -> str:
    """``host:port`` (IPv6 hosts in brackets); ValueError otherwise (nothing that could change the
    configuration's meaning gets through)."""
    host, sep, port = text.rpartition(":") if isinstance(text, str) else ("", "", "")
    if not sep or not _HOST.match(host) or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{what} is host:port, e.g. 127.0.0.1:8001, not {text!r}")
    return f"{host}:{int(port)}"


def _check_path(path: Path) -> str:
    text = str(path)
    if not _PATH_OK.match(text):
        raise ValueError(f"the folder {text!r} has characters nginx would misread (spaces, quotes, ;, {{}}, $, #)")
    return text


def site_config(workers: Sequence[str], listen: str = "127.0.0.1:8080", server_name: str = "_",
                upstream: str = "ludoteca") -> str:
    """The ``upstream``, ``map`` and ``server`` blocks for nginx's ``http { }`` context."""
    if not 0 < len(workers) <= MAX_WORKERS:
        raise ValueError(f"give 1 to {MAX_WORKERS} workers")
    servers = [check_address(w) for w in workers]
    listen = check_address(listen, "the address to listen on")
    if server_name != "_" and not _HOST.match(server_name):
        raise ValueError(f"{server_name!r} is not a server name")
    if not _NAME.match(upstream):
        raise ValueError(f"{upstream!r} is not an upstream name")
    upstream_lines = "\n".join(f"    server {s} max_fails=2 fail_timeout=5s;" for s in servers)
    proxied = f"""\
        proxy_pass http://{upstream};
        proxy_http_version 1.1;
        proxy_set_header Host $http_host;
        proxy_set_header X-Forwarded-For $remote_addr;
        proxy_set_header X-Forwarded-Proto $scheme;
        proxy_connect_timeout {CONNECT_TIMEOUT}s;
        # to the next worker only when this one cannot be reached or is failing; a POST that
        # reached a worker is never sent again (no "non_idempotent")
        proxy_next_upstream error timeout http_502 http_503;
        proxy_next_upstream_tries {NEXT_UPSTREAM_TRIES};
        proxy_next_upstream_timeout {NEXT_UPSTREAM_TIMEOUT}s;"""
    return f"""\
# ludoteca: nginx in front of {len(servers)} worker(s) (made by ludoteca.web.proxy)
log_format {upstream}_upstream '$remote_addr [$time_local] "$request" $status $body_bytes_sent '
                        'upstream=$upstream_addr upstream_status=$upstream_status '
                        'request_time=$request_time';

upstream {upstream} {{
    # round robin, nothing sticky
{upstream_lines}
    # no keepalive: each request its own connection, so that N processes sharing one address
    # (ludoteca serve --workers N) each get requests
}}

map $http_upgrade ${upstream}_connection {{
    default upgrade;
    ""      "";
}}

# the workers trust X-Forwarded-* only from nginx: ludoteca serve --forwarded-allow-ips ADDRESS
server {{
    listen {listen} default_server;
    server_name {server_name};
    server_tokens off;
    client_max_body_size {MAX_BODY};

    location /ws/ {{
{proxied}
        proxy_set_header Upgrade $http_upgrade;
        proxy_set_header Connection ${upstream}_connection;
        proxy_read_timeout {WS_READ_TIMEOUT}s;
        proxy_send_timeout {WS_READ_TIMEOUT}s;
        proxy_buffering off;
    }}

    location / {{
{proxied}
        proxy_set_header Connection "";
        proxy_read_timeout {HTTP_READ_TIMEOUT}s;
        proxy_send_timeout {HTTP_READ_TIMEOUT}s;
    }}
}}
"""


def standalone_config(workers: Sequence[str], run_dir: Path, listen: str = "127.0.0.1:8080",
                      user: str | None = None, processes: int = 1) -> str:
    """A whole nginx.conf keeping its pid file, logs and temporary files in ``run_dir``. ``user``:
    the account of nginx's worker processes when it is started as root (ignored otherwise)."""
    folder = _check_path(run_dir.resolve())
    if user is not None and not _NAME.match(user):
        raise ValueError(f"{user!r} is not a user name")
    if not 0 < processes <= 64:
        raise ValueError("processes is 1 to 64")
    user_line = f"user {user};\n" if user else ""
    temps = "\n".join(f"    {kind}_temp_path {folder}/{name};" for kind, name in
                      (("client_body", "client_body"), ("proxy", "proxy"), ("fastcgi", "fastcgi"),
                       ("uwsgi", "uwsgi"), ("scgi", "scgi")))
    site = "\n".join(f"    {line}" if line else "" for line in site_config(workers, listen).splitlines())
    return f"""\
{user_line}worker_processes {processes};
pid {folder}/nginx.pid;
error_log {folder}/error.log warn;

events {{
    worker_connections 1024;
}}

http {{
    default_type application/octet-stream;
{temps}

{site}

    access_log {folder}/access.log ludoteca_upstream;
}}
"""


def worker_user(run_dir: Path) -> str | None:
    """The account nginx's workers should run as when nginx is started by root (None otherwise): the
    owner of ``run_dir`` (or of its nearest existing parent) unless that is root; else ``www-data``
    (or ``nobody``) when it can enter ``run_dir``; else root itself, the only account that can
    (:func:`main` warns then)."""
    if os.geteuid() != 0:
        return None
    folder = run_dir.resolve()
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    owner = folder.stat().st_uid
    if owner != 0:
        try:
            return pwd.getpwuid(owner).pw_name
        except KeyError:
            pass
    for name in ("www-data", "nobody"):
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        if unreachable(run_dir, name) is None:
            return name
    return pwd.getpwuid(0).pw_name


def unreachable(run_dir: Path, user: str) -> Path | None:
    """The first folder on the way to ``run_dir`` that ``user`` cannot enter (None: all can be)."""
    try:
        account = pwd.getpwnam(user)
    except KeyError:
        return None
    groups = {account.pw_gid, *os.getgrouplist(user, account.pw_gid)}
    folder = run_dir.resolve()
    for part in [*reversed(folder.parents), folder]:
        if not part.exists():
            return None  # nginx creates the rest as root, then hands the temporary folders over
        info = part.stat()
        if info.st_uid == account.pw_uid:
            ok = info.st_mode & stat.S_IXUSR
        elif info.st_gid in groups:
            ok = info.st_mode & stat.S_IXGRP
        else:
            ok = info.st_mode & stat.S_IXOTH
        if not ok:
            return part
    return None


def _warn_about(run_dir: Path, user: str | None) -> None:
    """As root: say when nginx's workers cannot reach ``run_dir``, or run as root for want of another account."""
    if user is None or os.geteuid() != 0:
        return
    if pwd.getpwnam(user).pw_uid == 0:
        print(f"warning: nginx's workers will run as {user}: no other account can enter {run_dir.resolve()}; "
              "use a folder www-data can reach (e.g. under /srv) or pass --user", file=sys.stderr)
        return
    blocked = unreachable(run_dir, user)
    if blocked is not None:
        print(f"warning: nginx's workers run as {user}, who cannot enter {blocked}: request bodies over 16 KiB "
              f"would fail; choose a folder they can reach (or chmod o+x {blocked})", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ludoteca.web.proxy",
                                     description="print an nginx configuration for several ludoteca workers")
    parser.add_argument("--worker", action="append", required=True, metavar="HOST:PORT",
                        help="a `ludoteca serve` worker (repeat for each)")
    parser.add_argument("--listen", default="127.0.0.1:8080", metavar="HOST:PORT",
                        help="where nginx listens (default 127.0.0.1:8080)")
    parser.add_argument("--server-name", default="_", help="the site's host name (default: any)")
    parser.add_argument("--run-dir", type=Path, default=None,
                        help="print a whole nginx.conf keeping its pid, logs and temporary files in this "
                             "folder; without it, the blocks for nginx's http {} (conf.d)")
    parser.add_argument("--user", default=None,
                        help="with --run-dir, the account of nginx's workers when nginx runs as root (default: "
                             "the folder's owner, or www-data when root owns it)")
    args = parser.parse_args(argv)
    try:
        if args.run_dir is None:
            text = site_config(args.worker, args.listen, args.server_name)
        else:
            user = args.user or worker_user(args.run_dir)
            text = standalone_config(args.worker, args.run_dir, args.listen, user=user)
            _warn_about(args.run_dir, user)
    except ValueError as exc:
        parser.error(str(exc))
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
