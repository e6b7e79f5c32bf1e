#!/usr/bin/env bats
# Namespace-less mode: the supervisor's rights (docs/nsless.md "Whose
# rights"), unix datagram sockets, execveat and the *xattrat calls, the
# supervisor's domain on a hybrid cgroup host, a bind of a host char
# device.  Tests marked "as root" run the runtime as root (process.user 0,
# the only user it may then have), which is where the supervisor has
# capabilities the container may lack; the others run as nobody with user
# namespaces made unavailable (tests/lib/nsless.bash).
load ../lib/common
load ../lib/nsless
bats_require_minimum_version 1.5.0   # run --separate-stderr: create-time warnings are on stderr

setup() { nsless_setup; }
teardown() { nsless_teardown; }

# process.user root, process.args "sh -c $1", capabilities the default set
# plus $2 (a jq array of names, default none).
root_sh() {
  local extra=${2:-[]}
  jqc ".process.user={uid:0,gid:0} | .process.args=[\"/bin/sh\",\"-c\",$(jq -Rn --arg s "$1" '$s')]
       | .process.capabilities |= with_entries(.value += $extra | .value |= unique)"
}

@test "nsless rights (as root): root without CAP_DAC_OVERRIDE cannot create in or write another user's tree" {
  # The default capability set has no CAP_DAC_OVERRIDE; the supervisor of a
  # root runtime keeps it (to kill the container).  Done on its behalf,
  # the container used to create and write where the kernel refuses it.
  root_rootfs
  mkdir -p "$(R)/home/u"
  echo orig > "$(R)/home/u/f"
  chown -R 1000:1000 "$(R)/home/u"
  chmod 755 "$(R)/home/u"; chmod 644 "$(R)/home/u/f"
  root_sh 'echo x > /home/u/new; echo create=$?; echo x >> /home/u/f; echo write=$?
           mkdir /home/u/d; echo mkdir=$?; mknod /home/u/p p; echo fifo=$?
           vrsys access /home/u/f w; cat /home/u/f'
  run as_root rights1
  echo "$output"
  [[ "$output" == *"create=1"* ]]
  [[ "$output" == *"write=1"* ]]
  [[ "$output" == *"mkdir=1"* ]]
  [[ "$output" == *"fifo=1"* ]]
  [[ "$output" == *$'EACCES\norig'* ]]   # access(2): the real ids' answer
  [ ! -e "$(R)/home/u/new" ]
  [ ! -e "$(R)/home/u/d" ]
  [ ! -e "$(R)/home/u/p" ]
  [ "$(cat "$(R)/home/u/f")" = orig ]
}

@test "nsless rights (as root): a process that dropped to another uid cannot change root's files" {
  # vrsys asuser drops to 1000:1000 with no groups (CAP_SETUID/SETGID given for
  # that); the supervisor stayed uid 0, the owner of the rootfs.
  root_rootfs
  echo orig > "$(R)/etc/motd"
  chmod 644 "$(R)/etc/motd"
  touch -d 2001-01-01 "$(R)/etc/motd"
  echo mine > "$(R)/tmp/own"; chown 1000:0 "$(R)/tmp/own"; chmod 755 "$(R)/tmp/own"
  before=$(stat -c '%a %u %g %Y %s' "$(R)/etc/motd" "$(R)/bin/busybox" "$(R)/etc")
  root_sh 'exec vrsys asuser 1000 1000 /bin/sh -c "
    id -u; chmod 4755 /bin/busybox; echo setuid=\$?
    chmod 666 /etc/motd; echo chmod=\$?
    touch -d 2020-01-01 /etc/motd; echo utimes=\$?
    truncate -s 0 /etc/motd; echo truncate=\$?
    echo x >> /etc/motd; echo write=\$?
    echo x > /etc/new; echo create=\$?
    vrsys setxattr /etc/motd user.x y
    chown 1000 /etc/passwd; echo chown=\$?
    mknod /tmp/null c 1 3; echo mknod=\$?
    chmod 2755 /tmp/own; echo own=\$?"' '["CAP_SETUID","CAP_SETGID"]'
  run --separate-stderr as_root rights2
  echo "$output"
  after=$(stat -c '%a %u %g %Y %s' "$(R)/etc/motd" "$(R)/bin/busybox" "$(R)/etc")
  [ "${lines[0]}" = 1000 ]
  for w in setuid chmod utimes truncate write create chown mknod; do
    [[ "$output" == *"$w=1"* ]] || { echo "$w was done"; false; }
  done
  [[ "$output" == *$'create=1\nEACCES'* ]]   # the xattr
  [ "$before" = "$after" ]
  [ ! -e "$(R)/etc/new" ]
  [ ! -e "$(R)/tmp/null" ]
  python3 -c 'import os,sys; sys.exit(1 if "user.x" in os.listxattr(sys.argv[1]) else 0)' "$(R)/etc/motd"
  # Its own file: chmod works, but the setgid bit of a group it is not in
  # is dropped, as the kernel does without CAP_FSETID.
  [[ "$output" == *"own=0"* ]]
  [ "$(stat -c %a "$(R)/tmp/own")" = 755 ]
}

@test "nsless rights (as root): the same, in the process that dropped its ids (no exec after)" {
  # As above, without an exec between the drop and the calls (an exec
  # after a uid change also failed before: the exec directory was 0700).
  root_rootfs
  echo orig > "$(R)/etc/motd"; chmod 644 "$(R)/etc/motd"; touch -d 2001-01-01 "$(R)/etc/motd"
  before=$(stat -c '%a %u %g %Y %s' "$(R)/etc/motd" "$(R)/etc")
  root_sh 'exec vrsys asuser-meta 1000 1000 /etc/motd /etc/new' '["CAP_SETUID","CAP_SETGID"]'
  run --separate-stderr as_root rights2b
  echo "$output"
  [ "$output" = $'EPERM\nEPERM\nEACCES\nEACCES\nEACCES' ]
  [ "$(stat -c '%a %u %g %Y %s' "$(R)/etc/motd" "$(R)/etc")" = "$before" ]
  [ ! -e "$(R)/etc/new" ]
}

@test "nsless rights (as root): what the caller may do still works, with its own ids" {
  # Control for the two above: root with the default set writes root's
  # files; a process that dropped to 1000 creates files owned by 1000.
  root_rootfs
  mkdir -p "$(R)/home/u"; chown 1000:1000 "$(R)/home/u"
  root_sh 'echo x > /etc/new && echo root-create=$?
    exec vrsys asuser 1000 1000 /bin/sh -c "
      echo y > /home/u/g; echo user-create=\$?; mkdir /home/u/d; ln -s g /home/u/l
      chmod 600 /home/u/g; touch -d 2001-01-01 /home/u/g; ls /home/u | wc -l"' \
    '["CAP_SETUID","CAP_SETGID"]'
  run as_root rights3
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *$'root-create=0\nuser-create=0\n3'* ]]
  [ "$(stat -c '%u %g %a' "$(R)/home/u/g")" = "1000 1000 600" ]
  [ "$(stat -c '%u %g' "$(R)/home/u/d" "$(R)/etc/new")" = $'1000 1000\n0 0' ]
}

@test "nsless rights: a read-only bind and the host's device nodes stay unchanged (as nobody)" {
  # Regression guards (refused before this work too): writes through a
  # read-only bind are EROFS, device nodes cannot be made.
  mkdir -p "$D/robind"; echo orig > "$D/robind/f"; chown -R nobody "$D/robind"
  jqc ".mounts += [{destination:\"/ro\",type:\"bind\",source:\"$D/robind\",options:[\"rbind\",\"ro\"]}]"
  args sh -c 'echo x > /ro/f; echo write=$?; chmod 600 /ro/f; echo chmod=$?; touch /ro/n; echo create=$?; mknod /tmp/z c 1 5; echo mknod=$?'
  run as_user run rights4
  echo "$output"
  [[ "$output" == *"write=1"*"chmod=1"*"create=1"*"mknod=1"* ]]
  [ "$(cat "$D/robind/f")" = orig ]
  [ "$(stat -c %a "$D/robind/f")" = 644 ]
  [ ! -e "$D/robind/n" ]
}

@test "nsless rights: metadata through an fd of a read-only bind is refused (as nobody)" {
  # fchmod, fchown, fsetxattr, futimens on an fd the view opened read-only:
  # not path calls, so the kernel did them with the caller's ids, and the
  # caller owns the file: the read-only bind's mode, owner and xattrs
  # changed.  Landlock has no right for metadata.
  mkdir -p "$D/robind"; echo orig > "$D/robind/f"; chown -R nobody "$D/robind"
  touch -d 2001-01-01 "$D/robind/f"
  before=$(stat -c '%a %u %g %Y' "$D/robind/f")
  jqc ".mounts += [{destination:\"/ro\",type:\"bind\",source:\"$D/robind\",options:[\"rbind\",\"ro\"]}]"
  args vrsys fd-meta /ro/f
  run --separate-stderr as_user run rights5
  echo "$output"
  [ "$output" = $'EROFS\nEROFS\nEROFS\nEROFS' ]
  [ "$(stat -c '%a %u %g %Y' "$D/robind/f")" = "$before" ]
}

@test "nsless *xattrat: setxattrat, getxattrat, listxattrat, removexattrat are drawn in the view" {
  # Linux 6.13's *xattrat calls used to be refused (EPERM); now they are
  # serviced like getxattr and the others: by a dirfd and a relative name,
  # or AT_EMPTY_PATH on the fd, and never reach a host object.
  setfattr_() { python3 -c 'import os,sys; os.setxattr(sys.argv[1], sys.argv[2], sys.argv[3].encode())' "$@"; }
  getfattr_() { python3 -c 'import os,sys; print(os.getxattr(sys.argv[1], sys.argv[2]).decode())' "$@" 2>/dev/null; }
  echo data > "$(R)/etc/xf"; chown nobody "$(R)/etc/xf"
  setfattr_ "$(R)/etc/xf" user.b hostb || skip "no user xattrs on $(R)"
  echo secret > "$D/outside"; chown nobody "$D/outside"; setfattr_ "$D/outside" user.s secret
  ln -s "$D/outside" "$(R)/etc/esc"
  mkdir -p "$D/robind"; echo ro > "$D/robind/f"; chown -R nobody "$D/robind"
  jqc ".mounts += [{destination:\"/ro\",type:\"bind\",source:\"$D/robind\",options:[\"rbind\",\"ro\"]}]"
  args sh -c "vrsys xattrat set /etc xf user.a one; vrsys xattrat get /etc xf user.a
    vrsys xattrat list /etc xf | sort | tr '\n' ' '; echo
    vrsys xattrat remove /etc xf user.a; vrsys xattrat get /etc xf user.a
    vrsys xattrat-empty get /etc/xf user.b
    vrsys xattrat get /etc esc user.s; vrsys xattrat get / ..$D/outside user.s
    vrsys xattrat set /ro f user.a x"
  run --separate-stderr as_user run xat1
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = OK ]
  [ "${lines[1]}" = one ]
  [ "${lines[2]}" = "user.a user.b " ]
  [ "${lines[3]}" = OK ]
  [ "${lines[4]}" = ENODATA ]
  [ "${lines[5]}" = hostb ]
  [ "${lines[6]}" = ENOENT ]     # a symlink out of the rootfs stays inside
  [ "${lines[7]}" = ENOENT ]     # .. chains too
  [ "${lines[8]}" = EROFS ]
  [ -z "$(getfattr_ "$D/robind/f" user.a)" ]
  [ "$(getfattr_ "$D/outside" user.s)" = secret ]
}

@test "nsless devices (as root): a bound host char device keeps its ioctls under the Landlock domain" {
  # LANDLOCK_ACCESS_FS_IOCTL_DEV (ABI 5) is handled by the container's
  # domain: a bind of a char device must grant it, or every ioctl on it
  # is EACCES.  /dev/kvm where there is one, else /dev/net/tun.
  if [ -c /dev/kvm ]; then dev=/dev/kvm cmd=ioctl-kvm; want=12
  elif [ -c /dev/net/tun ]; then dev=/dev/net/tun cmd=ioctl-tun; want=OK
  else skip "no /dev/kvm or /dev/net/tun here"; fi
  root_rootfs
  maj=$((0x$(stat -c %t "$dev"))) min=$((0x$(stat -c %T "$dev")))
  # As in the namespaced mode, the ioctls come with a config that allows
  # the device (a device cgroup rule, rt_ll_bound_device); without one the
  # node is bound but its ioctls are not granted.
  jqc ".mounts += [{destination:\"$dev\",type:\"bind\",source:\"$dev\",options:[\"bind\"]}]"
  root_sh "vrsys $cmd $dev; vrsys $cmd /dev/null"
  run --separate-stderr as_root dev0
  echo "$output"
  [ "${lines[0]}" = EACCES ]
  jqc ".linux.resources.devices += [{allow:true,type:\"c\",major:$maj,minor:$min,access:\"rwm\"}]"
  run --separate-stderr as_root dev1
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "$want" ]
  [ "${lines[1]}" = EACCES ]     # the default /dev/null gets no ioctl, as namespaced
}

@test "nsless: an orderly exit is never taken for the supervisor's death (the interleaving forced)" {
  # The race nsless-domain.bats' "orderly run" guards, made to happen
  # every time: the supervisor is stopped before the container exits, so
  # it cannot see its listener hang up before delete acts.  delete used to
  # SIGKILL it right after the container was gone; its watcher took that
  # for a death, said so and killed a removed cgroup (f8780f5 made delete
  # wait for it on a pidfd).  The supervisor is let go only once delete
  # waits on its pidfd — or once delete is over, which is when the old
  # binary had already killed it.
  jqc '.process.user={uid:0,gid:0} | .process.args=["/bin/sh","-c","echo > /tmp/ready; read x; exit 0"]'
  mkfifo "$D/in" "$D/errp"
  exec 5<>"$D/in"
  # create's stderr is the supervisor's and its watcher's: read to EOF,
  # which comes when the last of them has exited.
  cat "$D/errp" > "$D/err" & catpid=$!
  "$SANDLOCK_OCI" --root "$D/rstate" create --isolation landlock -b "$D/bundle" ord \
    <"$D/in" >/dev/null 2>"$D/errp"
  sup=$(jq -r .supervisor_pid "$D/rstate/ord/state.json")
  pid=$(jq -r .pid "$D/rstate/ord/state.json")
  [ "$sup" -gt 0 ]
  "$SANDLOCK_OCI" --root "$D/rstate" start ord
  for _ in $(seq 100); do [ -e "$(R)/tmp/ready" ] && break; read -rt 0.05 <> <(:) || true; done
  [ -e "$(R)/tmp/ready" ]
  kill -STOP "$sup"
  echo go >&5
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; read -rt 0.05 <> <(:) || true; done
  "$SANDLOCK_OCI" --root "$D/rstate" delete ord & del=$!
  while kill -0 "$del" 2>/dev/null; do
    grep -qsE "^Pid:[[:space:]]+$sup\$" /proc/"$del"/fdinfo/* && break
    read -rt 0.02 <> <(:) || true
  done
  kill -CONT "$sup" 2>/dev/null || true
  wait "$del"
  exec 5>&-
  wait "$catpid"
  cat "$D/err"
  # (the create-time warnings for what the mode ignores are not about it)
  [ -z "$(grep -v '^sandlock-oci: warning: ' "$D/err")" ]
}

@test "nsless datagrams: unix datagram sockets are drawn in the view, never a host socket" {
  # They used to be refused (socket: EPERM).  Now sendto/sendmsg/sendmmsg
  # with an address are done on-behalf from copies, the path resolved in
  # the view: a receiver in the view gets them, a host socket by its host
  # path, through a symlink planted in the rootfs or a .. chain does not.
  python3 -c "
import socket, sys, os
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o777); print('up', flush=True); sys.stdout.close()
s.settimeout(30)
try:
    print(s.recv(100).decode(), file=open(sys.argv[2], 'w'))
except Exception: pass" "$D/host.sock" "$D/host.got" > "$D/host.up" &
  LISTENER=$!
  for _ in $(seq 50); do [ -s "$D/host.up" ] && break; read -rt 0.1 <> <(:) || true; done
  ln -s "$D/host.sock" "$(R)/tmp/hl"; chown -h nobody "$(R)/tmp/hl"
  args sh -c "vrsys dgram-recv /tmp/in.sock > /tmp/got & for i in \$(seq 500); do [ -S /tmp/in.sock ] && break; done
    vrsys dgram-send /tmp/in.sock via-sendto; wait; cat /tmp/got
    vrsys dgram-recv /tmp/in2.sock > /tmp/got2 & for i in \$(seq 500); do [ -S /tmp/in2.sock ] && break; done
    vrsys dgram-sendmsg /tmp/in2.sock via-sendmsg; wait; cat /tmp/got2
    vrsys dgram-send $D/host.sock escape1; vrsys dgram-sendmsg $D/host.sock escape2
    vrsys dgram-send /tmp/hl escape3; vrsys dgram-sendmsg ../../../..$D/host.sock escape4"
  run --separate-stderr as_user run dg1
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = OK ]
  [ "${lines[1]}" = READY ]
  [ "${lines[2]}" = via-sendto ]
  [ "${lines[3]}" = OK ]
  [ "${lines[4]}" = READY ]
  [ "${lines[5]}" = via-sendmsg ]
  [ "${lines[6]}" = ENOENT ]
  [ "${lines[7]}" = ENOENT ]
  [ "${lines[8]}" = ENOENT ]
  [ "${lines[9]}" = ENOENT ]
  # the host socket got nothing: the control sends a datagram to it now
  su nobody -s /bin/sh -c "$SANDLOCK_HELPERS/vrsys dgram-send $D/host.sock control" | grep -qx OK
  wait "$LISTENER" || true
  [ "$(cat "$D/host.got")" = control ]
}

@test "nsless execveat: by a dirfd and a relative name, or AT_EMPTY_PATH, in the view" {
  # execveat used to be refused (ENOSYS).  Now it is serviced like execve:
  # the name resolved from the dirfd in the view, or the fd's own file —
  # a static ELF as it is, a #! script through the view's interpreter;
  # a host binary (by a symlink planted in the rootfs, a .. chain) is not
  # found, a noexec mount refuses.
  cp /bin/busybox "$D/hostbin"; chmod 755 "$D/hostbin"
  cp "$(R)/bin/busybox" "$(R)/usr/bin/busybox-copy-long"
  printf '#!/bin/sh\necho script-ok "$0" "$@"\n' > "$(R)/usr/bin/s.sh"; chmod 755 "$(R)/usr/bin/s.sh"
  ln -s "$D/hostbin" "$(R)/usr/bin/hb"
  chown -R nobody "$(R)/usr"
  jqc '.mounts += [{destination:"/nx",type:"tmpfs",source:"tmpfs",options:["noexec"]}]'
  args sh -c "vrsys execveat-rel /usr/bin busybox-copy-long echo rel-ok
    vrsys execveat-empty /bin/busybox echo empty-ok
    vrsys execveat-empty /usr/bin/s.sh s.sh a1
    vrsys execveat-rel /usr/bin hb echo escaped; vrsys execveat-rel / ../..$D/hostbin echo escaped
    vrsys execveat-empty $D/hostbin echo escaped
    cp /bin/busybox /nx/bb; vrsys execveat-empty /nx/bb echo escaped; vrsys execveat-rel /nx bb echo escaped"
  run --separate-stderr as_user run xa1
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = rel-ok ]
  [ "${lines[1]}" = empty-ok ]
  [[ "${lines[2]}" == "script-ok "*" a1" ]]
  [ "${lines[3]}" = ENOENT ]
  [ "${lines[4]}" = ENOENT ]
  [ "${lines[5]}" = ENOENT ]
  [ "${lines[6]}" = EACCES ]
  [ "${lines[7]}" = EACCES ]
  [[ "$output" != *escaped* ]]
}

@test "nsless hybrid cgroups (as root): the supervisor's death kills every process through the v2 directory alone" {
  # The supervisor's domain grants the container's cgroup v2 directory
  # only, never the v1 hierarchies of a hybrid host.  That is enough: the
  # init is cloned into the v2 directory (CLONE_INTO_CGROUP), every
  # process it makes is born there, and none can leave it (no cgroup file
  # is in its Landlock grants), so cgroup.kill there reaches them all —
  # a setsid'd grandchild included.  The watcher says nothing of the v1
  # hierarchies it cannot reach.
  [ -d /sys/fs/cgroup/unified ] && [ -d /sys/fs/cgroup/memory ] || skip "not a hybrid cgroup host"
  jqc '.process.user={uid:0,gid:0} | .linux.cgroupsPath="/sandlock-nsless-sys/hy1"
       | .process.args=["/bin/sh","-c","setsid sh -c \"exec sleep 1000\" </dev/null >/dev/null 2>&1 & exec sleep 1000"]'
  mkfifo "$D/errp"
  cat "$D/errp" > "$D/err" & catpid=$!
  "$SANDLOCK_OCI" --root "$D/rstate" create --isolation landlock -b "$D/bundle" hy1 \
    </dev/null >/dev/null 2>"$D/errp"
  "$SANDLOCK_OCI" --root "$D/rstate" start hy1
  sup=$(jq -r .supervisor_pid "$D/rstate/hy1/state.json")
  procs=/sys/fs/cgroup/unified/sandlock-nsless-sys/hy1/cgroup.procs
  for _ in $(seq 100); do [ "$(wc -l < "$procs")" -ge 2 ] && break; read -rt 0.05 <> <(:) || true; done
  pids=$(cat "$procs" | tr '\n' ' ')
  echo "container: $pids"
  [ "$(wc -w <<<"$pids")" -ge 2 ]
  kill -9 "$sup"
  for _ in $(seq 100); do [ -z "$(cat "$procs")" ] && break; read -rt 0.05 <> <(:) || true; done
  for p in $pids; do ! kill -0 "$p" 2>/dev/null; done
  "$SANDLOCK_OCI" --root "$D/rstate" delete -f hy1
  wait "$catpid"
  cat "$D/err"
  ! grep -q "kill cgroup" "$D/err" || false
}
