#!/usr/bin/env bats
# `start` acts on what `create` recorded (runc reads the config at create
# only): it does not read config.json again — neither the bundle's, edited
# in between, nor the copy in the state directory.
load ../lib/common

setup_file() { common_setup_file; }
setup() { require_root; common_setup; }
teardown() { common_teardown; }

# A host hook that logs its arguments, one per line, and $HOOKVAR to $1.
logging_hook() {
  local log=$1 h=$BATS_TEST_TMPDIR/log-hook.sh
  printf '#!/bin/sh\nfor a in "$@"; do echo "arg:$a"; done >> %s\necho "env:$HOOKVAR" >> %s\n' \
    "$log" "$log" > "$h"
  chmod +x "$h"
  echo "$h"
}

@test "start runs the poststart hooks of create, not of a config.json edited since" {
  id=$(cid)
  log=$BATS_TEST_TMPDIR/log
  h=$(logging_hook "$log")
  cmd sleep 30
  cfg ".ociVersion=\"1.3.0\" | .hooks.poststart=[{path:\"$h\",args:[\"hook\",\"a b\",\"quote\\\"d\",\"\\u00e9\"],env:[\"HOOKVAR=at-create\"],timeout:5}]"
  rt create -b "$BUNDLE" "$id"
  # after create: a failing hook, another ociVersion (failures fatal or not)
  cfg '.ociVersion="1.2.0" | .hooks.poststart=[{"path":"/bin/false"}]'
  run rt start "$id"
  [ "$status" -eq 0 ]
  [[ "$output" != *warning* ]]
  [ "$(cat "$log")" = "$(printf 'arg:a b\narg:quote"d\narg:\xc3\xa9\nenv:at-create')" ]
  [ "$(rt state "$id" | jq -r .status)" = running ]
}

@test "start does not parse the config.json stored at create" {
  id=$(cid)
  log=$BATS_TEST_TMPDIR/log
  h=$(logging_hook "$log")
  cmd sleep 30
  cfg ".hooks.poststart=[{path:\"$h\",args:[\"hook\",\"x\"]}]"
  rt create -b "$BUNDLE" "$id"
  # The stored copy (delete's poststop hooks, exec, delete -f read it) is
  # not start's business: corrupt it.
  echo '{"not json' > "$ROOT/$id/config.json"
  run rt start "$id"
  [ "$status" -eq 0 ]
  [ "$(cat "$log")" = "$(printf 'arg:x\nenv:')" ]
  [ "$(rt state "$id" | jq -r .status)" = running ]
}

@test "a 1.3 config's failing poststart hook still stops the container from the record" {
  id=$(cid)
  cmd sleep 30
  cfg '.ociVersion="1.3.0" | .hooks.poststart=[{"path":"/bin/false"}]'
  rt create -b "$BUNDLE" "$id"
  cfg '.ociVersion="1.2.0" | .hooks.poststart=[]'
  run rt start "$id"
  [ "$status" -eq 1 ]
  [[ "$output" == *"poststart hook 0"* ]]
  [ "$(rt state "$id" | jq -r .status)" = stopped ]
}

@test "a container created without a start record starts from its stored config" {
  id=$(cid)
  log=$BATS_TEST_TMPDIR/log
  h=$(logging_hook "$log")
  cmd sleep 30
  cfg ".hooks.poststart=[{path:\"$h\",args:[\"hook\",\"old\"]}]"
  rt create -b "$BUNDLE" "$id"
  # what a runtime before the record left: no start.json
  rm -f "$ROOT/$id/start.json"
  rt start "$id"
  [ "$(cat "$log")" = "$(printf 'arg:old\nenv:')" ]
}
