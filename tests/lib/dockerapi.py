#!/usr/bin/env python3
"""Just enough of the Docker API on a unix socket for docker-daemon: tests.

  dockerapi.py SOCKET NAME:TAG=FILE...

`GET /images/NAME%3ATAG/get` answers FILE (a `docker save` tar); any other
image is a 404 with Docker's JSON error.
"""
import http.server, socketserver, sys, urllib.parse

images = dict(a.split("=", 1) for a in sys.argv[2:])

class H(http.server.BaseHTTPRequestHandler):
    def address_string(s):
        return "unix"

    def log_message(s, *a):
        pass

    def do_GET(s):
        p = s.path.split("/")
        name = urllib.parse.unquote(p[2]) if len(p) == 4 and p[1] == "images" and p[3] == "get" else None
        if name in images:
            code, body = 200, open(images[name], "rb").read()
        else:
            code, body = 404, b'{"message":"No such image"}'
        s.send_response(code)
        s.send_header("Content-Length", str(len(body)))
        s.end_headers()
        s.wfile.write(body)

class S(socketserver.UnixStreamServer):
    def get_request(s):
        r, _ = super().get_request()
        return r, ["unix", 0]

S(sys.argv[1], H).serve_forever()
