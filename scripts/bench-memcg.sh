#!/usr/bin/env bash
# make bench-memcg: pds serve on the N_BIG-product snapshot inside a memory
# cgroup of MEM_MB (1024 by default), so that the snapshot is larger than
# the memory it may use (page cache included: the kernel charges a file's
# pages to the cgroup that reads them). For each of identity GETs and
# resolve calls of 1000 random existing identifiers: the page cache
# dropped, the server started in the cgroup, then wrk for DUR. It reports
# identifiers/s, p50 and p99, the disk reads a lookup costs (the device's
# reads completed, /proc/diskstats, over the lookups answered), and the
# cgroup's peak memory. Each kind runs twice: with the search index's
# private copies in memory (the default) and in a folder on the snapshot's
# disk (--search-copy-dir), where the kernel can drop their pages. Needs
# root (the cgroup and dropping the cache); it stops and says so otherwise.
# Cgroup v1's memory controller when mounted, else v2's.
source "$(dirname "$0")/bench-lib.sh"
cd "$(dirname "$0")/.."
need wrk wrk
N=${N_BIG:-1000000}
MEM_MB=${MEM_MB:-1024}
DUR=${DUR:-20s}
CONNS=${CONNS:-8}
W=${BENCH_DIR:-var/bench}
PORT_PDS=${PORT_PDS:-18085}
mkdir -p "$W"
go build -o bin/pds ./cmd/pds
go build -o bin/exportidentity ./scripts/bench/exportidentity
ensure_snapshot "$W" "$N"
snap=$SNAP
[ "$(id -u)" = 0 ] || { echo "bench-memcg: needs root (a memory cgroup and dropping the page cache)" >&2; exit 1; }

# The cgroup.
CG=
if [ -d /sys/fs/cgroup/memory ] && [ -w /sys/fs/cgroup/memory ]; then
  CG=/sys/fs/cgroup/memory/pds-bench
  mkdir -p "$CG"
  echo $((MEM_MB << 20)) > "$CG/memory.limit_in_bytes"
  cg_peak() { echo $(( $(cat "$CG/memory.max_usage_in_bytes") >> 20 )); }
  cg_reset() { echo 0 > "$CG/memory.max_usage_in_bytes"; }
  cg_ooms() { awk '$1 == "oom_kill" { print $2 }' "$CG/memory.oom_control"; }
elif grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
  CG=/sys/fs/cgroup/pds-bench
  echo +memory > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || true
  mkdir -p "$CG"
  echo $((MEM_MB << 20)) > "$CG/memory.max"
  cg_peak() { if [ -f "$CG/memory.peak" ]; then echo $(( $(cat "$CG/memory.peak") >> 20 )); else echo "?"; fi; }
  cg_reset() { :; }
  cg_ooms() { awk '$1 == "oom_kill" { print $2 }' "$CG/memory.events"; }
else
  echo "bench-memcg: no writable memory cgroup controller (v1 /sys/fs/cgroup/memory or v2 with memory in cgroup.controllers)" >&2
  exit 1
fi
trap 'stop_pds; rmdir "$CG" 2>/dev/null || true' EXIT

# The device the snapshot is on, for its read counter.
DEV=$(basename "$(df --output=source "$snap" | tail -n 1)")
grep -q " $DEV " /proc/diskstats || { echo "bench-memcg: $DEV (the snapshot's device) is not in /proc/diskstats" >&2; exit 1; }
disk_reads() { awk -v d="$DEV" '$3 == d { print $4, $6 * 512 }' /proc/diskstats; }

# Random existing identifiers: the identity GETs' paths and the resolve
# calls' bodies (1000 each).
SUBJ="$W/memcg-subjects-$N.txt"
if [ ! -s "$SUBJ" ]; then
  bin/exportidentity --snapshot "$snap" | cut -f1 | shuf -n 200000 --random-source=<(yes 11) > "$SUBJ"
fi
sed 's|^|/v1/products/|' "$SUBJ" > "$W/memcg-paths-identity.txt"
echo /v1/products/resolve > "$W/memcg-paths-resolve.txt"
rm -f "$W/memcg-bodies.txt"
for i in $(seq 1 50); do
  shuf -n 1000 --random-source=<(yes "m$i") "$SUBJ" | sed 's/.*/"&"/' | paste -sd, - | sed 's/^/{"identifiers":[/; s/$/]}/' >> "$W/memcg-bodies.txt"
done

# The folder for the search index's copies, on the snapshot's disk.
COPIES="$W/memcg-search-copies"
mkdir -p "$COPIES"

# start_in_cgroup [FLAG...]: drop the page cache, then start pds serve
# inside the cgroup, with FLAGs, and wait for /readyz. Sets PDS_PID and KEY.
start_in_cgroup() {
  rm -f "$W/keys-memcg.json"
  KEY=$(bin/pds keys add --keys "$W/keys-memcg.json" --tenant bench --scopes products:read,products:resolve 2>/dev/null)
  export KEY
  drop_caches
  cg_reset
  bash -c "echo \$\$ > $CG/cgroup.procs && exec bin/pds serve --snapshot $snap --keys $W/keys-memcg.json --addr 127.0.0.1:$PORT_PDS $*" > "$W/serve-memcg.log" 2>&1 &
  PDS_PID=$!
  PDS_LOG="$W/serve-memcg.log"
  for _ in $(seq 1 600); do
    curl -fs "http://127.0.0.1:$PORT_PDS/readyz" >/dev/null 2>&1 && return 0
    kill -0 "$PDS_PID" 2>/dev/null || { echo "bench-memcg: pds serve stopped: $(tail -n 3 "$W/serve-memcg.log")" >&2; exit 1; }
    sleep 0.1
  done
  echo "bench-memcg: pds serve not ready after 60 s" >&2
  exit 1
}

# run KIND COPIES PER_REQUEST [wrk env]: one cold run with the search
# index's copies in COPIES (memory, or a folder); prints its row.
run() {
  local kind=$1 copies=$2 per=$3; shift 3
  if [ "$copies" = memory ]; then start_in_cgroup; else start_in_cgroup --search-copy-dir "$copies"; fi
  local r0 b0 r1 b1 out rps
  read -r r0 b0 < <(disk_reads)
  out=$(export "$@"; wrk_run "$kind" "$CONNS" "$DUR" "http://127.0.0.1:$PORT_PDS")
  read -r r1 b1 < <(disk_reads)
  rps=$(field rps "$out")
  local rss secs lookups
  if ! kill -0 "$PDS_PID" 2>/dev/null; then
    # Killed inside the cgroup: say so, with the kernel's count of the
    # cgroup's OOM kills, rather than report the rate of a dead server.
    echo "$kind,$copies died oom_kills=$(cg_ooms) cgroup_peak_mib=$(cg_peak) log=$(tail -n 1 "$W/serve-memcg.log" | tr ' ' _)"
    PDS_PID=
    return
  fi
  rss=$(( $(awk '/VmHWM/{print $2}' /proc/$PDS_PID/status) / 1024 ))
  secs=${DUR%s}
  lookups=$(awk -v r="$rps" -v s="$secs" -v p="$per" 'BEGIN { printf "%.0f", r * s * p }')
  local errors
  errors=$(grep -c '"status":5' "$W/serve-memcg.log" || true)
  # A server short of memory may not finish draining: 30 s, then SIGKILL,
  # and the row says so.
  local killed=no
  kill "$PDS_PID" 2>/dev/null || true
  for _ in $(seq 1 300); do kill -0 "$PDS_PID" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$PDS_PID" 2>/dev/null; then
    kill -9 "$PDS_PID" 2>/dev/null || true
    killed=yes
  fi
  stop_pds
  echo "$kind,$copies ids_per_s=$(awk -v r="$rps" -v p="$per" 'BEGIN{printf "%.0f", r*p}') p50_us=$(field p50_us "$out") p99_us=$(field p99_us "$out") reads_per_lookup=$(awk -v a="$r0" -v b="$r1" -v n="$lookups" 'BEGIN{printf "%.2f", (b-a)/n}') bytes_read_per_lookup=$(awk -v a="$b0" -v b="$b1" -v n="$lookups" 'BEGIN{printf "%.0f", (b-a)/n}') cgroup_peak_mib=$(cg_peak) rss_peak_mib=$rss errors_5xx=$errors sigkill_at_stop=$killed"
}

SIZE_MB=$(( $(du -sbL "$snap" | cut -f1) / 1048576 ))
ROWS=()
for copies in memory "$COPIES"; do
  ROWS+=("$(run identity "$copies" 1 PATHS="$W/memcg-paths-identity.txt")")
  echo "${ROWS[-1]}"
  ROWS+=("$(run resolve "$copies" 1000 PATHS="$W/memcg-paths-resolve.txt" BODIES="$W/memcg-bodies.txt")")
  echo "${ROWS[-1]}"
done

out=$(mktemp)
{
  echo "## Serving a snapshot larger than memory (\`make bench-memcg\`)"
  echo
  echo "Measured $(date -u +%Y-%m-%d) on $(machine). Command: \`N_BIG=$N MEM_MB=$MEM_MB make bench-memcg\` (scripts/bench-memcg.sh): the $N-product snapshot ($SIZE_MB MiB) served by \`pds serve\` inside a memory cgroup of $MEM_MB MiB (page cache included), the page cache dropped before each run; wrk -c$CONNS for $DUR on random existing identifiers (200,000 distinct)."
  echo
  echo "The search index's private copies are in memory (the default) or in a folder on the snapshot's disk (\`--search-copy-dir\`), whose pages the kernel may drop."
  echo
  echo "| run | search copies | identifiers/s | p50 ms | p99 ms | disk reads a lookup | bytes read a lookup | cgroup peak MiB | server RSS MiB | 5xx | stopped by SIGTERM within 30 s |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"
  for line in "${ROWS[@]}"; do
    name=${line%% *}
    kind=${name%%,*}
    place=$([ "${name#*,}" = memory ] && echo "in memory" || echo "on disk")
    if [[ $line == *" died "* ]]; then
      echo "| $kind | $place | the server was killed in the cgroup ($(field oom_kills "$line") OOM kills; cgroup peak $(field cgroup_peak_mib "$line") MiB) | | | | | | | | |"
      continue
    fi
    echo "| $kind | $place | $(field ids_per_s "$line") | $(awk -v u="$(field p50_us "$line")" 'BEGIN{printf "%.2f", u/1000}') | $(awk -v u="$(field p99_us "$line")" 'BEGIN{printf "%.2f", u/1000}') | $(field reads_per_lookup "$line") | $(field bytes_read_per_lookup "$line") | $(field cgroup_peak_mib "$line") | $(field rss_peak_mib "$line") | $(field errors_5xx "$line") | $([ "$(field sigkill_at_stop "$line")" = yes ] && echo "no: killed" || echo yes) |"
  done
  echo
  echo "Machine load average when the run ended: $(cut -d' ' -f1-3 /proc/loadavg)."
} > "$out"
write_section "$(scale_section bench-memcg "$N")" "$out"
rm -f "$out"
