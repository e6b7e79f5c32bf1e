#!/usr/bin/env python3
"""Builds OCI image layouts for the image tests (test-only tool).

  mkimage.py image LAYOUT [--tag T] [--arch A] [--variant V] [--compress gzip|zstd|none]
             [--entrypoint JSON] [--cmd JSON] [--user U] [--env JSON] [--workdir D]
             [--label K=V] [--port P] LAYER...
      LAYER: a directory (tarred, sorted) or a .tar file (used as is).
      Appends the manifest to LAYOUT/index.json (ref.name T when given).
      Prints the manifest digest.
  mkimage.py index LAYOUT --tag T
      Wraps the untagged manifests of index.json in an image index tagged T.
  mkimage.py docker-save LAYOUT TAG OUT.tar [--name N:T] [--containerd] [--bad-layer]
      Writes what Docker 25+ `docker save N:T` does for the image tagged TAG:
      an OCI layout (uncompressed layers, index.json annotated with
      io.containerd.image.name and ref.name) plus manifest.json and
      repositories.  --containerd: index.json points at an image index, as
      with the containerd image store.  --bad-layer: one byte of the layer
      blob flipped (its file keeps the old digest).  Prints the image
      manifest's digest.
  mkimage.py evil OUT.tar CASE
      Writes a malicious layer: dotdot, absolute, symlink, hardlink, whiteout.
"""
import argparse, gzip, hashlib, io, json, os, subprocess, sys, tarfile

def put_blob(layout, data):
    d = hashlib.sha256(data).hexdigest()
    os.makedirs(f"{layout}/blobs/sha256", exist_ok=True)
    with open(f"{layout}/blobs/sha256/{d}", "wb") as f:
        f.write(data)
    return "sha256:" + d, len(data)

def tar_dir(path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        for root, dirs, files in os.walk(path):
            dirs.sort()
            for n in sorted(dirs) + sorted(files):
                full = os.path.join(root, n)
                t.add(full, arcname=os.path.relpath(full, path), recursive=False)
    return buf.getvalue()

def load_index(layout):
    p = f"{layout}/index.json"
    if os.path.exists(p):
        return json.load(open(p))
    return {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": []}

def save_index(layout, idx):
    with open(f"{layout}/index.json", "w") as f:
        json.dump(idx, f)
    with open(f"{layout}/oci-layout", "w") as f:
        f.write('{"imageLayoutVersion":"1.0.0"}')

def cmd_image(a):
    os.makedirs(a.layout, exist_ok=True)
    layers, diff_ids = [], []
    for l in a.layers:
        raw = open(l, "rb").read() if os.path.isfile(l) else tar_dir(l)
        diff_ids.append("sha256:" + hashlib.sha256(raw).hexdigest())
        if a.compress == "gzip":
            data, mt = gzip.compress(raw, a.level, mtime=0), "application/vnd.oci.image.layer.v1.tar+gzip"
        elif a.compress == "zstd":
            data = subprocess.run(["zstd", "-q", "-c"], input=raw, stdout=subprocess.PIPE, check=True).stdout
            mt = "application/vnd.oci.image.layer.v1.tar+zstd"
        else:
            data, mt = raw, "application/vnd.oci.image.layer.v1.tar"
        d, n = put_blob(a.layout, data)
        layers.append({"mediaType": mt, "digest": d, "size": n})
    if a.bad_diff_id is not None:   # a config that lies about layer N's content
        diff_ids[a.bad_diff_id] = "sha256:" + hashlib.sha256(b"not this layer").hexdigest()
    if a.drop_diff_id:              # a config that lists fewer layers than the manifest
        diff_ids.pop()
    cfg = {"Env": json.loads(a.env) if a.env else ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"]}
    if a.entrypoint: cfg["Entrypoint"] = json.loads(a.entrypoint)
    if a.cmd: cfg["Cmd"] = json.loads(a.cmd)
    if a.user: cfg["User"] = a.user
    if a.workdir: cfg["WorkingDir"] = a.workdir
    if a.label: cfg["Labels"] = dict(kv.split("=", 1) for kv in a.label)
    if a.port: cfg["ExposedPorts"] = {p: {} for p in a.port}
    config = {"created": "2024-01-02T03:04:05Z", "architecture": a.arch, "os": "linux",
              "config": cfg, "rootfs": {"type": "layers", "diff_ids": diff_ids}}
    if a.variant: config["variant"] = a.variant
    cd, cn = put_blob(a.layout, json.dumps(config).encode())
    man = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
           "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cd, "size": cn},
           "layers": layers}
    md, mn = put_blob(a.layout, json.dumps(man).encode())
    desc = {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": md, "size": mn,
            "platform": {"os": "linux", "architecture": a.arch}}
    if a.variant: desc["platform"]["variant"] = a.variant
    if a.tag: desc["annotations"] = {"org.opencontainers.image.ref.name": a.tag}
    idx = load_index(a.layout)
    idx["manifests"] = [m for m in idx["manifests"]
                        if not a.tag or m.get("annotations", {}).get("org.opencontainers.image.ref.name") != a.tag]
    idx["manifests"].append(desc)
    save_index(a.layout, idx)
    print(md)

def cmd_index(a):
    idx = load_index(a.layout)
    untagged = [m for m in idx["manifests"] if "annotations" not in m]
    keep = [m for m in idx["manifests"] if "annotations" in m]
    body = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                       "manifests": untagged}).encode()
    d, n = put_blob(a.layout, body)
    keep.append({"mediaType": "application/vnd.oci.image.index.v1+json", "digest": d, "size": n,
                 "annotations": {"org.opencontainers.image.ref.name": a.tag}})
    idx["manifests"] = keep
    save_index(a.layout, idx)
    print(d)

def cmd_docker_save(a):
    lay = json.load(open(f"{a.layout}/index.json"))
    src = [m for m in lay["manifests"]
           if m.get("annotations", {}).get("org.opencontainers.image.ref.name") == a.tag][0]
    man = json.load(open(f"{a.layout}/blobs/sha256/{src['digest'][7:]}"))
    files = {}                      # path in the tar -> bytes
    def blob(data):
        d = hashlib.sha256(data).hexdigest()
        files[f"blobs/sha256/{d}"] = data
        return "sha256:" + d, len(data)
    cfg = open(f"{a.layout}/blobs/sha256/{man['config']['digest'][7:]}", "rb").read()
    cd, cn = blob(cfg)
    layers = []
    for l in man["layers"]:
        raw = open(f"{a.layout}/blobs/sha256/{l['digest'][7:]}", "rb").read()
        if l["mediaType"].endswith("+gzip"):
            raw = gzip.decompress(raw)
        elif l["mediaType"].endswith("+zstd"):
            raw = subprocess.run(["zstd", "-q", "-d", "-c"], input=raw, stdout=subprocess.PIPE, check=True).stdout
        d, n = blob(raw)
        layers.append({"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": d, "size": n})
    # Serialized unlike image/daemon.c's own manifest, so the digest tells
    # which one a pull used.
    md, mn = blob(json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                              "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                                         "digest": cd, "size": cn},
                              "layers": layers}, indent=2).encode())
    top = {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": md, "size": mn}
    if a.containerd:
        cfgj = json.loads(cfg)
        top = dict(zip(("digest", "size"), blob(json.dumps({
            "schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
            "manifests": [dict(top, platform={"architecture": cfgj["architecture"], "os": cfgj["os"]})]
        }).encode())), mediaType="application/vnd.oci.image.index.v1+json")
    name, tag = a.name.rsplit(":", 1)
    top["annotations"] = {"io.containerd.image.name": "docker.io/library/" + a.name,
                          "org.opencontainers.image.ref.name": tag}
    files["index.json"] = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                                      "manifests": [top]}).encode()
    files["oci-layout"] = b'{"imageLayoutVersion":"1.0.0"}'
    files["manifest.json"] = json.dumps([{"Config": "blobs/sha256/" + cd[7:], "RepoTags": [a.name],
                                          "Layers": ["blobs/sha256/" + l["digest"][7:] for l in layers]}]).encode()
    files["repositories"] = json.dumps({name: {tag: layers[-1]["digest"][7:]}}).encode()
    if a.bad_layer:
        p = "blobs/sha256/" + layers[0]["digest"][7:]
        b = bytearray(files[p]); b[len(b) // 2] ^= 1; files[p] = bytes(b)
    with tarfile.open(a.out, "w") as t:
        for d in ("blobs", "blobs/sha256"):
            ti = tarfile.TarInfo(d); ti.type = tarfile.DIRTYPE; ti.mode = 0o755
            t.addfile(ti)
        for p in sorted(files):
            ti = tarfile.TarInfo(p); ti.size = len(files[p]); ti.mode = 0o644
            t.addfile(ti, io.BytesIO(files[p]))
    print(md)

def cmd_evil(a):
    def info(name, type_=tarfile.REGTYPE, data=b"", link=""):
        ti = tarfile.TarInfo(name); ti.type = type_; ti.size = len(data); ti.linkname = link; ti.mode = 0o644
        return ti, io.BytesIO(data) if data else None
    with tarfile.open(a.out, "w", format=tarfile.GNU_FORMAT) as t:
        t.addfile(*info("ok.txt", data=b"fine\n"))
        if a.case == "dotdot":
            t.addfile(*info("../escaped", data=b"pwned\n"))
        elif a.case == "absolute":
            t.addfile(*info("/tmp/escaped-abs", data=b"pwned\n"))
        elif a.case == "symlink":
            t.addfile(*info("evil", tarfile.SYMTYPE, link=a.target))
            t.addfile(*info("evil/escaped", data=b"pwned\n"))
        elif a.case == "hardlink":
            t.addfile(*info("evil", tarfile.LNKTYPE, link="../../../../../../.." + a.target))
        elif a.case == "whiteout":
            t.addfile(*info("../.wh.victim"))
        elif a.case == "device":
            ti, _ = info("dev/null", tarfile.CHRTYPE); ti.devmajor, ti.devminor = 1, 3
            t.addfile(ti)
        elif a.case == "symlink-whiteout":
            t.addfile(*info("evil", tarfile.SYMTYPE, link=a.target))
            t.addfile(*info("evil/.wh.victim"))

p = argparse.ArgumentParser()
sub = p.add_subparsers(dest="action", required=True)
i = sub.add_parser("image")
i.add_argument("layout"); i.add_argument("layers", nargs="+")
i.add_argument("--tag"); i.add_argument("--arch", default="amd64"); i.add_argument("--variant")
i.add_argument("--compress", default="gzip"); i.add_argument("--level", type=int, default=6); i.add_argument("--entrypoint"); i.add_argument("--cmd")
i.add_argument("--user"); i.add_argument("--env"); i.add_argument("--workdir")
i.add_argument("--bad-diff-id", type=int, metavar="N"); i.add_argument("--drop-diff-id", action="store_true");
i.add_argument("--label", action="append"); i.add_argument("--port", action="append")
x = sub.add_parser("index"); x.add_argument("layout"); x.add_argument("--tag", required=True)
ds = sub.add_parser("docker-save"); ds.add_argument("layout"); ds.add_argument("tag"); ds.add_argument("out")
ds.add_argument("--name", default="busybox:latest"); ds.add_argument("--containerd", action="store_true")
ds.add_argument("--bad-layer", action="store_true")
e = sub.add_parser("evil"); e.add_argument("out"); e.add_argument("case"); e.add_argument("--target", default="/tmp")
a = p.parse_args()
{"image": cmd_image, "index": cmd_index, "docker-save": cmd_docker_save, "evil": cmd_evil}[a.action](a)
