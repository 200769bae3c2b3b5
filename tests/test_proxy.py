"""nginx in front of ludoteca workers (web/proxy.py): the configuration, and a real nginx.

A real nginx (Debian's package), run as the current user with its pid, logs and temporary files
in a temporary folder, listens on a free loopback port in front of real ``ludoteca serve``
processes. Each worker has its own database for now (they do not share live tables yet), so the
round robin is checked on the health endpoint, and the websocket goes through a proxy in front of
the one worker that has the table. Outside CI the nginx tests are skipped when nginx is missing;
under ``CI=true`` that is a failure (tests/ci_required.py).
"""

from __future__ import annotations

import json
import os
import pwd
import random
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest

from ludoteca.web.proxy import check_address, main, site_config, standalone_config

NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)

pytestmark = pytest.mark.timeout(180)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _user() -> str | None:
    """nginx started as root runs its workers as this account (root itself here: the temporary
    folders are private to it)."""
    return pwd.getpwuid(os.getuid()).pw_name if os.geteuid() == 0 else None


@contextmanager
def running_nginx(folder: Path, workers: list[str], config: str | None = None,
                  port: int | None = None) -> Iterator[str]:
    """A real nginx in front of ``workers`` (or with the whole ``config`` given, listening on ``port``);
    yields its base URL."""
    if NGINX is None:
        pytest.skip("nginx is missing (apt-get install nginx-light)")
    folder.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    conf = folder / "nginx.conf"
    conf.write_text(config or standalone_config(workers, folder, f"127.0.0.1:{port}", user=_user()))
    proc = subprocess.Popen([NGINX, "-p", str(folder), "-c", str(conf), "-e", str(folder / "error.log"),
                             "-g", "daemon off;"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    err = proc.stderr.read().decode() if proc.stderr else ""
                    log = (folder / "error.log").read_text() if (folder / "error.log").exists() else ""
                    raise RuntimeError(f"nginx did not start: {err}\n{log}") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def upstreams(folder: Path) -> list[str]:
    """The worker of each request in nginx's access log (in order)."""
    return re.findall(r"upstream=(\S+)", (folder / "access.log").read_text())


# --- the configuration -------------------------------------------------------------------------

def test_the_site_config_has_every_worker_websockets_and_safe_retries() -> None:
    text = site_config(["127.0.0.1:8001", "10.0.0.2:8002", "[::1]:8003"], "0.0.0.0:80")
    for worker in ("127.0.0.1:8001", "10.0.0.2:8002", "[::1]:8003"):
        assert f"server {worker} " in text
    assert "proxy_set_header Upgrade $http_upgrade;" in text
    assert "proxy_set_header Host $http_host;" in text
    assert "proxy_next_upstream error timeout http_502 http_503;" in text
    assert "listen 0.0.0.0:80 default_server;" in text  # requests by IP reach ludoteca, not another site
    directives = "\n".join(line.split("#")[0] for line in text.splitlines())  # without the comments
    assert "non_idempotent" not in directives  # a POST that reached a worker is never sent again
    assert "keepalive" not in directives  # no kept connection pinning every request to one process
    assert "ip_hash" not in directives and "sticky" not in directives and "hash " not in directives


@pytest.mark.parametrize("bad", ["", "127.0.0.1", "127.0.0.1:0", "127.0.0.1:70000", "host:port", "a b:80",
                                 "1.2.3.4:80;evil", "x{:80", "$host:80", ":80"])
def test_bad_addresses_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="host:port"):
        check_address(bad)
    with pytest.raises(ValueError):
        site_config([bad])


def test_bad_arguments_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="workers"):
        site_config([])
    with pytest.raises(ValueError, match="workers"):
        site_config(["127.0.0.1:8001"] * 65)
    with pytest.raises(ValueError, match="characters nginx would misread"):
        standalone_config(["127.0.0.1:8001"], tmp_path / "a folder")
    with pytest.raises(ValueError, match="user"):
        standalone_config(["127.0.0.1:8001"], tmp_path, user="root; evil")


def test_the_command_line_prints_a_config(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["--worker", "127.0.0.1:8001", "--worker", "127.0.0.1:8002", "--listen", "127.0.0.1:9000"]) == 0
    out = capsys.readouterr().out
    assert "upstream ludoteca {" in out and "listen 127.0.0.1:9000 default_server;" in out and "pid " not in out
    assert main(["--worker", "127.0.0.1:8001", "--run-dir", str(tmp_path)]) == 0
    assert f"pid {tmp_path.resolve()}/nginx.pid;" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["--worker", "nope"])
    assert "host:port" in capsys.readouterr().err


@pytest.mark.nginx
def test_nginx_accepts_the_configuration(tmp_path: Path) -> None:
    if NGINX is None:
        pytest.skip("nginx is missing (apt-get install nginx-light)")
    conf = tmp_path / "nginx.conf"
    conf.write_text(standalone_config([f"127.0.0.1:{8001 + i}" for i in range(5)], tmp_path, "127.0.0.1:18080",
                                      user=_user()))
    done = subprocess.run([NGINX, "-t", "-p", str(tmp_path), "-c", str(conf), "-e", str(tmp_path / "error.log")],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    site = tmp_path / "site.conf"  # the conf.d form, inside a distribution-like http {}
    site.write_text(site_config(["127.0.0.1:8001", "127.0.0.1:8002"], "127.0.0.1:18081"))
    wrapper = tmp_path / "wrapper.conf"
    wrapper.write_text(f"pid {tmp_path}/w.pid;\nevents {{}}\nhttp {{\n"
                       f"    client_body_temp_path {tmp_path}/b; proxy_temp_path {tmp_path}/p;\n"
                       f"    include {site};\n}}\n")
    done = subprocess.run([NGINX, "-t", "-p", str(tmp_path), "-c", str(wrapper), "-e", str(tmp_path / "error.log")],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr


# --- a real nginx in front of real workers ------------------------------------------------------

@pytest.mark.nginx
def test_the_proxy_reaches_both_workers_in_turn(tmp_path: Path) -> None:
    httpx = pytest.importorskip("httpx")
    pytest.importorskip("fastapi")
    from ludoteca.web.launch import running_server

    with ExitStack() as stack:
        bases = [stack.enter_context(running_server(str(tmp_path / f"w{i}"))) for i in range(2)]
        workers = [b.removeprefix("http://") for b in bases]
        proxy = stack.enter_context(running_nginx(tmp_path / "nginx", workers))
        with httpx.Client(base_url=proxy, timeout=10) as http:
            for _ in range(10):
                res = http.get("/api/games")
                assert res.status_code == 200 and res.json()["games"]
                assert "default-src 'self'" in res.headers["content-security-policy"]  # the worker's headers
        seen = upstreams(tmp_path / "nginx")
        assert len(seen) == 10 and set(seen) == set(workers)
        assert max(seen.count(w) for w in workers) <= 6  # round robin, not one worker with the rest as spare


@pytest.mark.nginx
def test_a_worker_that_is_down_is_skipped_even_for_posts(tmp_path: Path) -> None:
    """A worker that cannot be reached never saw the request: nginx tries the next one, for GETs
    and for POSTs alike (what it never does is send a POST again after a worker received it)."""
    httpx = pytest.importorskip("httpx")
    pytest.importorskip("fastapi")
    from ludoteca.web.launch import running_server

    dead = f"127.0.0.1:{free_port()}"  # nothing listens there
    with running_server(str(tmp_path / "w")) as base, running_nginx(tmp_path / "nginx",
                                                                     [dead, base.removeprefix("http://")]) as proxy:
        with httpx.Client(base_url=proxy, timeout=10) as http:
            for _ in range(4):
                assert http.get("/api/games").status_code == 200
                made = http.post("/api/tables", json={"game": "tohm", "players": 2, "sit": 0, "name": "Ann"})
                assert made.status_code == 201, made.text
            listed = http.get("/api/tables").json()["tables"]
        assert len(listed) == 4  # each POST made one table: none was sent twice


def _recv_until(ws: Any, kind: str, limit: int = 200) -> dict[str, Any]:
    for _ in range(limit):
        message = json.loads(ws.recv(timeout=10))
        if message["type"] == kind:
            return message
    raise AssertionError(f"no {kind} message came")


def _settle(ws: Any, last: dict[str, Any]) -> dict[str, Any]:
    """The last position sent, once nothing more comes for half a second (chance, forced moves)."""
    while True:
        try:
            message = json.loads(ws.recv(timeout=0.5))
        except TimeoutError:
            return last
        if message["type"] in ("snapshot", "update"):
            last = message


@pytest.mark.nginx
def test_websockets_go_through_the_proxy(tmp_path: Path) -> None:
    httpx = pytest.importorskip("httpx")
    pytest.importorskip("fastapi")
    ws_client = pytest.importorskip("websockets.sync.client")
    from websockets.exceptions import InvalidStatus

    from ludoteca.web.launch import running_server

    with running_server(str(tmp_path / "w")) as base, running_nginx(tmp_path / "nginx",
                                                                     [base.removeprefix("http://")]) as proxy:
        ws_base = proxy.replace("http://", "ws://")
        with httpx.Client(base_url=proxy, timeout=10) as http:
            made = http.post("/api/tables", json={"game": "tohm", "players": 2, "sit": 0, "name": "Ann",
                                                  "seats": [{"kind": "open"}, {"kind": "open"}]})
            assert made.status_code == 201, made.text
            table = made.json()["id"]
            bob = http.post(f"/api/tables/{table}/join", json={"seat": 1, "name": "Bob"})
            assert bob.status_code == 200, bob.text
        tokens = {0: made.json()["token"], 1: bob.json()["token"]}
        # as a browser on the proxy's address: the Origin matches the Host nginx passes on
        with ws_client.connect(f"{ws_base}/ws/{table}", origin=proxy) as ann, \
                ws_client.connect(f"{ws_base}/ws/{table}", origin=proxy) as bobws:
            sockets = {0: ann, 1: bobws}
            states = {}
            for seat, ws in sockets.items():
                _recv_until(ws, "snapshot")
                ws.send(json.dumps({"type": "auth", "token": tokens[seat]}))
                states[seat] = _recv_until(ws, "snapshot")
                assert states[seat]["you"] == seat
            rng = random.Random(3)
            for _ in range(3):  # a few moves, each seen by both players through the proxy
                mover = states[0]["to_move"]
                seq = states[mover]["seq"]
                sockets[mover].send(json.dumps({"type": "action", "action": rng.choice(states[mover]["legal"]),
                                                "seq": seq}))
                for seat, ws in sockets.items():
                    states[seat] = _settle(ws, _recv_until(ws, "update"))
                    assert states[seat]["seq"] > seq
                assert states[0]["seq"] == states[1]["seq"]
        # another site's page is refused at the handshake, through the proxy as directly
        with pytest.raises(InvalidStatus) as refused:
            ws_client.connect(f"{ws_base}/ws/{table}", origin="http://evil.example")
        assert refused.value.response.status_code == 403


# --- what a club's admin runs -------------------------------------------------------------------

LARGE = {"game": "tohm", "players": 2, "sit": 0, "name": "Ann", "note": "x" * 20_000}
"""A table creation whose body is over 16 KiB: nginx writes it to its client_body folder."""


def _config_from_the_command(run_dir: Path, worker: str, port: int,
                             capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    """``python -m ludoteca.web.proxy --run-dir DIR`` as the admin runs it (no user given): what it
    prints, and its warnings."""
    capsys.readouterr()
    assert main(["--worker", worker, "--listen", f"127.0.0.1:{port}", "--run-dir", str(run_dir)]) == 0
    out = capsys.readouterr()
    return out.out, out.err


@pytest.mark.nginx
@pytest.mark.skipif(os.geteuid() != 0, reason="the admin runs nginx as root: only root can test that")
@pytest.mark.parametrize("where", ["private", "shared"])
def test_the_command_run_as_root_lets_nginx_take_large_bodies(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              where: str) -> None:
    """Run as root, the command names nginx's workers' account: with the folder in a private place
    (pytest's, 0700 on the way) they run as root, with a warning; in a place www-data can reach, as
    www-data. Either way a POST over 16 KiB goes through (nginx answered 500 before)."""
    httpx = pytest.importorskip("httpx")
    pytest.importorskip("fastapi")
    import tempfile

    from ludoteca.web.launch import running_server

    shared = Path(tempfile.mkdtemp(prefix="ludoteca-nginx-", dir="/tmp"))
    try:
        shared.chmod(0o755)
        run_dir = tmp_path / "nginx" if where == "private" else shared / "nginx"
        with running_server(str(tmp_path / "w")) as base:
            port = free_port()
            config, warned = _config_from_the_command(run_dir, base.removeprefix("http://"), port, capsys)
            user = re.search(r"^user (\S+);", config, re.M)
            assert user is not None, config
            assert user.group(1) == ("root" if where == "private" else "www-data")
            assert ("no other account can enter" in warned) == (where == "private")
            with running_nginx(run_dir, [], config=config, port=port) as proxy, \
                    httpx.Client(base_url=proxy, timeout=10) as http:
                res = http.post("/api/tables", json=LARGE)
                assert res.status_code == 201, (res.status_code, res.text[:300])
                assert res.json()["table"]["seats"][0]["name"] == "Ann"
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def test_as_an_ordinary_user_no_user_line_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ludoteca.web import proxy

    monkeypatch.setattr(proxy.os, "geteuid", lambda: 1000)
    assert proxy.worker_user(tmp_path) is None
    assert not standalone_config(["127.0.0.1:8001"], tmp_path).startswith("user ")


@pytest.mark.nginx
def test_requests_by_ip_reach_ludoteca_even_beside_another_site(tmp_path: Path) -> None:
    """Our site is nginx's default server on its port: a request by IP address (or with a Host no site
    names) gets ludoteca, not another site included before it; and Debian's own default site, left
    enabled, makes ``nginx -t`` fail with a clear "duplicate default server" (the docs say to remove it)."""
    httpx = pytest.importorskip("httpx")
    pytest.importorskip("fastapi")
    from ludoteca.web.launch import running_server

    if NGINX is None:
        pytest.skip("nginx is missing (apt-get install nginx-light)")
    port = free_port()
    folder = tmp_path / "nginx"
    folder.mkdir()
    other = folder / "aaa-other.conf"  # included first, as sites-enabled/default would be
    other.write_text(f"server {{ listen 127.0.0.1:{port}; server_name other.example;\n"
                     f"    location / {{ return 200 'Welcome to nginx'; }} }}\n")
    with running_server(str(tmp_path / "w")) as base:
        site = folder / "ludoteca.conf"
        site.write_text(site_config([base.removeprefix("http://")], f"127.0.0.1:{port}", "games.example.org"))
        user = f"user {_user()};\n" if _user() else ""
        wrapper = (f"{user}pid {folder}/nginx.pid;\nerror_log {folder}/error.log warn;\nevents {{}}\nhttp {{\n"
                   f"    client_body_temp_path {folder}/b; proxy_temp_path {folder}/p;\n"
                   f"    access_log {folder}/access.log;\n"
                   f"    include {other};\n    include {site};\n}}\n")
        with running_nginx(folder, [], config=wrapper, port=port) as proxy, \
                httpx.Client(base_url=proxy, timeout=10) as http:
            by_ip = http.get("/api/games")  # Host: 127.0.0.1:PORT
            assert by_ip.status_code == 200 and by_ip.json()["games"], by_ip.text[:200]
            assert http.get("/api/games", headers={"Host": "games.example.org"}).json()["games"]
            assert http.get("/", headers={"Host": "other.example"}).text == "Welcome to nginx"
        other.write_text(f"server {{ listen 127.0.0.1:{port} default_server; server_name _;\n"
                         f"    location / {{ return 200 'Welcome to nginx'; }} }}\n")
        done = subprocess.run([NGINX, "-t", "-p", str(folder), "-c", str(folder / "nginx.conf"),
                               "-e", str(folder / "error.log")], capture_output=True, text=True, timeout=30)
        assert done.returncode != 0 and "duplicate default server" in done.stderr


@pytest.mark.nginx
@pytest.mark.postgres
@pytest.mark.redis
def test_through_nginx_requests_reach_both_processes_of_one_address(tmp_path: Path) -> None:
    """``ludoteca serve --workers 2`` on one port behind the generated nginx: one request after another,
    /readyz answers from both worker processes (each request has its own connection to the workers)."""
    from tests.cluster import private_redis
    from tests.test_serve_workers import _need_postgres, _need_redis, fresh_database, get, serving

    base_url = _need_postgres()
    _need_redis()
    with private_redis(tmp_path / "redis") as redis, fresh_database(base_url) as database, \
            serving(tmp_path, "--workers", "2", "--database", database, "--redis", redis.url) as server, \
            running_nginx(tmp_path / "nginx", [f"127.0.0.1:{server.port}"]) as front:
        seen: list[str] = []
        deadline = time.monotonic() + 60
        while len(set(seen)) < 2 and time.monotonic() < deadline:
            status, body = get(front + "/readyz")
            assert status == 200, body
            seen.append(body["worker"])
        assert len(set(seen)) == 2, f"{len(seen)} requests, all answered by {set(seen)}"
