#!/usr/bin/env bash
# make bench-serve: how long `pds serve` takes from its start to /readyz 200
# on the N_BIG-product snapshot, and how many bytes it read from disk on the
# way (/proc/PID/io read_bytes at ready), with a cold page cache (the kernel's
# caches dropped before each run: needs root) and a warm one; then its RSS
# while serving identity GETs and resolve calls; then identity GETs beside
# the bare net/http baseline (scripts/bench/baseline) on the same paths, in
# ROUNDS rounds of one run each, the ratio the median of the rounds'.
# SERVE_ARGS, when set, are more flags for pds serve (say, "--search-copy-dir
# DIR --no-point-index"), and the run writes a section of its own.
source "$(dirname "$0")/bench-lib.sh"
cd "$(dirname "$0")/.."
need wrk wrk
need curl curl
N=${N_BIG:-1000000}
DUR=${DUR:-20s}
RUNS=${RUNS:-3}
CACHE_MB=${CACHE_MB:-0} # --cache-mb; 0: the server's default (sized from the store)
read -r -a SERVE_EXTRA <<< "${SERVE_ARGS:-}"
W=${BENCH_DIR:-var/bench}
PORT_PDS=${PORT_PDS:-18083}
mkdir -p "$W"
go build -o bin/pds ./cmd/pds
go build -o bin/exportidentity ./scripts/bench/exportidentity
go build -o bin/baseline ./scripts/bench/baseline
ensure_snapshot "$W" "$N"
snap=$SNAP
PORT_BASE=${PORT_BASE:-18093}
BASE_PID=
trap 'stop_pds; [ -z "$BASE_PID" ] || kill "$BASE_PID" 2>/dev/null || true' EXIT
SIZE_MB=$(( $(du -sbL "$snap" | cut -f1) / 1048576 ))


# ready_probe PORT: whether /readyz answers 200. It asks through bash's own
# /dev/tcp rather than curl, and ready_ms waits with read -t on a pipe
# rather than sleep: polling every 5 ms by starting two processes each time
# took CPU from the server being timed (its verification took about 0.3 s
# longer at 1M).
ready_probe() {
  local status="" ok=1
  trap '' PIPE # a connection reset before the request is written must not end the script
  { printf 'GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' >&3; read -r -t 2 _ status _ <&3; } 2>/dev/null 3<>"/dev/tcp/127.0.0.1/$1"
  trap - PIPE
  [ "$status" = 200 ] && ok=0
  return $ok
}

# ready_ms: start pds serve (as start_pds does, without waiting) and poll
# /readyz every 5 ms until it answers 200; sets READY_MS, the milliseconds
# since the start, and PDS_PID. With cache=cold the page cache is dropped
# just before the start.
ready_ms() {
  local t0 t1
  rm -f "$W/keys-serve.json"
  KEY=$(bin/pds keys add --keys "$W/keys-serve.json" --tenant bench --scopes products:read,products:resolve 2>/dev/null)
  export KEY
  # Cold: dropped after the key was added, so that the pds executable's own
  # pages are read from disk by the server too.
  [ "$cache" = cold ] && drop_caches
  ADMIN=127.0.0.1:$((PORT_PDS + 1))
  local nap
  exec {nap}<> <(:) # a pipe nobody writes: read -t on it waits without a process
  t0=$(date +%s%N)
  bin/pds serve --snapshot "$snap" --keys "$W/keys-serve.json" --addr "127.0.0.1:$PORT_PDS" --admin-addr "$ADMIN" --cache-mb "$CACHE_MB" "${SERVE_EXTRA[@]}" > "$W/serve-serve.log" 2>&1 &
  PDS_PID=$! PDS_LOG="$W/serve-serve.log"
  until ready_probe "$PORT_PDS"; do
    kill -0 "$PDS_PID" 2>/dev/null || { echo "bench-serve: pds serve exited: $(cat "$W/serve-serve.log")" >&2; return 1; }
    read -r -t 0.005 -u "$nap" _ || true
  done
  t1=$(date +%s%N)
  exec {nap}<&-
  READY_MS=$(( (t1 - t0) / 1000000 ))
}

# The start-up line of the server: what verification and opening took.
logged() { serving_field "$W/serve-serve.log" "$1"; }

rows=()
WORST_MS=0
WORST_READ=0
for cache in cold warm; do
  [ "$cache" = warm ] && find "$snap" -type f -exec cat {} + > /dev/null
  for i in $(seq 1 "$RUNS"); do
    ready_ms
    polled_mb=$(( $(awk '/^read_bytes/{print $2}' /proc/$PDS_PID/io) / 1048576 ))
    read_mb=$(( $(logged disk_read_kb) / 1024 ))
    if [ "$cache" = cold ]; then
      [ "$READY_MS" -le "$WORST_MS" ] || WORST_MS=$READY_MS
      [ "$read_mb" -le "$WORST_READ" ] || WORST_READ=$read_mb
    fi
    rows+=("| $cache | $i | $READY_MS | $read_mb | $polled_mb | $(logged verify_ms) | $(logged open_ms) | $(( $(awk '/VmRSS/{print $2}' /proc/$PDS_PID/status) / 1024 )) |")
    [ "$cache" = warm ] && [ "$i" = "$RUNS" ] || stop_pds
  done
done
CACHE_USED=$(logged cache_mb)
# The readahead of the snapshot's disk: a cold read of one page brings up to
# this much around it into the page cache, and counts it as read.
READAHEAD_KB=$(lsblk -no RA "$(df --output=source "$snap" | tail -1)" 2>/dev/null | head -1)

# RSS while serving: identity GETs and resolve calls of 1000 at 4 connections each.
bin/exportidentity --snapshot "$snap" | cut -f1 > "$W/serve-subjects.txt"
shuf -n 100000 --random-source=<(yes 1) "$W/serve-subjects.txt" | sed 's|^|/v1/products/|' > "$W/serve-paths.txt"
for i in $(seq 1 20); do
  shuf -n 1000 --random-source=<(yes "$i") "$W/serve-subjects.txt" | sed 's/.*/"&"/' | paste -sd, - | sed 's/^/{"identifiers":[/; s/$/]}/'
done > "$W/serve-bodies.txt"
echo /v1/products/resolve > "$W/serve-resolve-path.txt"
profile_pds $(( ${DUR%s} > 12 ? ${DUR%s} - 4 : ${DUR%s} / 2 )) "$W/serve-cpu.pprof"
PATHS="$W/serve-paths.txt" wrk_run identity 4 "$DUR" "http://127.0.0.1:$PORT_PDS" > "$W/serve-identity.txt" &
wrk_pid=$!
PATHS="$W/serve-resolve-path.txt" BODIES="$W/serve-bodies.txt" wrk_run resolve 4 "$DUR" "http://127.0.0.1:$PORT_PDS" > "$W/serve-resolve.txt"
wait "$wrk_pid"
wait "$PROF_PID" || true
RSS_NOW=$(( $(awk '/VmRSS/{print $2}' /proc/$PDS_PID/status) / 1024 ))
RSS_PEAK=$(( $(awk '/VmHWM/{print $2}' /proc/$PDS_PID/status) / 1024 ))
# What the resident set is made of: the process's own memory (anonymous:
# heap, block cache), the snapshot's mapped files (page cache the kernel
# may drop and read again), and shared memory (the search index's private
# copies, memfds, unless --search-copy-dir puts them on disk).
rss_part() { echo $(( $(awk -v k="$1:" '$1 == k {print $2}' /proc/$PDS_PID/status) / 1024 )); }
RSS_ANON=$(rss_part RssAnon) RSS_FILE=$(rss_part RssFile) RSS_SHMEM=$(rss_part RssShmem)
# The private copies held in memory (memfds) take their whole size whether
# or not a page of them was touched, and only touched pages count in RSS:
# the sizes of the memfds the server maps (the doc store's copy is mapped
# and its descriptor closed, so the maps, not the open files, list it).
memfd_mb() {
  local range inode path total=0
  declare -A seen=()
  while read -r range _ _ _ inode path _; do
    case $path in /memfd:*) ;; *) continue ;; esac
    [ -n "${seen[$inode]:-}" ] && continue
    seen[$inode]=1
    total=$(( total + $(stat -Lc %s "/proc/$1/map_files/$range") ))
  done < "/proc/$1/maps"
  echo $(( total / 1048576 ))
}
MEMFD_MB=$(memfd_mb "$PDS_PID")

# Identity GETs beside the bare baseline: the same 100,000 random paths,
# 4 connections, each pds run beside its round's baseline run (the machine
# drifts by more than the difference measured).
bin/baseline --addr "127.0.0.1:$PORT_BASE" --ids "$W/serve-paths.txt" 2>/dev/null &
BASE_PID=$!
wait_port "127.0.0.1:$PORT_BASE"
ROUNDS=${ROUNDS:-3}
GET_DUR=${GET_DUR:-10s}
PATHS="$W/serve-paths.txt" KEY= wrk_run warm 4 3s "http://127.0.0.1:$PORT_BASE" >/dev/null
get_rows=()
: > "$W/serve-get-ratios.txt"
for round in $(seq 1 "$ROUNDS"); do
  b=$(PATHS="$W/serve-paths.txt" KEY= wrk_run "baseline#$round" 4 "$GET_DUR" "http://127.0.0.1:$PORT_BASE")
  p=$(PATHS="$W/serve-paths.txt" wrk_run "pds#$round" 4 "$GET_DUR" "http://127.0.0.1:$PORT_PDS")
  [ "$(field errors "$p")" = 0 ] && [ "$(field non2xx "$p")" = 0 ] || { echo "bench-serve: identity GETs failed: $p" >&2; exit 1; }
  r=$(awk -v a="$(field rps "$p")" -v b="$(field rps "$b")" 'BEGIN{printf "%.3f", a/b}')
  echo "$r" >> "$W/serve-get-ratios.txt"
  get_rows+=("| $round | $(field rps "$p") | $(field rps "$b") | $r | $(awk -v u="$(field p99_us "$p")" 'BEGIN{printf "%.2f", u/1000}') | $(awk -v u="$(field p99_us "$b")" 'BEGIN{printf "%.2f", u/1000}') |")
done
GET_RATIO=$(sort -n "$W/serve-get-ratios.txt" | awk '{a[NR]=$1} END{print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}')
kill "$BASE_PID" 2>/dev/null || true
BASE_PID=
stop_pds

out=$(mktemp)
{
  echo "## pds serve: ready time and serving RSS (\`make bench-serve\`)"
  echo
  echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') on $(machine); load average when the run ended: $(cut -d' ' -f1-3 /proc/loadavg). Command: \`make bench-serve\` (scripts/bench-serve.sh; N=$N products${SERVE_ARGS:+, SERVE_ARGS=\"$SERVE_ARGS\"}, snapshot format $(snap_format "$snap") ($snap), $SIZE_MB MiB on disk; DUR=$DUR)."
  echo
  echo "Ready is from starting \`pds serve\` to the first 200 from \`/readyz\` (polled every 5 ms); read at ready is what the process had read from disk when it began to answer (\`read_bytes\` of /proc/self/io, which the server logs as \`disk_read_kb\` before it starts anything in the background), its own executable's pages included; read at the poll's 200 is the same counter a moment later, by which time the background check of the search index (hashing its files whole, then opening it) has begun. The snapshot's disk reads ahead ${READAHEAD_KB:-?} KiB around a cold page (\`lsblk -o RA\`), and every page read that way counts. Cold runs start right after the kernel's page cache was dropped (\`echo 3 > /proc/sys/vm/drop_caches\`), so the pds executable is read from disk too; warm runs after every file was read. Verify and open are what the server logged (\`verify_ms\`: the manifest, signature, chunk list and a look at every file; \`open_ms\`: Pebble, the point index and the sources; the search index is opened in the background once its files are hashed). RSS at ready is the server's resident set then."
  echo
  echo "| page cache | run | ready ms | read at ready MiB | read at the poll's 200 MiB | verify ms | open ms | RSS at ready MiB |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "Cold start: worst ready ${WORST_MS} ms, worst read at ready ${WORST_READ} MiB (goals: ≤ 1 s and ≤ 64 MB at 1M products)."
  echo
  echo "Serving RSS: ${RSS_NOW} MiB after $DUR of identity GETs ($(field rps "$(cat "$W/serve-identity.txt")") req/s) and resolve calls of 1000 ($(field rps "$(cat "$W/serve-resolve.txt")") calls/s) at 4 connections each, at once; peak ${RSS_PEAK} MiB (goal: RSS ≤ 512 MiB). Of the ${RSS_NOW} MiB: ${RSS_ANON} MiB the process's own memory (heap, block cache), ${RSS_FILE} MiB pages of the snapshot's mapped files (page cache, which the kernel may drop and read again), ${RSS_SHMEM} MiB shared memory (the pages touched of the search index's private copies, when they are in memory). Beside the resident set, the private copies held in memory (memfds) were ${MEMFD_MB} MiB: memory the server holds whether or not a page was touched, which the kernel cannot drop without swap (none with \`--search-copy-dir\`). The block cache was ${CACHE_USED} MiB (\`--cache-mb $CACHE_MB\`; 0 sizes it from the store: its size on disk, 256 MiB to 1 GiB)."
  echo
  echo "Identity GETs beside the bare baseline (\`scripts/bench/baseline\`: net/http and a map of the same paths to a fixed document), the same 100,000 random paths under \`wrk -t1 -c4\` for $GET_DUR each, pds's run right after its round's baseline run; pds warmed by the load above:"
  echo
  echo "| round | pds req/s | baseline req/s | ratio | pds p99 ms | baseline p99 ms |"
  echo "|---:|---:|---:|---:|---:|---:|"
  printf '%s\n' "${get_rows[@]}"
  echo
  echo "Identity GETs against the baseline: **${GET_RATIO}×**, the median of the rounds' ratios (goal ≥ 0.85× at 10M products)."
  echo
  echo "Where the time goes now while serving (CPU profile during that load, \`go tool pprof -top\` of $W/serve-cpu.pprof):"
  echo
  profile_note "$W/serve-cpu.pprof" 8
} > "$out"
section=$(scale_section bench-serve "$N")
[ -z "${SERVE_ARGS:-}" ] || section=$section-$(echo "$SERVE_ARGS" | tr -c 'a-z0-9' '-' | tr -s '-' | sed 's/^-//; s/-$//')
write_section "$section" "$out"
cat "$out"
