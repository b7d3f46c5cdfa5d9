#!/usr/bin/env bash
# make compare-get A=REF B=REF: GETs of the same snapshot served by two pds
# binaries, each run right after a run of the minimal net/http baseline
# (scripts/bench/baseline), so that each ratio has a baseline of its own minute. For
# ROUNDS rounds, A then B: pds serve is started, warmed, and run at each of
# CONNS connections for each view in VIEWS, printing the ratio to the
# baseline, the server's CPU time per request and the idle share of the
# machine's CPU; then the medians. A REF is an executable or a git revision
# (built into var/compare). SNAP_A and SNAP_B, when set, name the snapshot
# each side serves instead (the same pds may then be A and B: two snapshot
# layouts compared); both must hold the same products. Nothing is written to
# BENCHMARKS.md.
source "$(dirname "$0")/bench-lib.sh"
source "$(dirname "$0")/compare-lib.sh"
cd "$(dirname "$0")/.."
need wrk wrk

: "${A:?name the first pds: A=FILE or A=REVISION (make compare-get A=main B=bin/pds)}"
B=${B:-bin/pds}
ROUNDS=${ROUNDS:-3}
N=${N:-200000}
DUR=${DUR:-8s}
CONNS=${CONNS:-4 32}
VIEWS=${VIEWS:-identity}
W=${BENCH_DIR:-var/bench}
PORT_PDS=${PORT_PDS:-18180} PORT_BASE=${PORT_BASE:-18190}

bin_a=$(compare_bin "$A")
bin_b=$(compare_bin "$B")
go build -o bin/baseline ./scripts/bench/baseline
ensure_snapshot "$W" "$N" # of bin/pds's format: both binaries must read it
SNAP_A=${SNAP_A:-$SNAP} SNAP_B=${SNAP_B:-$SNAP}
for s in "$SNAP_A" "$SNAP_B"; do
  [ -f "$s/manifest.json" ] || { echo "compare-get: $s is not a snapshot (no manifest.json)" >&2; exit 1; }
done
paths="$W/compare-paths"
grep -o '"identifiers":\["[^"]*"' "$IN/products.ndjson" | cut -d'"' -f4 | shuf -n 20000 --random-source=<(yes) > "$paths-subjects.txt"
sed 's|^|/v1/products/|' "$paths-subjects.txt" > "$paths-identity.txt"
sed 's|^|/v1/products/|; s|$|/dpp|' "$paths-subjects.txt" > "$paths-passport.txt"
sed 's|^|/v1/products/|; s|$|/evidence|' "$paths-subjects.txt" > "$paths-evidence.txt"
rm -f "$W/compare-keys.json" "$W/compare-keys.json.lock"
KEY=$(bin/pds keys add --keys "$W/compare-keys.json" --tenant bench --scopes products:read 2>/dev/null)

bin/baseline --addr "127.0.0.1:$PORT_BASE" --ids "$paths-identity.txt" 2>/dev/null &
BASE_PID=$!
PDS_PID=
results=$(mktemp)
trap 'kill $BASE_PID $PDS_PID 2>/dev/null; rm -f "$results"' EXIT
wait_port "127.0.0.1:$PORT_BASE"
PATHS="$paths-identity.txt" KEY="" wrk_run warm 4 3s "http://127.0.0.1:$PORT_BASE" > /dev/null

# cpu_ticks PID: the process's user and system time in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
idle_ticks() { awk '/^cpu / { print $5 }' /proc/stat; }
hz=$(getconf CLK_TCK)

echo "compare-get: $N products, $ROUNDS rounds of $DUR a run; views: $VIEWS; connections: $CONNS;" \
  "A=$A ($bin_a) serving $SNAP_A, B=$B ($bin_b) serving $SNAP_B; $(machine)"
for r in $(seq 1 "$ROUNDS"); do
  for side in A B; do
    if [ "$side" = A ]; then bin=$bin_a snap=$SNAP_A; else bin=$bin_b snap=$SNAP_B; fi
    "$bin" serve --snapshot "$snap" --keys "$W/compare-keys.json" --addr "127.0.0.1:$PORT_PDS" > "$W/compare-serve-$side.log" 2>&1 &
    PDS_PID=$!
    wait_port "127.0.0.1:$PORT_PDS"
    for v in $VIEWS; do
      ORDER=seq PATHS="$paths-$v.txt" KEY=$KEY wrk_run warm 4 5s "http://127.0.0.1:$PORT_PDS" > /dev/null
    done
    for c in $CONNS; do
      base=$(PATHS="$paths-identity.txt" KEY="" wrk_run base "$c" "$DUR" "http://127.0.0.1:$PORT_BASE")
      for v in $VIEWS; do
        c0=$(cpu_ticks "$PDS_PID") i0=$(idle_ticks)
        out=$(PATHS="$paths-$v.txt" KEY=$KEY wrk_run pds "$c" "$DUR" "http://127.0.0.1:$PORT_PDS")
        c1=$(cpu_ticks "$PDS_PID") i1=$(idle_ticks)
        rps=$(field rps "$out") brps=$(field rps "$base")
        ratio=$(awk -v a="$rps" -v b="$brps" 'BEGIN { printf "%.3f", a / b }')
        us=$(awk -v t=$((c1 - c0)) -v hz="$hz" -v r="$rps" -v d="${DUR%s}" 'BEGIN { printf "%.1f", t / hz * 1e6 / (r * d) }')
        idle=$(awk -v t=$((i1 - i0)) -v hz="$hz" -v d="${DUR%s}" -v n="$(nproc)" 'BEGIN { printf "%.0f", 100 * t / hz / (d * n) }')
        echo "$side $v $c $ratio $us" >> "$results"
        echo "round $r $side $v c$c: ratio $ratio (pds $rps req/s, p99 $(field p99_us "$out") µs; baseline $brps req/s, p99 $(field p99_us "$base") µs), server CPU $us µs a request, machine idle $idle%"
      done
    done
    kill "$PDS_PID"
    wait "$PDS_PID" 2>/dev/null || true
    PDS_PID=
    trim_access_log "$W/compare-serve-$side.log"
  done
done
for v in $VIEWS; do
  for c in $CONNS; do
    for side in A B; do
      echo "median $side $v c$c: ratio $(awk -v s=$side -v v=$v -v c=$c '$1 == s && $2 == v && $3 == c { print $4 }' "$results" | median)," \
        "server CPU $(awk -v s=$side -v v=$v -v c=$c '$1 == s && $2 == v && $3 == c { print $5 }' "$results" | median) µs a request"
    done
  done
done
