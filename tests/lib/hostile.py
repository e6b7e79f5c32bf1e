#!/usr/bin/env python3
"""A hostile (or strict) registry for the image tests: python3's http.server
on 127.0.0.1 only, serving one tiny image it builds itself (one plain tar
layer holding /hello), and exiting by itself after --lifetime seconds.

  hostile.py --port P --mode MODE [--lifetime S] [--log FILE]
             [--cert CRT --key KEY]

MODE:
  ok                 serves the image (any repository name, any tag)
  endless-error      manifests: 404 with a body that never ends
  endless-blob-error manifests served; blobs: 403 with a body that never ends
  endless-token      401 with a Bearer challenge; the token endpoint answers
                     200 with a body that never ends
  trickle            blobs: 200 with the right Content-Length, 2 bytes every
                     0.2 s
  basic              Basic auth, user tester / password s3cret
  bearer-private     Bearer tokens: tester:s3cret gets a token that reads the
                     repository, anonymous gets one that does not (Docker
                     Hub's private repositories), wrong credentials get 401
  big-config         the config blob is served with 100 bytes too many
  bad-config-json    the image's config (digest and size right) is not JSON
--cert/--key: serve HTTPS with that certificate.
Every request line is appended to --log.
"""
import argparse, base64, hashlib, io, json, http.server, os, socketserver, ssl
import tarfile, threading, time

a = argparse.ArgumentParser()
a.add_argument("--port", type=int, required=True)
a.add_argument("--mode", required=True)
a.add_argument("--lifetime", type=float, default=60)
a.add_argument("--log", default=os.devnull)
a.add_argument("--cert")
a.add_argument("--key")
args = a.parse_args()

# Bounded in time whatever happens: no test leaves this server behind.
threading.Timer(args.lifetime, lambda: os._exit(0)).start()

def digest(b):
    return "sha256:" + hashlib.sha256(b).hexdigest()

def build_image(mode):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        data = b"hello from a hostile registry\n" * 64
        ti = tarfile.TarInfo("hello")
        ti.size, ti.mode, ti.mtime = len(data), 0o644, 0
        t.addfile(ti, io.BytesIO(data))
    layer = buf.getvalue()
    if mode == "bad-config-json":
        config = b'{"architecture": "amd64", this is not JSON'
    else:
        config = json.dumps({
            "architecture": "amd64", "os": "linux",
            "config": {"Cmd": ["/bin/sh"]},
            "rootfs": {"type": "layers", "diff_ids": [digest(layer)]},
        }).encode()
    manifest = json.dumps({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                   "digest": digest(config), "size": len(config)},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar",
                    "digest": digest(layer), "size": len(layer)}],
    }).encode()
    blobs = {digest(layer): layer, digest(config): config}
    if mode == "big-config":
        blobs[digest(config)] = config + b" " * 100
    return manifest, blobs

MANIFEST, BLOBS = build_image(args.mode)
GOOD, ANON = "good-token", "anon-token"
USERPASS = "tester:s3cret"

class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def reply(self, code, body, ctype="application/json", extra=()):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def endless(self, code, ctype="application/json"):
        """A chunked body that never ends: until the client goes away or
        the server's lifetime is over."""
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        chunk = b'{"errors":[' + b" " * 16000
        try:
            while True:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        except OSError:
            pass
        self.close_connection = True

    def trickle(self, body):
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            for i in range(0, len(body), 2):
                self.wfile.write(body[i:i + 2])
                self.wfile.flush()
                time.sleep(0.2)
        except OSError:
            pass
        self.close_connection = True

    def challenge(self, bearer):
        if bearer:
            chal = ('Bearer realm="http://127.0.0.1:%d/token",service="hostile",'
                    'scope="repository:test/img:pull"' % args.port)
        else:
            chal = 'Basic realm="hostile"'
        return self.reply(401, b'{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}',
                          extra=[("WWW-Authenticate", chal)])

    def token(self):
        auth = self.headers.get("Authorization")
        if args.mode == "endless-token":
            return self.endless(200)
        if auth is None:
            tok = ANON
        elif auth == "Basic " + base64.b64encode(USERPASS.encode()).decode():
            tok = GOOD
        else:
            return self.reply(401, b'{"errors":[{"code":"UNAUTHORIZED","message":"bad credentials"}]}')
        return self.reply(200, json.dumps({"token": tok}).encode())

    def authorized(self):
        auth = self.headers.get("Authorization")
        if args.mode == "basic":
            return auth == "Basic " + base64.b64encode(USERPASS.encode()).decode()
        if args.mode in ("bearer-private", "endless-token"):
            return auth == "Bearer " + GOOD
        return True

    def do_GET(self):
        with open(args.log, "a") as f:
            f.write("%s %s auth=%s\n" % (self.command, self.path,
                                         self.headers.get("Authorization", "-").split(" ")[0]))
        p = self.path
        if p == "/ping":
            return self.reply(200, b"ok", "text/plain")
        if p.startswith("/token"):
            return self.token()
        if not p.startswith("/v2/"):
            return self.reply(404, b"{}")
        if not self.authorized():
            return self.challenge(args.mode != "basic")
        if p == "/v2/":
            return self.reply(200, b"{}")
        if "/manifests/" in p:
            if args.mode == "endless-error":
                return self.endless(404)
            return self.reply(200, MANIFEST, "application/vnd.oci.image.manifest.v1+json",
                              extra=[("Docker-Content-Digest", digest(MANIFEST))])
        if "/blobs/" in p:
            d = p.rsplit("/", 1)[1]
            if args.mode == "endless-blob-error":
                return self.endless(403)
            if d not in BLOBS:
                return self.reply(404, b'{"errors":[{"code":"BLOB_UNKNOWN","message":"blob unknown"}]}')
            if args.mode == "trickle":
                return self.trickle(BLOBS[d])
            return self.reply(200, BLOBS[d], "application/octet-stream")
        return self.reply(404, b"{}")

    do_HEAD = do_GET

class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True

srv = S(("127.0.0.1", args.port), H)
if args.cert:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(args.cert, args.key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
srv.serve_forever()
