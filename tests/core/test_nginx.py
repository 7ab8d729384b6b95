"""docker/nginx.conf for real, where Debian's nginx is installed (`apt-get install nginx-light`):
the same file with the compose service names swapped for two local Daphne processes. Plain HTTP
redirects; over TLS a page and a WebSocket pass through, and with one Daphne killed both still
do, on the other one."""

from __future__ import annotations

import datetime
import shutil
import signal
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from tools import procs

from ..conftest import ROOT

NGINX = shutil.which("nginx") or (Path("/usr/sbin/nginx") if Path("/usr/sbin/nginx").exists()
                                  else None)
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(NGINX is None, reason="nginx is not installed")]


def self_signed(directory: Path) -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(1).not_valid_before(now)
            .not_valid_after(now + datetime.timedelta(days=1)).sign(key, hashes.SHA256()))
    (directory / "fullchain.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (directory / "privkey.pem").write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))


def local_conf(tmp: Path, webs: list[int], http: int, https: int) -> Path:
    text = (ROOT / "docker" / "nginx.conf").read_text()
    for old, new in (("web1:8000", f"127.0.0.1:{webs[0]}"), ("web2:8000", f"127.0.0.1:{webs[1]}"),
                     ("listen 80;", f"listen 127.0.0.1:{http};"),
                     ("listen 443 ssl;", f"listen 127.0.0.1:{https} ssl;"),
                     ("/etc/nginx/certs", str(tmp)), ("/var/log/nginx", str(tmp)),
                     ("/run/nginx.pid", str(tmp / "nginx.pid"))):
        assert old in text, old
        text = text.replace(old, new)
    path = tmp / "nginx.conf"
    path.write_text(text)
    return path


def wait_for_tls(url: str, context: ssl.SSLContext, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5, context=context) as response:
                if response.status == 200:
                    return
        except OSError:
            if time.monotonic() > deadline:
                raise
        time.sleep(0.2)


def close_code(url: str, origin: str, **kwargs) -> int:
    """Open the home page's socket without signing in: Daphne accepts it, says why in a
    ``closing`` frame and closes it with 4401, so the code proves the handshake and a frame
    went both ways through nginx."""
    # A generous handshake wait: a random-order run once gave a fresh Daphne, behind nginx on
    # a machine busy with three other workers' sites, more than 10 s for its first socket.
    with connect(url, origin=origin, open_timeout=30, proxy=None, **kwargs) as ws:
        try:
            while True:
                ws.recv(timeout=10)
        except ConnectionClosed as closed:
            return closed.rcvd.code if closed.rcvd else 1006
    return 1000


def tail(path: Path, lines: int = 15) -> str:
    try:
        return f"--- {path.name} ---\n" + "\n".join(path.read_text(errors="replace")
                                                  .splitlines()[-lines:])
    except OSError:
        return f"--- {path.name}: none ---"


def test_nginx_passes_pages_and_sockets_to_whichever_web_process_is_up(tmp_path, redis_url):
    self_signed(tmp_path)
    *ports, http, https = procs.free_ports(4)
    conf = local_conf(tmp_path, ports, http, https)
    checked = subprocess.run([NGINX, "-t", "-c", str(conf), "-e", str(tmp_path / "t.log")],
                             capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr

    env = procs.site_env(f"sqlite:///{tmp_path / 'db.sqlite3'}", redis_url, tmp_path / "var")
    env["DEBUG"] = "1"  # no TLS redirect, default hosts
    webs = [procs.daphne(port, env, tmp_path, name=f"web{i + 1}") for i, port in enumerate(ports)]
    nginx = subprocess.Popen([NGINX, "-c", str(conf), "-e", str(tmp_path / "error.log"),
                              "-g", "daemon off;"], stderr=subprocess.PIPE)
    try:
        for web in webs:
            web.start()
        for web, port in zip(webs, ports, strict=True):
            assert procs.wait_http(f"http://127.0.0.1:{port}/healthz", 60, web), web.name
        tls = ssl.create_default_context()
        tls.check_hostname, tls.verify_mode = False, ssl.CERT_NONE
        base = f"https://127.0.0.1:{https}"
        wait_for_tls(f"{base}/healthz", tls)

        class NoRedirect(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args, **kwargs):
                return None

        with pytest.raises(urllib.error.HTTPError) as plain:
            urllib.request.build_opener(NoRedirect).open(f"http://127.0.0.1:{http}/t/X/")
        assert plain.value.code == 301
        assert plain.value.headers["Location"] == "https://127.0.0.1/t/X/"
        assert close_code(f"wss://127.0.0.1:{https}/ws/me/", base, ssl=tls) == 4401

        webs[0].kill(signal.SIGKILL)
        stalls = []
        for _ in range(4):  # least_conn would pick the dead one first: it is retried
            with urllib.request.urlopen(f"{base}/healthz", timeout=10, context=tls) as r:
                assert r.status == 200
            try:
                code = close_code(f"wss://127.0.0.1:{https}/ws/me/", base, ssl=tls)
            except TimeoutError:
                # Once in many CI runs (2026-12-02) a handshake here got no answer in 10 s,
                # and 50 runs by hand never did it again. A page reconnects, so this does once;
                # a second stall fails with nginx's and the web processes' logs.
                stalls.append(tail(tmp_path / "error.log") + tail(webs[1].stderr_path))
                if len(stalls) > 1:
                    raise AssertionError("socket handshakes through nginx stalled twice:\n"
                                         + "\n".join(stalls)) from None
                code = close_code(f"wss://127.0.0.1:{https}/ws/me/", base, ssl=tls)
            assert code == 4401
        if stalls:
            print("one socket handshake through nginx stalled and was retried:", *stalls)
    finally:
        nginx.send_signal(signal.SIGQUIT)
        try:
            nginx.wait(timeout=10)
        except subprocess.TimeoutExpired:
            nginx.kill()
        for web in webs:
            web.stop()
        time.sleep(0.1)
