#!/usr/bin/env bash
# Installs what the TypeScript SDK test of pds mcp needs, when missing:
#   node and npm  from Debian (nodejs, npm) when node is not on PATH
#   @modelcontextprotocol/sdk  the TypeScript MCP SDK, 1.x, from npm into .tools/mcp-ts
# make tools runs it; so does cmd/pds's TestStdioHostsCallEveryTool when
# .tools/mcp-ts is missing. Prints the SDK directory on success.
set -euo pipefail
cd "$(dirname "$0")/.."
SDK_VERSION=${MCP_TS_SDK_VERSION:-1.32.2}
DIR=${PDS_TOOLS:-$PWD/.tools}/mcp-ts

if ! type -P node >/dev/null || ! type -P npm >/dev/null; then
  echo "mcp-ts-client: installing nodejs and npm (Debian)" >&2
  sudo=
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get -o DPkg::Lock::Timeout=900 update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=900 install -y -qq nodejs npm >/dev/null
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 18 ]; then
  echo "mcp-ts-client: node $(node --version) is too old; the TypeScript SDK needs 18 or later" >&2
  exit 1
fi
pkg=$DIR/node_modules/@modelcontextprotocol/sdk/package.json
if [ ! -f "$pkg" ] || ! grep -q "\"version\": \"$SDK_VERSION\"" "$pkg"; then
  echo "mcp-ts-client: installing @modelcontextprotocol/sdk@$SDK_VERSION into $DIR" >&2
  mkdir -p "$DIR"
  [ -f "$DIR/package.json" ] || echo '{"private": true}' >"$DIR/package.json"
  npm install --prefix "$DIR" --no-audit --no-fund --loglevel=error "@modelcontextprotocol/sdk@$SDK_VERSION" >&2
fi
echo "$DIR"
