#!/usr/bin/env bash
# make fleet: a fleet on loopback. versitygw is the origin (S3); three
# replicas each run 'pds snapshot follow' beside 'pds serve --snapshot
# DIR/current'; nginx load-balances them; wrk drives identity GETs and
# resolve POSTs through nginx while three new builds are published one after
# the other; the last changes 1% of the products of the one before and is
# published with deltas, and every replica must take it by delta. Builds are
# vouched for by a root of trust (pds trust: three root keys, two of which
# sign a root; a build key; a timestamp key); replicas follow and serve
# with the first root as their anchor. Between builds 2 and 3 the build key
# is rotated (root version 2, signed by two root keys), the timestamp is
# renewed once, and after build 4 a publish with the retired key must be
# refused while every replica keeps serving build 4. Reports requests sent
# and failed (must be 0), seconds from each publish until every replica
# serves the new build, bytes pulled, the root version each replica ended
# on and the refusal; writes them to BENCHMARKS.md. Ports 18200-18213.
source "$(dirname "$0")/bench-lib.sh"
cd "$(dirname "$0")/.."
bash scripts/tools.sh --only versitygw nginx wrk curl

N=${N:-20000}            # products per build
DUR=${DUR:-90}           # seconds of load
EVERY=${EVERY:-1s}       # follower poll and serve watch interval
W=${FLEET_DIR:-var/fleet}
P_NGINX=18200 P_S3=18201 P_R=(18211 18212 18213)
VGW=$(bash scripts/tools.sh --which versitygw)
export AWS_ACCESS_KEY_ID=fleetaccess AWS_SECRET_ACCESS_KEY=fleetsecret0123456789
ORIGIN=s3://pds/nightly
S3FLAGS=(--endpoint "http://127.0.0.1:$P_S3")

PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT
rm -rf "$W"
mkdir -p "$W/s3/pds" "$W/nginx"
go build -o bin/pds ./cmd/pds
go build -o bin/changeinput ./scripts/bench/changeinput
echo "fleet: machine $(machine)"

# 1. The root of trust: three root keys (any two sign a root), the build
#    key that signs builds 1 and 2, the one that replaces it for builds 3
#    and 4, and the timestamp key. Root version 1 names the first build
#    key; it is each replica's anchor.
T="$W/trust"
mkdir -p "$T"
for k in r1 r2 r3 build build2 ts; do
  bin/pds trust keygen --key "$T/$k.key" --pub "$T/$k.pub" >/dev/null
done
ROOT="$T/1.root.json"
bin/pds trust root --deployment fleet --root-key "$T/r1.pub" --root-key "$T/r2.pub" --root-key "$T/r3.pub" --threshold 2 \
  --build-key "$T/build.pub" --timestamp-key "$T/ts.pub" --out "$ROOT" >/dev/null
bin/pds trust sign --key "$T/r1.key" "$ROOT" >/dev/null
bin/pds trust sign --key "$T/r2.key" "$ROOT" >/dev/null

# 2. Three builds: the bundled sample's showcase products in each, N
#    generated products with seed 1, 2, 3; sequence 1, 2, 3.
for i in 1 2 3; do
  bin/pds gen --products "$N" --seed "$i" --showcase --out "$W/in$i" --quiet
  keep=()
  [ "$i" = 3 ] && keep=(--keep-records) # the base of build 4
  bin/pds ingest --in "$W/in$i" --out "$W/build$i" --sequence "$i" "${keep[@]}" --quiet >/dev/null
  ID[$i]=$(sed -n 's/.*"build_id": "\([^"]*\)".*/\1/p' "$W/build$i/manifest.json")
  echo "fleet: build $i is ${ID[$i]} ($(du -sm "$W/build$i" | cut -f1) MiB)"
done
# Build 4: a night's change to build 3 (1% of its products, each restated
# whole with new claim values), built incrementally from build 3 as a
# nightly build is, and published with deltas from the earlier builds.
bin/changeinput --in "$W/in3" --changes "$W/changes4" --per10k 100 2>/dev/null
bin/pds ingest --base "$W/build3" --in "$W/changes4" --out "$W/build4" --sequence 4 --quiet >/dev/null
ID[4]=$(sed -n 's/.*"build_id": "\([^"]*\)".*/\1/p' "$W/build4/manifest.json")
echo "fleet: build 4 is ${ID[4]} (1% of build 3's products changed)"
# Build 5, the one offered with the retired key: small, since what is
# refused is its signer. Outside $W's top level, so build 4's deltas do
# not consider it.
mkdir -p "$W/retired"
bin/pds gen --products 200 --seed 5 --out "$W/retired/in5" --quiet
bin/pds ingest --in "$W/retired/in5" --out "$W/retired/build5" --sequence 5 --quiet >/dev/null

# 3. The origin, root version 1, and build 1 published.
"$VGW" --access "$AWS_ACCESS_KEY_ID" --secret "$AWS_SECRET_ACCESS_KEY" --port "127.0.0.1:$P_S3" --quiet posix "$W/s3" > "$W/versitygw.log" 2>&1 &
PIDS+=($!)
wait_port "127.0.0.1:$P_S3"
bin/pds trust publish-root "${S3FLAGS[@]}" "$ROOT" "$ORIGIN" >/dev/null
BUILDKEY=("--key" "$T/build.key" "--timestamp-key" "$T/ts.key")
bin/pds snapshot publish "${S3FLAGS[@]}" "${BUILDKEY[@]}" "$W/build1" "$ORIGIN" 2>/dev/null

# 4. Three replicas: a follower and a server each.
KEY=$(bin/pds keys add --keys "$W/keys.json" --tenant fleet --scopes products:read,products:resolve 2>/dev/null)
export KEY
for r in 0 1 2; do
  d="$W/replica$r"
  mkdir -p "$d"
  bin/pds snapshot follow "$ORIGIN" "${S3FLAGS[@]}" --snapshots "$d/snapshots" --trust-root "$ROOT" --every "$EVERY" --keep 2 > "$d/follow.log" 2>&1 &
  PIDS+=($!)
done
for r in 0 1 2; do
  d="$W/replica$r"
  for _ in $(seq 1 600); do [ -L "$d/snapshots/current" ] && break; sleep 0.1; done
  bin/pds serve --snapshot "$d/snapshots/current" --trust-root "$ROOT" --keys "$W/keys.json" --addr "127.0.0.1:${P_R[$r]}" --watch "$EVERY" > "$d/serve.log" 2>&1 &
  PIDS+=($!)
  wait_port "127.0.0.1:${P_R[$r]}"
done

# 5. nginx in front.
cat > "$W/nginx/nginx.conf" <<CONF
daemon off;
worker_processes 2;
pid $PWD/$W/nginx/nginx.pid;
error_log $PWD/$W/nginx/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $PWD/$W/nginx/body;
  proxy_temp_path $PWD/$W/nginx/proxy;
  fastcgi_temp_path $PWD/$W/nginx/fastcgi;
  uwsgi_temp_path $PWD/$W/nginx/uwsgi;
  scgi_temp_path $PWD/$W/nginx/scgi;
  upstream pds {
    server 127.0.0.1:${P_R[0]};
    server 127.0.0.1:${P_R[1]};
    server 127.0.0.1:${P_R[2]};
    keepalive 64;
  }
  server {
    listen 127.0.0.1:$P_NGINX;
    client_max_body_size 1m;
    location / {
      proxy_pass http://pds;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }
}
CONF
nginx -p "$PWD/$W/nginx" -c "$PWD/$W/nginx/nginx.conf" &
PIDS+=($!)
wait_port "127.0.0.1:$P_NGINX"

# 6. Load: identity GETs and 100-identifier resolves, through nginx.
grep -o '"identifiers":\["[^"]*"' "$W/in1/products.ndjson" | cut -d'"' -f4 | shuf -n 5000 --random-source=<(yes) > "$W/subjects.txt"
sed 's|^|/v1/products/|' "$W/subjects.txt" > "$W/paths-identity.txt"
echo /v1/products/resolve > "$W/paths-resolve.txt"
for i in $(seq 1 50); do
  shuf -n 100 --random-source=<(yes "$i") "$W/subjects.txt" | sed 's/.*/"&"/' | paste -sd, - | sed 's/^/{"identifiers":[/; s/$/]}/' >> "$W/bodies.txt"
done
B="http://127.0.0.1:$P_NGINX"
PATHS="$W/paths-identity.txt" wrk -t1 -c16 -d"${DUR}s" -s scripts/bench/wrk-paths.lua "$B" > "$W/wrk-identity.txt" 2>&1 &
WRK1=$!
PATHS="$W/paths-resolve.txt" BODIES="$W/bodies.txt" wrk -t1 -c4 -d"${DUR}s" -s scripts/bench/wrk-paths.lua "$B" > "$W/wrk-resolve.txt" 2>&1 &
WRK2=$!
PIDS+=($WRK1 $WRK2)

# swapped_at REPLICA BUILD_ID: the time (epoch seconds) the replica's server
# logged swapping to the build, or nothing yet.
swapped_at() {
  local line
  line=$(grep '"msg":"snapshot swapped"' "$W/replica$1/serve.log" | grep "\"build_id\":\"$2\"" | head -1) || true
  [ -n "$line" ] || return 0
  date -d "$(sed -n 's/.*"time":"\([^"]*\)".*/\1/p' <<<"$line")" +%s.%N
}

# 7. Three builds published one after the other, under load; the build
#    key rotated after build 2, the timestamp renewed after build 3.
sleep 10
for i in 2 3 4; do
  if [ "$i" = 3 ]; then
    # Root version 2 names the new build key; two of the three root keys
    # (the ones that are in root 1 and in root 2) sign it.
    t0=$(date +%s.%N)
    bin/pds trust root --previous "$ROOT" --deployment fleet --root-key "$T/r1.pub" --root-key "$T/r2.pub" --root-key "$T/r3.pub" --threshold 2 \
      --build-key "$T/build2.pub" --timestamp-key "$T/ts.pub" --out "$T/2.root.json" >/dev/null
    bin/pds trust sign --key "$T/r2.key" "$T/2.root.json" >/dev/null
    bin/pds trust sign --key "$T/r3.key" "$T/2.root.json" >/dev/null
    # Published with the new build key: the build being served (build 2)
    # is signed again under root 2 in the same command.
    bin/pds trust publish-root "${S3FLAGS[@]}" --key "$T/build2.key" --timestamp-key "$T/ts.key" "$T/2.root.json" "$ORIGIN" >/dev/null
    ROTATE=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b-a}')
    BUILDKEY=("--key" "$T/build2.key" "--timestamp-key" "$T/ts.key")
    echo "fleet: root version 2 (build key rotated) made, signed by 2 root keys and published in $ROTATE s"
  fi
  if [ "$i" = 4 ]; then
    # The timestamp key's cron job, between builds: replicas take nothing new.
    t0=$(date +%s.%N)
    TSOUT=$(bin/pds snapshot timestamp "${S3FLAGS[@]}" --key "$T/ts.key" "$ORIGIN")
    RENEW=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b-a}')
    echo "fleet: $TSOUT (renewed in $RENEW s)"
  fi
  deltas=()
  # Build 4 carries deltas from the builds before it (they sit in $W).
  [ "$i" = 4 ] && deltas=(--deltas-from "$W")
  t0=$(date +%s.%N)
  if ! bin/pds snapshot publish "${S3FLAGS[@]}" "${BUILDKEY[@]}" "${deltas[@]}" "$W/build$i" "$ORIGIN" 2> "$W/publish$i.log"; then
    echo "fleet: publishing build $i failed:" >&2
    grep -v '^publish: ' "$W/publish$i.log" >&2
    exit 1
  fi
  t1=$(date +%s.%N)
  last=
  for _ in $(seq 1 1200); do
    last=$t1
    all=1
    for r in 0 1 2; do
      t=$(swapped_at "$r" "${ID[$i]}")
      if [ -z "$t" ]; then all=0; break; fi
      last=$(awk -v a="$last" -v b="$t" 'BEGIN{print (b>a)?b:a}')
    done
    [ "$all" = 1 ] && break
    sleep 0.1
  done
  [ "$all" = 1 ] || { echo "fleet: build $i did not reach every replica in 120 s" >&2; exit 1; }
  PUB[$i]=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}')
  LAG[$i]=$(awk -v a="$t1" -v b="$last" 'BEGIN{printf "%.2f", b-a}')
  echo "fleet: build $i published in ${PUB[$i]} s; every replica served it ${LAG[$i]} s after the publish finished"
  sleep 10
done

# 8. The retired build key, still under load: the publish must fail on the
#    key (root version 2 does not name it), and every replica must go on
#    serving build 4.
rc=0
bin/pds snapshot publish "${S3FLAGS[@]}" --key "$T/build.key" --timestamp-key "$T/ts.key" "$W/retired/build5" "$ORIGIN" > "$W/retired/publish.log" 2>&1 || rc=$?
if [ "$rc" = 0 ]; then
  echo "fleet: a publish with the retired build key succeeded (see $W/retired/publish.log)" >&2
  exit 1
fi
if ! grep -q 'is not a targets key of root version 2' "$W/retired/publish.log"; then
  echo "fleet: a publish with the retired build key failed (exit $rc), but not on the key:" >&2
  tail -3 "$W/retired/publish.log" >&2
  exit 1
fi
REFUSAL=$(grep -o 'untrusted: key [0-9a-f]\{8\}[0-9a-f]* is not a targets key of root version 2' "$W/retired/publish.log" | head -1 | sed 's/\(key [0-9a-f]\{8\}\)[0-9a-f]*/\1…/')
echo "fleet: a publish with the retired build key was refused (exit $rc): $REFUSAL"
sleep 5 # five polls of the followers, five watches of the servers
serving=0 ROOTV=()
for r in 0 1 2; do
  if curl -fsS "http://127.0.0.1:${P_R[$r]}/readyz" | grep -q "\"build_id\":\"${ID[4]}\""; then
    serving=$((serving + 1))
  fi
  v=1
  while [ -e "$W/replica$r/snapshots/.trust/$((v + 1)).root.json" ]; do v=$((v + 1)); done
  ROOTV+=("$v")
done
if [ "$serving" != 3 ]; then
  echo "fleet: after the retired key's publish, only $serving of 3 replicas serve build 4" >&2
  exit 1
fi
echo "fleet: every replica serves build 4 after the refusal; root versions the replicas ended on: ${ROOTV[*]}"
wait "$WRK1" "$WRK2" || true

# 9. Report.
r1=$(grep '^RESULT' "$W/wrk-identity.txt") r2=$(grep '^RESULT' "$W/wrk-resolve.txt")
req=$(( $(field requests "$r1") + $(field requests "$r2") ))
failed=$(( $(field errors "$r1") + $(field non2xx "$r1") + $(field errors "$r2") + $(field non2xx "$r2") ))
pulled=0
for r in 0 1 2; do
  # The first bytes_pulled of a line is that pull's; the one in "stats" is the follower's total.
  b=$(grep '"msg":"new build is current"' "$W/replica$r/follow.log" | while read -r l; do grep -o '"bytes_pulled":[0-9]*' <<<"$l" | head -1 | cut -d: -f2; done | awk '{s+=$1} END{print s+0}')
  pulled=$((pulled + ${b:-0}))
done
refused=$(cat "$W"/replica*/follow.log | grep -c '"level":"ERROR"' || true)
# A poll between root version 2's publish and the served build's statements
# signed again under it (the same publish-root command) finds statements
# signed by the key root 2 retired.
retired_window=$(cat "$W"/replica*/follow.log | grep '"level":"ERROR"' | grep -c 'not enough signatures' || true)
# How each replica took build 4, and the bytes it fetched for it.
by_delta=0 delta_bytes=()
for r in 0 1 2; do
  line=$(grep '"msg":"new build is current"' "$W/replica$r/follow.log" | grep "\"build_id\":\"${ID[4]}\"" | head -1)
  grep -q '"via":"delta"' <<<"$line" && by_delta=$((by_delta + 1))
  delta_bytes+=("$(grep -o '"bytes_pulled":[0-9]*' <<<"$line" | head -1 | cut -d: -f2)")
done
out=$(mktemp)
{
  echo "## Fleet: publish, pull, verify, swap under load (\`make fleet\`)"
  echo
  echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') on $(machine); load average when the run ended: $(cut -d' ' -f1-3 /proc/loadavg)."
  echo "Command: \`make fleet\` (scripts/fleet.sh; N=$N products per build, ${DUR} s of load, follower poll and serve watch every $EVERY)."
  echo "versitygw ${VERSITYGW_VERSION:-v1.8.0} (posix backend) on loopback as the S3 origin; 3 replicas, each \`pds snapshot follow\` + \`pds serve --snapshot DIR/current\`;"
  echo "nginx round-robin with keep-alive in front; wrk \`-c16\` identity GETs and \`-c4\` resolve POSTs of 100 identifiers, both through nginx."
  echo "Trust: a root of trust (\`pds trust\`, TUF statements) with 3 root keys (threshold 2), a build key and a timestamp key; replicas follow and serve with \`--trust-root\` root version 1."
  echo
  echo "| figure | value |"
  echo "|---|---|"
  echo "| requests sent (identity + resolve) | $req ($(field requests "$r1") + $(field requests "$r2")) |"
  echo "| requests failed (socket errors + non-2xx) | $failed |"
  echo "| build 2: publish took / every replica serving it after publish | ${PUB[2]} s / ${LAG[2]} s |"
  echo "| build 3: publish took / every replica serving it after publish | ${PUB[3]} s / ${LAG[3]} s |"
  echo "| build 4 (1% of build 3's products changed, with deltas): publish took / every replica serving it after publish | ${PUB[4]} s / ${LAG[4]} s |"
  echo "| build 4: replicas that took it by delta / bytes each fetched | $by_delta of 3 / ${delta_bytes[*]} |"
  echo "| bytes pulled by the 3 replicas (builds 1-4) | $pulled |"
  echo "| build size on disk (build 2 / build 4) | $(du -sb "$W/build2" | cut -f1) / $(du -sb "$W/build4" | cut -f1) bytes |"
  echo "| refusals logged by followers (of them: statements signed by the retired key, polled between root 2 and the build signed again under it) | $refused ($retired_window) |"
  echo "| build key rotation after build 2: root version 2 made, signed by 2 of 3 root keys, published, build 2 signed again under it | $ROTATE s |"
  echo "| root version each replica ended on (SNAPS/.trust/N.root.json) | ${ROOTV[*]} |"
  echo "| timestamp renewed between builds 3 and 4 (\`pds snapshot timestamp\`) | $RENEW s |"
  echo "| retired key refused: \`pds snapshot publish --key\` with the first build key after build 4 | exit $rc, \"$REFUSAL\"; $serving of 3 replicas still serving build 4 |"
  echo "| whole run (keys, 3 builds, setup, load) | $SECONDS s |"
  echo "| identity p50 / p99 through nginx | $(field p50_us "$r1") µs / $(field p99_us "$r1") µs |"
  echo "| resolve (100 ids) p50 / p99 through nginx | $(field p50_us "$r2") µs / $(field p99_us "$r2") µs |"
  echo
  echo "\"After publish\" is from the moment \`pds snapshot publish\` wrote the \`latest\` pointer to the time the last replica's server logged \`snapshot swapped\` to the build; it includes the poll interval, the pull, the follower's verification and self-test, and the server's own verification on swap."
} > "$out"
cat "$out"
write_section fleet "$out"
rm -f "$out"
if [ "$failed" != 0 ]; then
  echo "fleet: $failed requests failed" >&2
  exit 1
fi
if [ "$by_delta" != 3 ]; then
  echo "fleet: only $by_delta of 3 replicas took build 4 by delta (see $W/replica*/follow.log)" >&2
  exit 1
fi
