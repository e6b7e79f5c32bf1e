#!/usr/bin/env python3
"""Layer contents and manifest media types for tests/integration/image_content.bats
(test-only tool; images themselves come from mkimage.py).

  mkcontent.py nodes OUT.tar
      A layer with dev/sda (block 8:0), dev/mem (char 1:1), both 0666, and
      a FIFO `fifo` at 0666; every entry's mtime is 1000000000.
  mkcontent.py zeros OUT.tar MIB
      A layer of one file, `zeros`, of MIB MiB of zero bytes.
  mkcontent.py nopad OUT.tar FULL.tar [--go]
      A small layer written twice: FULL.tar as tar writes it (end-of-archive
      blocks, padded to a 10 KiB record; --go: just the two end blocks, as
      Go's archive/tar), OUT.tar the same bytes cut right after the last
      entry's data (what older zstd:chunked writers produced).
  mkcontent.py edit LAYOUT TAG [--layer-mt MT] [--config-mt MT] [--body-mt MT|none]
                    [--desc-mt MT|none] [--artifact-type T] [--replace-layer BLOB]
                    [--entry-mt MT]
      Rewrites the manifest (or index: --entry-mt, its entries' type) tagged TAG:
      layer and config descriptor types,
      layer 0's blob (BLOB's bytes; the config and its diff_ids stay),
      the body's own mediaType (none: removed), index.json's descriptor type
      of it (none: removed), an artifactType.  The new manifest blob and
      its descriptor replace the old one under the same tag.
  mkcontent.py serve LAYOUT PORTFILE [--ctype MT]
      A registry on 127.0.0.1 serving LAYOUT (any repository name; tags from
      ref.name annotations); manifests carry Content-Type MT when given,
      else their index.json descriptor's type.  Writes its port to PORTFILE.
"""
import argparse, hashlib, http.server, io, json, os, sys, tarfile


def put_blob(layout, data):
    d = hashlib.sha256(data).hexdigest()
    os.makedirs(f"{layout}/blobs/sha256", exist_ok=True)
    with open(f"{layout}/blobs/sha256/{d}", "wb") as f:
        f.write(data)
    return "sha256:" + d, len(data)


def cmd_nodes(a):
    with tarfile.open(a.out, "w", format=tarfile.PAX_FORMAT) as t:
        for name, typ, maj, mi in (("dev/sda", tarfile.BLKTYPE, 8, 0),
                                   ("dev/mem", tarfile.CHRTYPE, 1, 1),
                                   ("fifo", tarfile.FIFOTYPE, 0, 0)):
            ti = tarfile.TarInfo(name)
            ti.type, ti.devmajor, ti.devminor, ti.mode, ti.mtime = typ, maj, mi, 0o666, 1000000000
            t.addfile(ti)


def cmd_zeros(a):
    class Z:
        def __init__(s, n): s.n = n
        def read(s, k=-1):
            k = s.n if k < 0 else min(k, s.n); s.n -= k; return b"\0" * k
    ti = tarfile.TarInfo("zeros"); ti.size = a.mib << 20
    with tarfile.open(a.out, "w") as t:
        t.addfile(ti, Z(ti.size))


def cmd_nopad(a):
    buf = io.BytesIO()
    t = tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT)
    for name, data in (("hello", b"hello from a chunked layer\n"), ("etc/x", b"x" * 700)):
        ti = tarfile.TarInfo(name); ti.size = len(data); ti.mode = 0o644; ti.mtime = 1000000000
        t.addfile(ti, io.BytesIO(data))
    end = buf.tell()
    t.close()
    full = buf.getvalue()
    if a.go:
        full = full[:end + 1024]
    assert full[end:] == b"\0" * (len(full) - end) and end % 512 == 0
    open(a.full, "wb").write(full)
    open(a.out, "wb").write(full[:end])


def cmd_edit(a):
    lay = a.layout
    idx = json.load(open(f"{lay}/index.json"))
    desc = [m for m in idx["manifests"]
            if m.get("annotations", {}).get("org.opencontainers.image.ref.name") == a.tag][0]
    man = json.load(open(f"{lay}/blobs/sha256/{desc['digest'][7:]}"))
    if a.entry_mt:
        for e in man["manifests"]:
            e["mediaType"] = a.entry_mt
    if a.replace_layer:
        man["layers"][0]["digest"], man["layers"][0]["size"] = put_blob(lay, open(a.replace_layer, "rb").read())
    if a.layer_mt:
        for l in man["layers"]:
            l["mediaType"] = a.layer_mt
    if a.config_mt:
        man["config"]["mediaType"] = a.config_mt
    if a.artifact_type:
        man["artifactType"] = a.artifact_type
    if a.body_mt == "none":
        man.pop("mediaType", None)
    elif a.body_mt:
        man["mediaType"] = a.body_mt
    desc["digest"], desc["size"] = put_blob(lay, json.dumps(man).encode())
    if a.desc_mt == "none":
        desc.pop("mediaType", None)
    elif a.desc_mt:
        desc["mediaType"] = a.desc_mt
    with open(f"{lay}/index.json", "w") as f:
        json.dump(idx, f)
    print(desc["digest"])


def cmd_serve(a):
    lay = a.layout

    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *x):
            pass

        def send(self, code, body, ctype):
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command == "GET":
                self.wfile.write(body)

        def do_GET(self):
            p = self.path.split("?")[0]
            if p in ("/v2", "/v2/"):
                return self.send(200, b"{}", "application/json")
            idx = json.load(open(f"{lay}/index.json"))["manifests"]
            if "/manifests/" in p:
                ref = p.rsplit("/manifests/", 1)[1]
                ds = [m for m in idx if m["digest"] == ref
                      or m.get("annotations", {}).get("org.opencontainers.image.ref.name") == ref]
                digest = ds[0]["digest"] if ds else ref
                ctype = a.ctype or (ds[0].get("mediaType") if ds else None) or "application/json"
            elif "/blobs/" in p:
                digest, ctype = p.rsplit("/blobs/", 1)[1], "application/octet-stream"
            else:
                digest = ""
            path = f"{lay}/blobs/sha256/{digest[7:]}"
            if not digest.startswith("sha256:") or not os.path.isfile(path):
                return self.send(404, b'{"errors":[{"code":"MANIFEST_UNKNOWN","message":"unknown"}]}',
                                 "application/json")
            return self.send(200, open(path, "rb").read(), ctype)

        do_HEAD = do_GET

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    with open(a.portfile + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(a.portfile + ".tmp", a.portfile)
    srv.serve_forever()


p = argparse.ArgumentParser()
sub = p.add_subparsers(dest="action", required=True)
x = sub.add_parser("nodes"); x.add_argument("out")
x = sub.add_parser("zeros"); x.add_argument("out"); x.add_argument("mib", type=int)
x = sub.add_parser("nopad"); x.add_argument("out"); x.add_argument("full"); x.add_argument("--go", action="store_true")
x = sub.add_parser("edit"); x.add_argument("layout"); x.add_argument("tag")
for o in ("--layer-mt", "--config-mt", "--body-mt", "--desc-mt", "--artifact-type", "--replace-layer",
          "--entry-mt"):
    x.add_argument(o)
x = sub.add_parser("serve"); x.add_argument("layout"); x.add_argument("portfile"); x.add_argument("--ctype")
a = p.parse_args()
{"nodes": cmd_nodes, "zeros": cmd_zeros, "nopad": cmd_nopad, "edit": cmd_edit,
 "serve": cmd_serve}[a.action](a)
