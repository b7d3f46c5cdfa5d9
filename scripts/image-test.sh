#!/usr/bin/env bash
# make image-test: the container image (deploy/Dockerfile) run as
# docs/deploy.md says, with Debian's podman (installed when missing):
#   1. builds the static binary and the image;
#   2. makes a test certificate authority and a server certificate for
#      127.0.0.1 with openssl, and starts an S3 origin (versitygw) over TLS
#      with them on loopback;
#   3. builds the bundled sample on the host under umask 077, signs it,
#      publishes it to the origin (trusting the test CA through
#      SSL_CERT_FILE), and adds a key to a new keys file, also under umask 077;
#   4. in the image, as its user 65532 with a read-only root: checks the
#      host-built snapshot (ingest wrote it readable by other users), sees the
#      pull refused without SSL_CERT_FILE (the origin's certificate is not
#      from a public authority), then pulls the signed build with
#      SSL_CERT_FILE naming the test CA;
#   5. serves the pulled build with the keys file (no chmod anywhere) by the
#      documented command: /readyz and a product read with the key answer;
#   6. stops it with SIGTERM: it drains, logs "draining" and "stopped", and
#      exits 0.
# Ports: PORT (the server, default 18160) and PORT+1 (the origin).
set -euo pipefail
cd "$(dirname "$0")/.."
began=$(date +%s)
PORT=${PORT:-18160}
S3PORT=$((PORT + 1))
W=$PWD/var/image-test
NAME=pds-image-test
export AWS_ACCESS_KEY_ID=imagetestaccess AWS_SECRET_ACCESS_KEY=imagetestsecret0123456789
ORIGIN=s3://pds/builds

say() { echo "image-test: $*"; }
fail() { echo "image-test: FAIL: $*" >&2; exit 1; }

# The flags this host needs beside the documented command (docs/deploy.md,
# "Container image", says when and why).
RUN=()
tools=(versitygw curl podman openssl)
capeff=$(awk '/^CapEff/ {print $2}' /proc/self/status)
if (( (16#$capeff >> 24 & 1) == 0 )); then
  # No CAP_SYS_RESOURCE: podman's default limits (1048576 open files) are
  # above the hard limit and cannot be set; ask for limits within it.
  n=$(ulimit -Hn)
  if [ "$n" = unlimited ] || [ "$n" -gt 65536 ]; then n=65536; fi
  RUN+=(--ulimit "nofile=$n:$n" --ulimit nproc=4096:4096)
fi
if [ "$(stat -fc %T /sys/fs/cgroup)" = tmpfs ] && [ -n "$(cat /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null)" ]; then
  # A hybrid cgroup layout with controllers on the v2 tree: crun refuses it, runc does not.
  RUN+=(--runtime runc)
  tools+=(runc)
fi
bash scripts/tools.sh --only "${tools[@]}"
VGW=$(bash scripts/tools.sh --which versitygw)
say "podman $(podman --version | awk '{print $3}'); extra run flags here: ${RUN[*]:-none}"

VGW_PID=
cleanup() {
  podman rm -f "$NAME" >/dev/null 2>&1 || true
  podman volume rm -f "$NAME-state" >/dev/null 2>&1 || true
  [ -z "$VGW_PID" ] || kill "$VGW_PID" 2>/dev/null || true
  rm -f deploy/pds
}
trap cleanup EXIT
cleanup
rm -rf "$W"
mkdir -p "$W/tls" "$W/keys" "$W/signing" "$W/s3/pds"

# 1. The binary and the image, as the Dockerfile's comment says.
CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o deploy/pds ./cmd/pds
podman build -q -t "$NAME" -f deploy/Dockerfile deploy >/dev/null
PDS=deploy/pds
say "image built ($(( $(date +%s) - began )) s so far)"

# 2. A test CA, a server certificate for 127.0.0.1 signed by it, and the
#    origin over TLS.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=pds image-test CA" \
  -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
  -keyout "$W/tls/ca.key" -out "$W/tls/ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=127.0.0.1" \
  -keyout "$W/tls/server.key" -out "$W/tls/server.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n' > "$W/tls/server.ext"
openssl x509 -req -in "$W/tls/server.csr" -CA "$W/tls/ca.pem" -CAkey "$W/tls/ca.key" -CAcreateserial -days 2 \
  -extfile "$W/tls/server.ext" -out "$W/tls/server.pem" 2>/dev/null
"$VGW" --access "$AWS_ACCESS_KEY_ID" --secret "$AWS_SECRET_ACCESS_KEY" --port "127.0.0.1:$S3PORT" \
  --cert "$W/tls/server.pem" --key "$W/tls/server.key" --quiet posix "$W/s3" > "$W/versitygw.log" 2>&1 &
VGW_PID=$!
for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$S3PORT") 2>/dev/null && break; sleep 0.1; done
curl -sf --cacert "$W/tls/ca.pem" -o /dev/null "https://127.0.0.1:$S3PORT/" || [ $? = 22 ] || fail "the origin does not answer over TLS: $(cat "$W/versitygw.log")"

# 3. On the host: build, sign and publish; a keys file. umask 077 is what a
#    hardened unit sets: ingest and 'pds keys add' still write files that
#    the image's user can read.
(
  umask 077
  "$PDS" snapshot keygen --pub "$W/keys/pds.pub" --key "$W/signing/pds.key" >/dev/null
  "$PDS" ingest --in sample-input --out "$W/build" --quiet >/dev/null
  "$PDS" snapshot sign --key "$W/signing/pds.key" "$W/build" >/dev/null
  "$PDS" keys add --keys "$W/keys/keys.json" --tenant demo --scopes products:read > "$W/signing/key.txt" 2>/dev/null
)
SSL_CERT_FILE=$W/tls/ca.pem "$PDS" snapshot publish --endpoint "https://127.0.0.1:$S3PORT" --pubkey "$W/keys/pds.pub" "$W/build" "$ORIGIN" >/dev/null 2>&1
say "modes as written under umask 077: Bleve's folder $(stat -c %a "$W/build/index/products.bleve"), signature $(stat -c %a "$W/build/manifest.json.minisig"), keys file $(stat -c %a "$W/keys/keys.json"), public key $(stat -c %a "$W/keys/pds.pub")"

# 4. In the image: the host-built snapshot, then the pull over TLS.
in_image() { podman run --rm --read-only "${RUN[@]}" "$@"; }
in_image -v "$W/build:/snapshot:ro" -v "$W/keys:/keys:ro" "$NAME" snapshot verify --pubkey /keys/pds.pub /snapshot >/dev/null ||
  fail "the image's user cannot read the snapshot ingest wrote"
install -d -o 65532 -g 65532 "$W/snapshots"
pull=(--network host -e AWS_ACCESS_KEY_ID -e AWS_SECRET_ACCESS_KEY -v "$W/keys:/keys:ro" -v "$W/snapshots:/snapshots")
pull_args=(snapshot pull "$ORIGIN" --endpoint "https://127.0.0.1:$S3PORT" --into /snapshots --pubkey /keys/pds.pub)
if out=$(in_image "${pull[@]}" "$NAME" "${pull_args[@]}" 2>&1); then
  fail "the pull trusted the test CA without SSL_CERT_FILE: $out"
fi
grep -q "certificate signed by unknown authority" <<<"$out" || fail "the pull without SSL_CERT_FILE failed otherwise: $out"
out=$(in_image "${pull[@]}" -e SSL_CERT_FILE=/tls/ca.pem -v "$W/tls/ca.pem:/tls/ca.pem:ro" "$NAME" "${pull_args[@]}" 2>&1) ||
  fail "the pull over TLS: $out"
say "pulled over TLS in the image: $(grep -m1 'is current in' <<<"$out")"

# 5. The documented command, on the pulled build.
podman run -d --name "$NAME" --read-only "${RUN[@]}" -p "127.0.0.1:$PORT:8000" \
  -v "$W/snapshots/current:/snapshot:ro" -v "$W/keys:/keys:ro" -v "$NAME-state:/state" "$NAME" >/dev/null
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null && break; sleep 0.2; done
curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null || fail "not ready: $(podman logs "$NAME" 2>&1 | tail -5)"
curl -sf -H "Authorization: Bearer $(cat "$W/signing/key.txt")" "http://127.0.0.1:$PORT/v1/products/09520123456788" |
  grep -q '"status":"found"' || fail "the product read did not answer found: $(podman logs "$NAME" 2>&1 | tail -5)"
user=$(podman top "$NAME" user | tail -1 | tr -d ' ')
ro=$(podman inspect -f '{{.HostConfig.ReadonlyRootfs}}' "$NAME")
[ "$user" = 65532 ] && [ "$ro" = true ] || fail "runs as user $user, read-only root $ro"
say "served a product read from the image (user $user, read-only root)"
# A key added on the host reaches the running server: the folder is mounted,
# not the file, whose replacement a file mount would hide.
added=$SECONDS
key2=$("$PDS" keys add --keys "$W/keys/keys.json" --tenant demo2 --scopes products:read 2>/dev/null)
for _ in $(seq 1 50); do
  curl -sf -o /dev/null -H "Authorization: Bearer $key2" "http://127.0.0.1:$PORT/v1/products/09520123456788" && break
  sleep 0.2
done
curl -sf -o /dev/null -H "Authorization: Bearer $key2" "http://127.0.0.1:$PORT/v1/products/09520123456788" ||
  fail "a key added on the host was not taken up by the server"
say "a key added on the host answered within $(( SECONDS - added )) s"

# 6. SIGTERM: drain, then a clean exit.
podman stop -t 30 "$NAME" >/dev/null
code=$(podman inspect -f '{{.State.ExitCode}}' "$NAME")
logs=$(podman logs "$NAME" 2>&1)
[ "$code" = 0 ] || fail "exit $code after SIGTERM: $(tail -5 <<<"$logs")"
grep -q '"msg":"draining"' <<<"$logs" && grep -q '"msg":"stopped"' <<<"$logs" ||
  fail "no draining/stopped log lines: $(tail -5 <<<"$logs")"
! grep '"level":"ERROR"' <<<"$logs" || fail "the server logged errors"
say "SIGTERM: drained, logged draining and stopped, exit 0"
say "ok in $(( $(date +%s) - began )) s"
