#!/usr/bin/env bash
# make tools: the outside programs the tests run for real, installed when
# missing. make test runs it first; so does CI (.ci/run runs make test).
#   versitygw  an S3-compatible server (the fleet tests' object store), built
#              from the Go module proxy into $(go env GOBIN), else the first
#              $(go env GOPATH)/bin (a few minutes, once)
#   minisign   the signature tool an operator checks snapshots with (Debian package)
#   curl       what the README and docs examples call (cmd/pds TestDocsExamplesRun runs them)
#   systemd-analyze  (Debian's systemd) checks the units in deploy/ (cmd/pds TestSystemdUnits)
#   node, npm and the TypeScript MCP SDK 1.x (scripts/mcp-ts-client.sh): the
#              host-side client the pds mcp test runs, into $PDS_TOOLS/mcp-ts
#   chromium, puppeteer-core and axe-core (scripts/browser-test.sh): the
#              passport page's browser test, into $PDS_TOOLS/browser-test
#   DuckDB's Node.js package (scripts/duckdb.sh): what the export test reads
#              pds export's Parquet files back with, into $PDS_TOOLS/duckdb
# ($PDS_TOOLS is .tools/ in the checkout unless set; scripts/tools-check.sh
# sets it to an empty folder to prove that this script installs everything.)
# and, named as arguments, what other scripts need: nginx, wrk, podman, runc,
# openssl, npm (Debian packages); with --only first, just the tools named (versitygw,
# minisign, curl and systemd-analyze may be named too). Checks ask `type -P`, which finds
# programs only, never a shell function or alias of the same name.
set -euo pipefail
VERSITYGW_VERSION=${VERSITYGW_VERSION:-v1.8.0}

# apt_install CMD PACKAGE: install a Debian package when CMD is missing.
apt_install() {
  type -P "$1" >/dev/null && return 0
  echo "tools: installing $2 (Debian)" >&2
  local sudo=
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get -o DPkg::Lock::Timeout=900 update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=900 install -y -qq "$2" >/dev/null
}

# gobin: where go install puts programs ($GOBIN, else the first GOPATH's bin).
gobin() {
  local dir
  dir=$(go env GOBIN)
  [ -n "$dir" ] || dir=$(go env GOPATH | cut -d: -f1)/bin
  echo "$dir"
}

# versitygw_path: the versitygw the tests and scripts run, found the way
# ingest/ingesttest.Tool finds it ($PDS_VERSITYGW, PATH, then gobin); empty
# when there is none.
versitygw_path() {
  if [ -n "${PDS_VERSITYGW:-}" ]; then echo "$PDS_VERSITYGW"; return; fi
  if type -P versitygw; then return; fi
  [ ! -x "$(gobin)/versitygw" ] || echo "$(gobin)/versitygw"
}

# install_versitygw: build the S3 server when it is missing. (No function may
# be named after the program it looks for: `command -v` finds the function.)
install_versitygw() {
  [ -z "$(versitygw_path)" ] || return 0
  echo "tools: building versitygw $VERSITYGW_VERSION into $(gobin) (a few minutes, once)" >&2
  GOBIN=$(gobin) go install "github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION"
  [ -n "$(versitygw_path)" ] || { echo "tools: versitygw is still not found after go install" >&2; exit 1; }
}

# --which versitygw: print the path of the installed versitygw (installing it
# first when missing); what make fleet and make image-test run.
if [ "${1:-}" = --which ]; then
  [ "${2:-}" = versitygw ] || { echo "tools: --which knows only versitygw" >&2; exit 2; }
  install_versitygw
  versitygw_path
  exit 0
fi

# --only TOOL…: just those (scripts that need a few, e.g. make image-test).
if [ "${1:-}" = --only ]; then
  shift
else
  install_versitygw
  apt_install minisign minisign
  apt_install curl curl
  apt_install systemd-analyze systemd
  bash "$(dirname "$0")/mcp-ts-client.sh" >/dev/null
  bash "$(dirname "$0")/browser-test.sh" >/dev/null
  bash "$(dirname "$0")/duckdb.sh" >/dev/null
fi
for arg in "$@"; do
  case $arg in
    versitygw) install_versitygw ;;
    curl) apt_install curl curl ;;
    minisign) apt_install minisign minisign ;;
    systemd-analyze) apt_install systemd-analyze systemd ;;
    nginx) apt_install nginx nginx-light ;;
    wrk) apt_install wrk wrk ;;
    podman) apt_install podman podman ;;
    runc) apt_install runc runc ;;
    openssl) apt_install openssl openssl ;;
    npm) apt_install node nodejs; apt_install npm npm ;;
    *) echo "tools: unknown extra tool $arg" >&2; exit 2 ;;
  esac
done
