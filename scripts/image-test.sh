#!/usr/bin/env bash
# make image-test: build deploy/Dockerfile with podman (from Debian) and run
# the image read-only against the bundled sample: /readyz must answer 200 and
# a product read with a key must answer found. Not part of make test.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v podman >/dev/null; then
  apt-get -o DPkg::Lock::Timeout=900 update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -qq podman >/dev/null
fi
PORT=${PORT:-18160}
W=var/image-test
rm -rf "$W" && mkdir -p "$W/state"
CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o deploy/pds ./cmd/pds
trap 'rm -f deploy/pds; podman rm -f pds-image-test >/dev/null 2>&1 || true' EXIT
go run ./cmd/pds ingest --in sample-input --out "$W/snap" --quiet
KEY=$(go run ./cmd/pds keys add --keys "$W/keys.json" --tenant demo --scopes products:read 2>/dev/null)
chmod -R a+rX "$W" && chmod 0777 "$W/state"
podman build -q -t pds-image-test -f deploy/Dockerfile deploy
podman run -d --name pds-image-test --read-only ${PODMAN_RUN_OPTS:-} -p "127.0.0.1:$PORT:8000" \
  -v "$PWD/$W/snap:/snapshot:ro" -v "$PWD/$W/keys.json:/keys/keys.json:ro" -v "$PWD/$W/state:/state" pds-image-test >/dev/null
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null && break; sleep 0.2; done
curl -sf "http://127.0.0.1:$PORT/readyz"; echo
curl -sf -H "Authorization: Bearer $KEY" "http://127.0.0.1:$PORT/v1/products/09520123456788" | grep -q '"status":"found"'
user=$(podman inspect -f '{{.Config.User}}' pds-image-test)
[ "$user" = "65532:65532" ] || { echo "image-test: runs as $user" >&2; exit 1; }
echo "image-test: ok (read-only root, user $user)"
