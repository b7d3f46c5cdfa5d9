#!/usr/bin/env bash
# make load: one pds server under wrk at twice its saturating concurrency on
# identity GETs and bulk resolve for DUR (60s), with a slow-client attack
# alongside (connections sending headers a byte a second, idle keep-alives
# after a 401). Reports 5xx (must be 0) and the well-behaved clients' p99 in
# BENCHMARKS.md. Then two connection floods from one address against the
# same server with its default limits (scripts/bench/flood: FLOOD_KEEPALIVE keep-alive
# connections with a key, then FLOOD_SILENT silent ones), and again against
# one with --max-conns-share 1, while a new client on another address sends
# a request every 50 ms for 5 s: when it is first served, and how many of
# its requests are refused, go to BENCHMARKS.md's flood section. Not part of
# make test.
source "$(dirname "$0")/bench-lib.sh"
cd "$(dirname "$0")/.."
need wrk wrk
need python3 python3
need curl curl

N=${N:-20000}
DUR=${DUR:-60s}
SLOW=${SLOW:-400}
FLOOD_KEEPALIVE=${FLOOD_KEEPALIVE:-10000}
FLOOD_SILENT=${FLOOD_SILENT:-5000}
W=${BENCH_DIR:-var/load}
PORT=${PORT:-18150}
ADMIN=${ADMIN_PORT:-18151}
mkdir -p "$W"
go build -o bin/pds ./cmd/pds
go build -o bin/flood ./scripts/bench/flood
# The flood holds FLOOD_KEEPALIVE connections, pds up to its cap.
ulimit -n "$(ulimit -Hn)"
ensure_snapshot "$W" "$N"

rm -f "$W/keys" "$W/keys.usage"
KEY=$(bin/pds keys add --keys "$W/keys" --tenant load --scopes products:read,products:resolve 2>/dev/null)
export KEY
grep -o '"identifiers":\["[^"]*"' "$IN/products.ndjson" | cut -d'"' -f4 | awk 'NR<=5000' | sed 's|^|/v1/products/|' > "$W/paths"
grep -o '"identifiers":\["[^"]*"' "$IN/products.ndjson" | cut -d'"' -f4 | awk 'NR<=5000' |
  awk '{ids[NR]=$0} END {for (b=0; b<200; b++) {printf "{\"identifiers\":["; for (i=1;i<=50;i++) {printf "%s\"%s\"", (i>1?",":""), ids[(b*50+i-1)%NR+1]} print "]}"}}' > "$W/bodies"
echo /v1/products/resolve > "$W/resolve-path"

bin/pds serve --snapshot "$SNAP" --keys "$W/keys" --addr "127.0.0.1:$PORT" --admin-addr "127.0.0.1:$ADMIN" --log-level warn 2>"$W/serve.log" &
PID=$!
trap 'kill $PID 2>/dev/null || true' EXIT
wait_port "127.0.0.1:$PORT"
URL="http://127.0.0.1:$PORT"

# Saturating concurrency: the smallest connection count past which identity
# throughput grows by less than 10%.
SAT=1 prev=0
for c in 1 2 4 8 16 32 64; do
  line=$(PATHS="$W/paths" wrk_run "c=$c" "$c" 5s "$URL")
  rps=$(field rps "$line")
  echo "saturation probe: $line" >&2
  if awk -v r="$rps" -v p="$prev" 'BEGIN{exit !(r < p*1.10)}'; then break; fi
  SAT=$c prev=$rps
done
C=$((2 * SAT))
echo "saturating concurrency $SAT; running at $C per endpoint for $DUR" >&2

python3 scripts/slowclients.py 127.0.0.1 "$PORT" "$SLOW" "${DUR%s}" > "$W/slow.txt" &
SLOWPID=$!
PATHS="$W/paths" wrk_run identity "$C" "$DUR" "$URL" > "$W/identity.txt" &
ID=$!
PATHS="$W/resolve-path" BODIES="$W/bodies" wrk_run resolve "$C" "$DUR" "$URL" > "$W/resolve.txt"
wait $ID
wait $SLOWPID || true
curl -s "http://127.0.0.1:$ADMIN/metrics" > "$W/metrics.txt"
five=$(awk '/^pds_http_requests_total\{code="5/ {s+=$2} END {print s+0}' "$W/metrics.txt")
shed=$(awk '/^pds_http_shed_total/ {s+=$2} END {print s+0}' "$W/metrics.txt")
cat "$W/identity.txt" "$W/resolve.txt" "$W/slow.txt" >&2
echo "5xx answered: $five; shed: $shed" >&2

{
  echo "### make load: identity and resolve at twice saturation, with slow clients"
  echo
  echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(machine); load average when the run ended: $(cut -d' ' -f1-3 /proc/loadavg)."
  echo "Command: \`make load\` (N=$N products, DUR=$DUR, SLOW=$SLOW slowloris + $SLOW idle-after-401 connections; saturating concurrency $SAT, run at $C connections per endpoint)."
  echo
  echo "| endpoint | conns | req/s | p50 µs | p99 µs | max µs | requests | non-2xx | socket errors |"
  echo "|---|---|---|---|---|---|---|---|---|"
  for f in identity resolve; do
    l=$(cat "$W/$f.txt")
    echo "| $f | $C | $(field rps "$l") | $(field p50_us "$l") | $(field p99_us "$l") | $(field max_us "$l") | $(field requests "$l") | $(field non2xx "$l") | $(field errors "$l") |"
  done
  echo
  echo "5xx answered by pds (from its metrics): $five. Requests or connections shed with 503: $shed. Slow clients: $(cut -d' ' -f2- "$W/slow.txt")."
} > "$W/section.md"
write_section load "$W/section.md"
[ "$five" = 0 ] || { echo "load: pds answered $five 5xx" >&2; exit 1; }

# The floods, one after the other, against the server above (its default
# --max-conns 4096 and --max-conns-share 0.25), then against a second one
# with --max-conns-share 1, where the flood reaches the cap and idle
# connections make room. The flood closes its connections when it ends;
# pds's counters are read before and after each.
counters() { # ADMIN_PORT
  curl -s "http://127.0.0.1:$1/metrics" | awk '
    /^pds_http_shed_total\{limit="connections_per_address"\}/ {a=$2}
    /^pds_http_shed_total\{limit="connections"\}/ {c=$2}
    /^pds_http_idle_connections_closed_total/ {i=$2}
    END {printf "%d %d %d\n", a, c, i}'
}
floods() { # NAME PORT ADMIN_PORT
  local name=$1 port=$2 admin=$3 a0 c0 i0 a1 c1 i1 a2 c2 i2
  sleep 5
  read -r a0 c0 i0 < <(counters "$admin")
  KEY=$KEY bin/flood -addr "127.0.0.1:$port" -conns "$FLOOD_KEEPALIVE" > "$W/flood-$name-keepalive.txt"
  sleep 5
  read -r a1 c1 i1 < <(counters "$admin")
  KEY=$KEY bin/flood -addr "127.0.0.1:$port" -conns "$FLOOD_SILENT" -silent > "$W/flood-$name-silent.txt"
  sleep 5
  read -r a2 c2 i2 < <(counters "$admin")
  echo "$((a1 - a0)) $((c1 - c0)) $((i1 - i0))" > "$W/flood-$name-keepalive.counters"
  echo "$((a2 - a1)) $((c2 - c1)) $((i2 - i1))" > "$W/flood-$name-silent.counters"
  cat "$W/flood-$name-keepalive.txt" "$W/flood-$name-keepalive.counters" "$W/flood-$name-silent.txt" "$W/flood-$name-silent.counters" >&2
}
floods default "$PORT" "$ADMIN"
kill "$PID"
wait "$PID" 2>/dev/null || true
bin/pds serve --snapshot "$SNAP" --keys "$W/keys" --addr "127.0.0.1:$((PORT + 2))" --admin-addr "127.0.0.1:$((ADMIN + 2))" \
  --max-conns-share 1 --log-level warn 2>"$W/serve-share1.log" &
PID=$!
wait_port "127.0.0.1:$((PORT + 2))"
floods share1 "$((PORT + 2))" "$((ADMIN + 2))"
{
  echo "### make load: a new client during a connection flood from one address"
  echo
  echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(machine); load average when the run ended: $(cut -d' ' -f1-3 /proc/loadavg)."
  echo "Command: \`make load\` (scripts/bench/flood against \`pds serve\` with \`--max-conns 4096 --read-header-timeout 5s --idle-timeout 30s\`, its defaults, and \`--max-conns-share\` 0.25, the default, or 1). The flood comes from 127.0.0.2 and holds its connections, opening a new one for each the server closes or refuses; the new client, on 127.0.0.3, sends \`GET /v1/whoami\` with a key every 50 ms for 5 s, one connection each."
  echo
  echo "| flood | \`--max-conns-share\` | new client first served after | its requests | refused | refused after the first second | flood connections answered 200 | flood connections reopened | refused past the address's share | refused at the cap | idle closed at the cap |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  for name in default share1; do
    for f in keepalive silent; do
      l=$(cat "$W/flood-$name-$f.txt")
      read -r ra rc ri < "$W/flood-$name-$f.counters"
      case $f in keepalive) what="$(field conns "$l") keep-alive, with a key";; silent) what="$(field conns "$l") silent";; esac
      case $name in default) share=0.25;; share1) share=1;; esac
      echo "| $what | $share | $(field first_served_ms "$l") ms | $(field probes "$l") | $(field refused "$l") | $(field refused_after_1s "$l") | $(field answered "$l") | $(field replaced "$l") | $ra | $rc | $ri |"
    done
  done
} > "$W/flood-section.md"
write_section load-flood "$W/flood-section.md"
for name in default share1; do
  for f in keepalive silent; do
    r="$W/flood-$name-$f.txt"
    [ "$(field refused_after_1s "$(cat "$r")")" = 0 ] || { echo "load: the new client was refused after the first second ($r)" >&2; exit 1; }
  done
done
