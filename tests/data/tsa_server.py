#!/usr/bin/env python3
# tsa_server.py DIR: a time-stamping authority for the tests, on loopback:
# each POST of a time-stamp request is answered by `openssl ts -reply`
# with the TSA of DIR (tsa.cnf, made by tsa_lib.sh). It binds a free port
# of the kernel's choosing and writes it to DIR/port once it listens.
# DIR/mode, read at each request, says how to answer: "ok" (or missing),
# "refuse" (HTTP 500), "reject" (a reply with status rejection), or
# "other:HEX" (a valid token over the SHA-256 HEX instead of the one asked).
# SPDX-License-Identifier: MIT
import http.server
import os
import subprocess
import sys
import tempfile

DIR = sys.argv[1]


def mode():
    try:
        with open(os.path.join(DIR, "mode")) as f:
            return f.read().strip() or "ok"
    except FileNotFoundError:
        return "ok"


def reply(query, m):
    with tempfile.TemporaryDirectory() as t:
        q, r = os.path.join(t, "q.tsq"), os.path.join(t, "r.tsr")
        with open(q, "wb") as f:
            f.write(query)
        args = ["openssl", "ts", "-reply", "-config",
                os.path.join(DIR, "tsa.cnf"), "-queryfile", q, "-out", r]
        if m.startswith("other:"):
            # A request of our own over another digest: the nonce is ours.
            subprocess.run(["openssl", "ts", "-query", "-digest", m[6:],
                            "-sha256", "-cert", "-out", q], check=True,
                           stdout=subprocess.DEVNULL)
        p = subprocess.run(args, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE)
        if p.returncode != 0:
            return None
        with open(r, "rb") as f:
            return f.read()


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        query = self.rfile.read(n)
        m = mode()
        if m == "refuse":
            self.send_error(500, "refused")
            return
        if m == "reject":
            query = b"not a request"
        body = reply(query, m)
        if body is None:
            self.send_error(500, "openssl ts failed")
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/timestamp-reply")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
with open(os.path.join(DIR, "port.tmp"), "w") as f:
    f.write(str(server.server_address[1]))
os.rename(os.path.join(DIR, "port.tmp"), os.path.join(DIR, "port"))
server.serve_forever()
