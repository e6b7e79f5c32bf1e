#!/usr/bin/env python3
"""A loopback proxy in front of a plain-HTTP registry, for the image tests.

  --bearer USER:PASS   require a bearer token; /token hands it out after
                       basic auth with USER:PASS (empty: anonymous)
  --drop-once          for each blob: send the headers and half the body,
                       then drop the connection; later requests (Range) pass
  --corrupt            flip one byte of every blob body
  --truncate           serve blob bodies cut in half (Content-Length too)
  --fail-first N       answer the first N requests with 503
  --stall              send half of each blob, then hang (for kill tests)
  --blob-store LOG     answer blob GETs (once authorized) with a 307 to a
                       second server on another port, a "blob store" that
                       fetches the blob from the upstream and serves it
                       (--corrupt applies there); it appends every request
                       it gets, with all its headers, to LOG as a JSON line
Every request line (with Range and the Authorization scheme, `-` for none)
is appended to --log.
"""
import argparse, base64, http.client, json, http.server, socketserver, sys, threading

a = argparse.ArgumentParser()
a.add_argument("--port", type=int, required=True)
a.add_argument("--upstream", required=True)
a.add_argument("--log", required=True)
a.add_argument("--bearer")
a.add_argument("--drop-once", action="store_true")
a.add_argument("--corrupt", action="store_true")
a.add_argument("--truncate", action="store_true")
a.add_argument("--fail-first", type=int, default=0)
a.add_argument("--stall", action="store_true")
a.add_argument("--blob-store")
args = a.parse_args()
lock = threading.Lock()
dropped = set()
state = {"fails": args.fail_first}
TOKEN = "tok-" + "x" * 20

class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send_body(self, code, body, ctype="application/json", extra=()):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        with lock, open(args.log, "a") as f:
            f.write("%s %s %s auth=%s\n" % (self.command, self.path, self.headers.get("Range", "-"),
                                            self.headers.get("Authorization", "-").split(" ")[0]))
        if self.path == "/ping":
            return self.send_body(200, b"ok", "text/plain")
        if self.path.startswith("/token"):
            if args.bearer and args.bearer.split(":")[0]:
                want = "Basic " + base64.b64encode(args.bearer.encode()).decode()
                if self.headers.get("Authorization") != want:
                    return self.send_body(401, b'{"errors":[{"code":"UNAUTHORIZED","message":"bad credentials"}]}')
            return self.send_body(200, ('{"token":"%s"}' % TOKEN).encode())
        with lock:
            if state["fails"] > 0:
                state["fails"] -= 1
                return self.send_body(503, b'{"errors":[{"code":"UNAVAILABLE","message":"try later"}]}')
        if args.bearer and self.headers.get("Authorization") != "Bearer " + TOKEN:
            chal = 'Bearer realm="http://127.0.0.1:%d/token",service="test"' % args.port
            return self.send_body(401, b'{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}',
                                  extra=[("WWW-Authenticate", chal)])
        if args.blob_store and self.command == "GET" and "/blobs/sha256:" in self.path:
            loc = "http://127.0.0.1:%d%s" % (store.server_address[1], self.path)
            return self.send_body(307, b"", "text/plain", extra=[("Location", loc)])
        c = http.client.HTTPConnection(args.upstream)
        hdrs = {k: v for k, v in self.headers.items() if k.lower() in ("accept", "range")}
        c.request(self.command, self.path, headers=hdrs)
        r = c.getresponse()
        body = r.read()
        blob = "/blobs/sha256:" in self.path and r.status in (200, 206)
        if blob and args.corrupt and body:
            body = bytes([body[0] ^ 1]) + body[1:]
        if blob and args.truncate:
            body = body[: len(body) // 2]
        self.send_response(r.status)
        for k, v in r.getheaders():
            if k.lower() not in ("content-length", "connection", "transfer-encoding"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if blob and args.stall:
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            threading.Event().wait(120)
            return
        if blob and args.drop_once and r.status == 200:
            with lock:
                first = self.path not in dropped
                dropped.add(self.path)
            if first and len(body) > 1:
                self.wfile.write(body[: len(body) // 2])
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(2)
                return
        if self.command != "HEAD":
            self.wfile.write(body)

    do_HEAD = do_GET

class Store(H):
    """The blob store a registry redirects to: logs each request's headers,
    serves the blob from the upstream, no auth of its own."""

    def do_GET(self):
        with lock, open(args.blob_store, "a") as f:
            f.write(json.dumps({"method": self.command, "path": self.path,
                                "headers": dict(self.headers.items())}) + "\n")
        c = http.client.HTTPConnection(args.upstream)
        hdrs = {k: v for k, v in self.headers.items() if k.lower() == "range"}
        c.request(self.command, self.path, headers=hdrs)
        r = c.getresponse()
        body = r.read()
        if args.corrupt and r.status in (200, 206) and body:
            body = bytes([body[0] ^ 1]) + body[1:]
        self.send_response(r.status)
        self.send_header("Content-Type", r.getheader("Content-Type", "application/octet-stream"))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_HEAD = do_GET

class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True

if args.blob_store:
    store = S(("127.0.0.1", 0), Store)
    threading.Thread(target=store.serve_forever, daemon=True).start()
S(("127.0.0.1", args.port), H).serve_forever()
