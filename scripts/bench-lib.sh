# Shared helpers of the bench scripts (sourced, not run).
set -euo pipefail

# need CMD PACKAGE: install a Debian package when CMD (a program on PATH, or
# a file's path) is missing. `type -P` finds programs only, never a function.
need() {
  local have=
  case $1 in
    */*) [ -e "$1" ] && have=1 ;;
    *) type -P "$1" >/dev/null && have=1 ;;
  esac
  if [ -z "$have" ]; then
    echo "bench: installing $2" >&2
    if [ "$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi
    $SUDO apt-get -o DPkg::Lock::Timeout=900 update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=900 install -y -qq "$2" >/dev/null
  fi
}

# machine: one line describing this machine.
machine() {
  local cpu
  cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
  echo "$(nproc) cores ($cpu), $(free -g | awk '/Mem:/{print $2}') GiB RAM, $(go version | cut -d' ' -f3), $(uname -sr)"
}

# write_section NAME FILE: replace the section between the NAME markers in
# BENCHMARKS.md with FILE's content (appending the markers when absent).
write_section() {
  local name=$1 file=$2 md=BENCHMARKS.md
  local start="<!-- $name:start -->" end="<!-- $name:end -->"
  if ! grep -qF "$start" "$md"; then
    printf '\n%s\n%s\n' "$start" "$end" >> "$md"
  fi
  awk -v s="$start" -v e="$end" -v f="$file" '
    $0 == s { print; while ((getline line < f) > 0) print line; skip = 1; next }
    $0 == e { skip = 0 }
    !skip { print }' "$md" > "$md.tmp" && mv "$md.tmp" "$md"
}

# wait_port HOST:PORT: wait until something listens there (30 s at most).
wait_port() {
  local hp=$1
  for _ in $(seq 1 300); do
    if (exec 3<>"/dev/tcp/${hp%:*}/${hp##*:}") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "bench: nothing listens on $hp" >&2
  return 1
}

# wrk_run LABEL CONNS DURATION [wrk args…]: run wrk with scripts/bench/wrk-paths.lua
# and print "LABEL rps=… p50_us=… p99_us=…".
wrk_run() {
  local label=$1 conns=$2 dur=$3; shift 3
  local out
  out=$(wrk -t1 -c"$conns" -d"$dur" --latency -s scripts/bench/wrk-paths.lua "$@" | grep '^RESULT')
  echo "$label ${out#RESULT }"
}

# field NAME LINE: the value of NAME=… in LINE.
field() { sed -n "s/.*[ ]$1=\([^ ]*\).*/\1/p" <<<" $2"; }

# peak RSS in MiB, wall seconds and CPU seconds (user and system) of a
# command: sets RSS_MB, WALL_S and CPU_S, and returns the command's status.
measure() {
  local tf user sys rc=0
  tf=$(mktemp)
  /usr/bin/time -f '%e %M %U %S' -o "$tf" "$@" || rc=$?
  # /usr/bin/time writes "Command exited with non-zero status N" first then.
  read -r WALL_S rss_kb user sys < <(tail -n 1 "$tf")
  RSS_MB=$((rss_kb / 1024))
  CPU_S=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.1f", u + s }')
  rm -f "$tf"
  return "$rc"
}

# pg_start DIR PORT: install PostgreSQL 15 (with pg_trgm, in contrib) when
# missing, create a throwaway cluster in DIR listening on 127.0.0.1:PORT,
# and start it. Sets PGBIN and PSQL. pg_stop DIR stops it.
pg_start() {
  local dir=$1 port=$2
  if ! ls /usr/lib/postgresql/15/bin/postgres >/dev/null 2>&1; then
    need /usr/lib/postgresql/15/bin/postgres postgresql-15
    need /usr/share/postgresql/15/extension/pg_trgm.control postgresql-contrib-15
  fi
  [ -f /usr/share/postgresql/15/extension/pg_trgm.control ] || need /usr/share/postgresql/15/extension/pg_trgm.control postgresql-contrib-15
  PGBIN=/usr/lib/postgresql/15/bin
  local as=()
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || useradd -r -M postgres
    as=(runuser -u postgres --)
  fi
  rm -rf "$dir"
  mkdir -p "$dir"
  [ "$(id -u)" = 0 ] && chown postgres "$dir"
  "${as[@]}" "$PGBIN/initdb" -D "$dir/data" -A trust -U postgres >/dev/null
  "${as[@]}" "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/log" -w start \
    -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories='$dir' -c shared_buffers=1GB -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=50" >/dev/null
  PSQL=(psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres)
  PG_AS=("${as[@]}")
}

pg_stop() {
  # Nothing to stop when PostgreSQL never started (the EXIT trap runs early on errors).
  [ -n "${PGBIN:-}" ] || return 0
  "${PG_AS[@]}" "$PGBIN/pg_ctl" -D "$1/data" -m fast stop >/dev/null 2>&1 || true
}

# percentiles FILE: p50 and p99 (in the file's unit) of one number a line.
percentiles() {
  sort -n "$1" | awk '{a[NR]=$1} END {p50=a[int(NR*0.50)>0?int(NR*0.50):1]; p99=a[int(NR*0.99)>0?int(NR*0.99):1]; print p50, p99}'
}

# start_pds NAME SNAP PORT SCOPES: make a key with SCOPES (comma-separated)
# in $W/keys-NAME.json and export it as KEY, start pds serving SNAP (with
# --cache-mb $CACHE_MB, 0 by default: sized from the store) on
# 127.0.0.1:PORT in the background (log: $W/serve-NAME.log), with its admin
# listener (metrics and pprof) on 127.0.0.1:PORT+1 (ADMIN), and any
# $SERVE_FLAGS (such as --no-point-index), and wait until it listens and
# its search index is open (checked and opened in the background after the
# start: at 10M products that is seconds of disk and CPU, which a
# measurement must not share). Sets PDS_PID; stop_pds stops it, and the
# caller's EXIT trap should too (kill "$PDS_PID").
PDS_PID=
start_pds() {
  local name=$1 snap=$2 port=$3 scopes=$4
  rm -f "$W/keys-$name.json"
  KEY=$(bin/pds keys add --keys "$W/keys-$name.json" --tenant bench --scopes "$scopes" 2>/dev/null)
  export KEY
  ADMIN=127.0.0.1:$((port + 1))
  bin/pds serve --snapshot "$snap" --keys "$W/keys-$name.json" --addr "127.0.0.1:$port" --admin-addr "$ADMIN" \
    --cache-mb "${CACHE_MB:-0}" ${SERVE_FLAGS:-} > "$W/serve-$name.log" 2>&1 &
  PDS_PID=$!
  PDS_LOG="$W/serve-$name.log"
  wait_port "127.0.0.1:$port"
  local i
  for i in $(seq 1 3000); do
    grep -q '"msg":"search index ready"' "$PDS_LOG" && return 0
    if grep -q '"msg":"search index not opened' "$PDS_LOG" || ! kill -0 "$PDS_PID" 2>/dev/null; then
      echo "bench: pds serve's search index did not open: $(tail -n 2 "$PDS_LOG")" >&2
      exit 1
    fi
    sleep 0.1
  done
  echo "bench: pds serve's search index not open after 300 s" >&2
  exit 1
}

# serving_field LOG NAME: the number NAME of the "serving" line the server
# writes to LOG once it has opened its snapshot (cache_mb, verify_ms,
# open_ms). The server buffers its log and writes it out every 100 ms, so
# /readyz can answer before the line is in the file: wait for it (5 s at most).
serving_field() {
  for _ in $(seq 1 500); do
    grep -q '"msg":"serving"' "$1" && break
    sleep 0.01
  done
  sed -n "/\"msg\":\"serving\"/s/.*\"$2\":\([0-9]*\).*/\1/p" "$1" | head -1
}

# served_cache_mb: the block cache size (MiB) the server started by
# start_pds logged in its "serving" line.
served_cache_mb() { serving_field "$PDS_LOG" cache_mb; }

# profile_pds SECONDS FILE: in the background, take a CPU profile of the
# running pds (start_pds) for SECONDS into FILE; sets PROF_PID (wait for it).
# Start it just after the load starts, and make SECONDS shorter than the load.
profile_pds() {
  curl -sf -o "$2" "http://$ADMIN/debug/pprof/profile?seconds=$1" &
  PROF_PID=$!
}

# profile_note FILE [N]: a CPU profile's top N (default 8) functions as two
# markdown lines for a "where the time goes now" note: by cumulative share
# (a call chain whose frames share one figure is shown once, by its outermost
# frame; the scheduler's and net/http's frames above everything are left out)
# and by own share (`go tool pprof -top`).
profile_note() {
  local file=$1 n=${2:-8}
  if [ ! -s "$file" ]; then
    echo "- (no profile was captured: $file is missing)"
    return
  fi
  local pick='
      /^ *flat *flat%/ { table = 1; next }
      !table { next }
      { fn = $6; for (i = 7; i <= NF; i++) fn = fn " " $i
        sub(/\[go\.shape.*\]/, "[...]", fn); sub(/^github\.com\/productdata\/pds\//, "", fn)
        sub(/^github\.com\/cockroachdb\//, "", fn); if (length(fn) > 90) fn = substr(fn, 1, 87) "..." }'
  printf -- '- by cumulative share: '
  go tool pprof -top -cum -nodecount=80 "$file" 2>/dev/null | awk -v n="$n" "$pick"'
      fn ~ /^runtime\.(goexit|main|mcall|park_m|schedule|findRunnable|systemstack|gcBgMarkWorker)$/ { next }
      fn ~ /^(net\/http\.\(\*conn\)\.serve|net\/http\.serverHandler\.ServeHTTP)$/ { next }
      $5 == last { next }
      { last = $5; printf "%s`%s` %s", (k ? ", " : ""), fn, $5; if (++k >= n) exit }
      END { print "" }'
  printf -- '- by own share: '
  go tool pprof -top -nodecount=30 "$file" 2>/dev/null | awk -v n="$n" "$pick"'
      { printf "%s`%s` %s", (k ? ", " : ""), fn, $2; if (++k >= n) exit }
      END { print "" }'
}

# stop_pds: stop the server start_pds started, wait for it to exit, and
# trim its log (trim_access_log).
stop_pds() {
  if [ -n "$PDS_PID" ]; then
    kill "$PDS_PID" 2>/dev/null || true
    wait "$PDS_PID" 2>/dev/null || true
    PDS_PID=
    trim_access_log "$PDS_LOG"
  fi
}

# trim_access_log FILE: drop the access log's lines from the log of a server
# that has stopped, keeping every other line (the serving line, warnings,
# errors) and one line saying how many were dropped. A benchmark's server
# writes a line a request: hundreds of MB a run, GBs a bench, which nothing
# reads afterwards.
trim_access_log() {
  local f=$1
  [ -f "$f" ] || return 0
  local n
  n=$(grep -c '"msg":"request"' "$f" || true)
  [ "${n:-0}" -gt 0 ] || return 0
  { grep -v '"msg":"request"' "$f" || true; echo "bench: $n access log lines (one a request) were dropped from this log"; } > "$f.trim"
  mv "$f.trim" "$f"
}

# need_disk DIR BYTES WHAT: stop the script (exit 1) when the file system
# that holds DIR (or its nearest existing parent) has fewer than BYTES free,
# saying what needs them, how much that is and how much is free.
# SKIP_DISK_CHECK=1 skips the check, for an estimate known to be too high.
need_disk() {
  local dir=$1 need=$2 what=$3 avail
  [ "${SKIP_DISK_CHECK:-0}" = 1 ] && return 0
  dir=$(realpath -m "$dir")
  while [ ! -e "$dir" ]; do dir=$(dirname "$dir"); done
  avail=$(df -B1 --output=avail "$dir" | tail -n 1 | tr -d ' ')
  if [ "$avail" -lt "$need" ]; then
    echo "bench: $what needs about $(gib "$need") GiB free on the file system of $dir; $(gib "$avail") GiB are free (SKIP_DISK_CHECK=1 runs anyway)" >&2
    exit 1
  fi
}

# gib BYTES: BYTES in GiB, one decimal.
gib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1073741824 }'; }

# Bytes a generated product takes on disk, for need_disk's estimates. Input
# (pds gen --seed 7, every file): 7.16 KB plain, 0.72 KB zstd and 0.90 KB
# gzip at 200,000 products (measured 2026-11-29; docs/gen.md); 6.7 KB plain
# at 1M (docs/gen.md), so the figures at 200k are the higher ones. A
# finished snapshot: 1.28 KB (BENCHMARKS.md, make bench-size at 1M). A
# build's folder at its peak, scratch and snapshot together (du -sb every
# 0.2 s, 2026-11-29, 2 cores, load average 2 to 4): 3.5 KB at 200,000
# products and at 1,000,000, the scratch store's part 2.1 KB (its runs
# MinLZ-compressed, its lookup store Snappy); 4 KB is taken.
BYTES_INPUT_NONE=7200
BYTES_INPUT_ZSTD=750
BYTES_INPUT_GZIP=900
BYTES_SNAPSHOT=1300
BYTES_BUILD_PEAK=4000

# gen_compress N: the --compress of pds gen for N products: $GEN_COMPRESS
# when set, else zstd from 1,000,000 products (67 GB of plain NDJSON at 10M
# would not fit beside a build) and none below (plain files the other
# scripts can grep).
gen_compress() {
  if [ -n "${GEN_COMPRESS:-}" ]; then
    echo "$GEN_COMPRESS"
  elif [ "$1" -ge 1000000 ]; then
    echo zstd
  else
    echo none
  fi
}

# input_bytes N COMPRESS: the estimated size of N generated products' input.
input_bytes() {
  local per=$BYTES_INPUT_NONE
  case $2 in
    zstd) per=$BYTES_INPUT_ZSTD ;;
    gzip) per=$BYTES_INPUT_GZIP ;;
  esac
  echo $(($1 * per))
}

# have_input DIR: whether DIR holds an input directory's products file,
# plain or compressed.
have_input() { compgen -G "$1/products.ndjson*" >/dev/null; }

# input_file DIR NAME: the path of input file NAME (products.ndjson) in DIR,
# plain, .zst or .gz, whichever is there; empty when none is.
input_file() {
  local f
  for f in "$1/$2" "$1/$2.zst" "$1/$2.gz"; do
    if [ -f "$f" ]; then echo "$f"; return 0; fi
  done
  return 0
}

# input_cat FILE: FILE's NDJSON, decompressed by its extension.
input_cat() {
  case $1 in
    *.zst) zstd -dcq "$1" ;;
    *.gz) gzip -dc "$1" ;;
    *) cat "$1" ;;
  esac
}

# ensure_snapshot DIR N: make sure DIR/snap-N exists, generating DIR/in-N
# (pds gen, seed 7) and ingesting it when missing. Sets IN and SNAP.
# pds_format: the snapshot format bin/pds writes (the second line of pds
# version); the script stops when it names none.
pds_format() {
  local format
  format=$(bin/pds version | sed -n 's/^snapshot format \([0-9]*\).*/\1/p')
  [ -n "$format" ] || { echo "bench: bin/pds version names no snapshot format" >&2; exit 1; }
  echo "$format"
}

ensure_snapshot() {
  IN="$1/in-$2" SNAP="$1/snap-$2"
  local format
  format=$(pds_format) || exit 1
  if [ "${KEEP_FORMAT:-}" = 1 ]; then
    # Measure a snapshot of an earlier format as it is (pds serves every
    # format it reads), where building one again does not fit: the 10M
    # build needs about 50 GB of disk. The sections name its format.
    [ -f "$SNAP/manifest.json" ] || [ ! -f "$SNAP-kept/manifest.json" ] || SNAP=$SNAP-kept
    [ -f "$SNAP/manifest.json" ] && return 0
  fi
  if [ -f "$SNAP/manifest.json" ] && ! grep -Eq "\"format_version\": *$format[,}]" "$SNAP/manifest.json"; then
    # Built by an older pds: benchmarks measure what this one writes.
    echo "bench: $SNAP is not of snapshot format $format; building it again" >&2
    rm -rf "$SNAP"
  fi
  if [ -f "$SNAP/manifest.json" ] && ! grep -q '"path": "points/identity"' "$SNAP/manifest.json"; then
    # Built before ingest wrote the point index (same format; served
    # without it): benchmarks measure what this pds writes.
    echo "bench: $SNAP has no point index; building it again" >&2
    rm -rf "$SNAP"
  fi
  # A build that kept its records (bench-delta's, bench-scale's) serves the
  # same answers: the reading benchmarks take it rather than build again.
  if [ ! -f "$SNAP/manifest.json" ] && grep -Eq "\"format_version\": *$format[,}]" "$SNAP-kept/manifest.json" 2>/dev/null; then
    SNAP=$SNAP-kept
  fi
  if [ ! -f "$SNAP/manifest.json" ]; then
    have_input "$IN" || bin/pds gen --products "$2" --seed 7 --out "$IN" --compress "$(gen_compress "$2")"
    rm -rf "$SNAP"
    bin/pds ingest --in "$IN" --out "$SNAP" --quiet
  fi
}

# snap_format DIR: the snapshot format of the snapshot in DIR.
snap_format() { sed -n 's/.*"format_version": *\([0-9]*\).*/\1/p' "$1/manifest.json" | head -1; }

# scale_section NAME N: the BENCHMARKS.md section NAME of a run at N
# products: NAME itself at 1M (the size most figures are measured at),
# NAME-N at any other size, so that a run at 10M sits beside the 1M one.
scale_section() {
  if [ "$2" = 1000000 ]; then echo "$1"; else echo "$1-$2"; fi
}

# drop_caches: empty the kernel's page cache, so that the next start reads
# from disk. It needs root; without it cold runs cannot be measured, and
# the script stops saying so.
drop_caches() {
  sync
  echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || { echo "bench: cannot drop the page cache (needs root: echo 3 > /proc/sys/vm/drop_caches)" >&2; exit 1; }
}
