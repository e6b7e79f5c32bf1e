#!/usr/bin/env bats
# runtime-spec conformance (runtime-tools validation, crun's tests, real
# engines): each test fails on a runtime that does not follow the spec.
load ../lib/common

setup_file() { common_setup_file; }
setup() { require_root; common_setup; }
teardown() { common_teardown; }

crun_() { run rt run -b "$BUNDLE" "$(cid)"; }

@test "ociVersion 1.3.0 runs; a later 1.x warns and runs; 2.x is refused" {
  cmd echo ran
  cfg '.ociVersion="1.3.0"'
  crun_
  [ "$status" -eq 0 ]
  [ "$output" = ran ]
  cfg '.ociVersion="1.4.0"'
  crun_
  [ "$status" -eq 0 ]
  [[ "$output" == *'warning: ociVersion "1.4.0" is newer'* ]]
  [[ "$output" == *ran* ]]
  cfg '.ociVersion="2.0.0"'
  crun_
  [ "$status" -ne 0 ]
  [[ "$output" == *'ociVersion: unsupported version "2.0.0"'* ]]
}

@test "runtime-spec 1.3 fields that are not implemented are refused by path" {
  cfg '.ociVersion="1.3.0" | .linux.netDevices={"eth9":{"name":"eth9"}}'
  crun_
  [ "$status" -ne 0 ]
  [[ "$output" == *"linux.netDevices: not supported"* ]]
  cfg 'del(.linux.netDevices) | .linux.memoryPolicy={"mode":"MPOL_BIND","nodes":"0"}'
  crun_
  [ "$status" -ne 0 ]
  [[ "$output" == *"linux.memoryPolicy: not supported"* ]]
  [ -z "$(ls "$ROOT")" ]
}
