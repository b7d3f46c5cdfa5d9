#!/usr/bin/env bash
# make tools: the outside programs the tests run for real, installed when
# missing. make test runs it first; so does CI (.ci/run runs make test).
#   versitygw  an S3-compatible server (the fleet tests' object store), built
#              from the Go module proxy into $(go env GOPATH)/bin (a few minutes, once)
#   minisign   the signature tool an operator checks snapshots with (Debian package)
#   curl       what the README and docs examples call (cmd/pds TestDocsExamplesRun runs them)
#   systemd-analyze  (Debian's systemd) checks the units in deploy/ (cmd/pds TestSystemdUnits)
#   node, npm and the TypeScript MCP SDK 1.x (scripts/mcp-ts-client.sh): the
#              host-side client the pds mcp test runs, into .tools/mcp-ts
#   chromium, puppeteer-core and axe-core (scripts/browser-test.sh): the
#              passport page's browser test, into .tools/browser-test
# and, named as arguments, what other scripts need: nginx, wrk, podman, runc,
# openssl (Debian packages); with --only first, just the tools named (versitygw,
# curl and systemd-analyze may be named too).
set -euo pipefail
VERSITYGW_VERSION=${VERSITYGW_VERSION:-v1.8.0}

# apt_install CMD PACKAGE: install a Debian package when CMD is missing.
apt_install() {
  command -v "$1" >/dev/null 2>&1 && return 0
  echo "tools: installing $2 (Debian)" >&2
  local sudo=
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get -o DPkg::Lock::Timeout=900 update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=900 install -y -qq "$2" >/dev/null
}

# versitygw: the S3 server, built when missing.
versitygw() {
  local gobin
  gobin=$(go env GOPATH)/bin
  if ! command -v versitygw >/dev/null 2>&1 && [ ! -x "$gobin/versitygw" ]; then
    echo "tools: building versitygw $VERSITYGW_VERSION into $gobin (a few minutes, once)" >&2
    go install "github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION"
  fi
}

# --only TOOL…: just those (scripts that need a few, e.g. make image-test).
if [ "${1:-}" = --only ]; then
  shift
else
  versitygw
  apt_install minisign minisign
  apt_install curl curl
  apt_install systemd-analyze systemd
  bash "$(dirname "$0")/mcp-ts-client.sh" >/dev/null
  bash "$(dirname "$0")/browser-test.sh" >/dev/null
fi
for arg in "$@"; do
  case $arg in
    versitygw) versitygw ;;
    curl) apt_install curl curl ;;
    systemd-analyze) apt_install systemd-analyze systemd ;;
    nginx) apt_install nginx nginx-light ;;
    wrk) apt_install wrk wrk ;;
    podman) apt_install podman podman ;;
    runc) apt_install runc runc ;;
    openssl) apt_install openssl openssl ;;
    *) echo "tools: unknown extra tool $arg" >&2; exit 2 ;;
  esac
done
