# Local registries for the image tests: Debian's docker-registry bound to
# 127.0.0.1 (plain HTTP; HTTPS with a CA made here plus htpasswd basic
# auth), and tests/lib/regproxy.py in front of the plain one for bearer
# tokens and fault injection.  Everything lives under $1 and is stopped by
# pid (reg_stop_all).

REG_BIN=${REG_BIN:-/usr/bin/docker-registry}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# wait_http URL [curl args]: until the server answers (test-only polling).
wait_http() {
  local url=$1; shift
  for _ in $(seq 100); do
    curl -s -o /dev/null "$@" "$url" && return 0
    sleep 0.05
  done
  echo "server at $url did not come up" >&2
  return 1
}

# reg_start NAME DIR [tls]: starts a registry; sets REG_<NAME>_PORT.
reg_start() {
  local name=$1 dir=$2 tls=${3:-} port
  port=$(free_port)
  mkdir -p "$dir/data"
  {
    echo "version: 0.1"
    echo "log: {level: error, accesslog: {disabled: true}}"
    echo "storage: {filesystem: {rootdirectory: $dir/data}, delete: {enabled: true}}"
    echo "http:"
    echo "  addr: 127.0.0.1:$port"
    echo "  secret: test"
    if [ -n "$tls" ]; then
      echo "  tls: {certificate: $REG_CERTS/server.crt, key: $REG_CERTS/server.key}"
      echo "auth: {htpasswd: {realm: sandlock-test, path: $REG_CERTS/htpasswd}}"
    fi
  } > "$dir/config.yml"
  "$REG_BIN" serve "$dir/config.yml" > "$dir/log" 2>&1 &
  echo $! > "$dir/pid"
  eval "REG_${name}_PORT=$port"
  if [ -n "$tls" ]; then
    wait_http "https://127.0.0.1:$port/v2/" --cacert "$REG_CERTS/ca.crt"
  else
    wait_http "http://127.0.0.1:$port/v2/"
  fi
}

# reg_certs DIR: a CA, a server cert for 127.0.0.1, htpasswd for
# user "tester" / "s3cret" (bcrypt through python's crypt).
reg_certs() {
  REG_CERTS=$1
  mkdir -p "$REG_CERTS"
  (
    cd "$REG_CERTS" || exit 1
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=sandlock-test-ca \
      -keyout ca.key -out ca.crt 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout server.key -out server.csr 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' > ext
    openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
      -extfile ext -out server.crt 2>/dev/null
    python3 -W ignore -c 'import crypt; print("tester:" + crypt.crypt("s3cret", crypt.mksalt(crypt.METHOD_BLOWFISH)))' > htpasswd
  )
}

# proxy_start NAME DIR UPSTREAM_PORT [regproxy args]: sets PROXY_<NAME>_PORT.
proxy_start() {
  local name=$1 dir=$2 up=$3 port; shift 3
  port=$(free_port)
  mkdir -p "$dir"
  python3 "$SANDLOCK_TESTS_DIR/lib/regproxy.py" --port "$port" --upstream "127.0.0.1:$up" \
    --log "$dir/requests" "$@" > "$dir/log" 2>&1 &
  echo $! > "$dir/pid"
  eval "PROXY_${name}_PORT=$port"
  wait_http "http://127.0.0.1:$port/ping"
}

# Stops every server started under $1 by the pid it recorded.
reg_stop_all() {
  local p
  for p in "$1"/*/pid; do
    [ -f "$p" ] || continue
    kill "$(cat "$p")" 2>/dev/null || true
    rm -f "$p"
  done
}

# skopeo without touching the host's container state: as root it keeps a
# blob-info cache in /var/lib/containers/cache, so it runs in a private
# mount namespace with a tmpfs there (over /var/lib when /var/lib/containers
# does not exist, so that it is not created either); otherwise the cache
# goes under the test's temp dir.
sk() {
  if [ "$(id -u)" != 0 ]; then
    XDG_DATA_HOME=${BATS_FILE_TMPDIR:-/tmp}/xdg skopeo "$@"
    return
  fi
  local over=/var/lib/containers
  [ -d "$over" ] || over=/var/lib
  unshare -m --propagation private \
    sh -c 'mount -t tmpfs tmpfs "$0" && exec skopeo "$@"' "$over" "$@"
}

# push LAYOUT:TAG PORT NAME:TAG [skopeo args]: plain-HTTP push with skopeo.
push() {
  sk copy --quiet --dest-tls-verify=false "${@:4}" "oci:$1" "docker://127.0.0.1:$2/$3" >/dev/null
}
