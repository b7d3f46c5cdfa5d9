#!/usr/bin/env bash
# make bench-export: pds export of the N_BIG-product snapshot (pds gen --seed 7,
# the one bench-http, bench-serve and bench-resolve use; built when missing):
# wall time, CPU time, peak RSS, and the Parquet file's size against the
# snapshot's. Goals: 1M products in 60 s or less, the file no larger than the
# snapshot. Writes BENCHMARKS.md's bench-export section.
source "$(dirname "$0")/bench-lib.sh"
cd "$(dirname "$0")/.."
need /usr/bin/time time
N=${N_BIG:-1000000}
RUNS=${RUNS:-2}
W=${BENCH_DIR:-var/bench}
mkdir -p "$W"
go build -o bin/pds ./cmd/pds
ensure_snapshot "$W" "$N"
snap=$SNAP
file="$W/export-$N.parquet"
snap_bytes=$(find -L "$snap" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')

rows=()
best=
for run in $(seq 1 "$RUNS"); do
  rm -f "$file"
  load_before=$(cut -d' ' -f1 /proc/loadavg)
  measure bin/pds export --snapshot "$snap" --out "$file" --quiet > "$W/export.out"
  load_after=$(cut -d' ' -f1 /proc/loadavg)
  file_bytes=$(stat -c %s "$file")
  echo "bench-export: run $run: $WALL_S s, CPU $CPU_S s, peak RSS $RSS_MB MiB, $file_bytes bytes; load average $load_before before, $load_after after" >&2
  rows+=("| $run | $WALL_S | $CPU_S | $RSS_MB | $file_bytes | $load_before / $load_after |")
  if [ -z "$best" ] || awk -v a="$WALL_S" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$WALL_S; fi
done
products=$(sed -n 's/^exported \([0-9]*\) products.*/\1/p' "$W/export.out")

out=$(mktemp)
{
  echo "## Parquet export (\`make bench-export\`)"
  echo
  echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') on $(machine); the load average (1 minute, the export's own included) is beside each run. Command: \`make bench-export\` (scripts/bench-export.sh: \`pds export --snapshot $snap --out $file --quiet\` under \`/usr/bin/time\`, $RUNS runs; the snapshot from \`pds gen --products $N --seed 7\`)."
  echo
  echo "| run | wall s | CPU s | peak RSS MiB | file bytes | load average before / after |"
  echo "|---:|---:|---:|---:|---:|---|"
  printf '%s\n' "${rows[@]}"
  echo
  awk -v p="$products" -v t="$best" -v f="$file_bytes" -v s="$snap_bytes" 'BEGIN {
    printf "%d products exported; fastest run %.1f s (%.0f products/s; goal: 1M in 60 s or less). ", p, t, p / t
    printf "The file is %d bytes, %.0f bytes a product: %.2f of the snapshot'"'"'s %d bytes (goal: at most 1).\n", f, f / p, f / s, s
  }'
} > "$out"
write_section bench-export "$out"
cat "$out"
rm -f "$out"
