#!/usr/bin/env bash
# Installs what the passport page's browser test needs, when missing:
#   chromium         Debian's Chromium (/usr/bin/chromium), driven headless
#   node and npm     from Debian (nodejs, npm) when node is not on PATH
#   puppeteer-core and axe-core, at the versions scripts/browser-test/package-lock.json
#                    pins, into .tools/browser-test (puppeteer-core downloads no browser)
# make tools runs it; so does cmd/pds's TestPassportPageInABrowser before it
# runs scripts/browser-test/passport.mjs (copied there). Prints the directory
# on success.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD/scripts/browser-test
DIR=${PDS_TOOLS:-$PWD/.tools}/browser-test

apt_install() {
  echo "browser-test: installing $* (Debian)" >&2
  local sudo=
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get -o DPkg::Lock::Timeout=900 update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=900 install -y -qq "$@" >/dev/null
}

[ -x /usr/bin/chromium ] || apt_install chromium
if ! type -P node >/dev/null || ! type -P npm >/dev/null; then
  apt_install nodejs npm
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 18 ]; then
  echo "browser-test: node $(node --version) is too old; puppeteer-core 24 needs 18 or later" >&2
  exit 1
fi
if ! cmp -s "$SRC/package-lock.json" "$DIR/package-lock.json" || [ ! -d "$DIR/node_modules/puppeteer-core" ] || [ ! -f "$DIR/node_modules/axe-core/axe.min.js" ]; then
  echo "browser-test: installing puppeteer-core and axe-core into $DIR" >&2
  rm -rf "$DIR"
  mkdir -p "$DIR"
  cp "$SRC/package.json" "$SRC/package-lock.json" "$DIR/"
  (cd "$DIR" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi
cp "$SRC/passport.mjs" "$DIR/passport.mjs" # beside its node_modules, where its imports resolve
echo "$DIR"
