#!/usr/bin/env bash
# make bench-off: import + ingest of a synthetic Open Food Facts-shaped dump
# (pds gen --format off, seed 7) at each size in SIZES: wall time, records/s
# and peak RSS of each step (/usr/bin/time), and the projection for the full
# dump of about 3M products. Each size's figures are kept in
# $BENCH_DIR/result-N.txt and the table in BENCHMARKS.md is rewritten from all
# of them as soon as a size finishes.
source "$(dirname "$0")/bench-lib.sh"
cd "$(dirname "$0")/.."
need /usr/bin/time time

SIZES=${SIZES:-100000 1000000}
W=${BENCH_DIR:-var/bench-off}
mkdir -p "$W"
go build -o "$W/pds" ./cmd/pds # its own copy: rebuilding bin/pds meanwhile does not change the run
PDS="$W/pds"

rate() { awk -v n="$1" -v t="$2" 'BEGIN { printf "%.0f", n / t }'; }

table() {
  local out big="" f
  out=$(mktemp)
  {
    echo "### Open Food Facts import + ingest (\`make bench-off\`)"
    echo
    echo "Command: \`make bench-off\` (\`scripts/bench-off.sh\`): \`pds gen --format off --seed 7\` writes the dump, then"
    echo "\`pds import off\` and \`pds ingest\` of its output run one after the other, each under \`/usr/bin/time\`."
    echo "Each row's load average was read when its ingest ended: a run beside other work takes longer, but its"
    echo "peak RSS is the same."
    echo
    echo "| date | machine | records in dump | products imported | claims | dump (gzip) | input dir (with documents/) | snapshot | import | import records/s | import peak RSS | ingest | ingest products/s | ingest peak RSS | import + ingest records/s | load average |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    for f in $(ls "$W"/result-*.txt 2>/dev/null | sort -t- -k2 -n); do
      # shellcheck disable=SC1090
      LOAD=""
      source "$f"
      total=$(awk -v a="$IMP_T" -v b="$ING_T" 'BEGIN { print a + b }')
      echo "| $DATE | $MACHINE | $N | $PRODUCTS | $CLAIMS | $DUMP_MB MiB | $IN_MB MiB | $SNAP_MB MiB | $IMP_T s | $(rate "$N" "$IMP_T") | $IMP_RSS MiB | $ING_T s | $(rate "$PRODUCTS" "$ING_T") | $ING_RSS MiB | $(rate "$N" "$total") | ${LOAD:-not recorded} |"
      big=$f
    done
    if [ -n "$big" ]; then
      source "$big"
      total=$(awk -v a="$IMP_T" -v b="$ING_T" 'BEGIN { print a + b }')
      echo
      echo "Projection for the full dump (about 3,000,000 products), from the $N-record run: both steps stream, so"
      echo "time grows with the record count: $(awk -v n="$N" 'BEGIN { printf "%g", 3000000 / n }') × $total s ≈ $(awk -v t="$total" -v n="$N" 'BEGIN { printf "%.1f", 3000000 / n * t / 3600 }') hours on this machine,"
      echo "and peak RSS stays at the figures above (fixed caches of the Pebble scratch stores, not the input)."
      echo "Real OFF records are larger than the synthetic ones (tens of KB with every field, against about 1 KB), which"
      echo "adds JSON decoding to the import and disk to documents/, and carry more nutrients, so more claims to ingest."
    fi
  } > "$out"
  write_section bench-off "$out"
  rm -f "$out"
}

for n in $SIZES; do
  dump="$W/off-$n.jsonl.gz" in="$W/in-$n" snap="$W/snap-$n"
  rm -rf "$in" "$snap"
  [ -f "$dump" ] || "$PDS" gen --format off --products "$n" --seed 7 --out "$dump" --quiet
  # stderr: progress lines and the file:line reports of unusable records.
  measure "$PDS" import off --in "$dump" --out "$in" --retrieved-at 2026-11-23T00:00:00Z > "$W/import-$n.txt" 2> "$W/import-$n.log"
  IMP_T=$WALL_S IMP_RSS=$RSS_MB
  PRODUCTS=$(sed -n 's/.* \([0-9]*\) products .*/\1/p' "$W/import-$n.txt")
  CLAIMS=$(sed -n 's/.* \([0-9]*\) claims, .*/\1/p' "$W/import-$n.txt")
  echo "off $n: import ${IMP_T}s ${IMP_RSS} MiB"
  measure "$PDS" ingest --in "$in" --out "$snap" > "$W/ingest-$n.txt" 2> "$W/ingest-$n.log"
  ING_T=$WALL_S ING_RSS=$RSS_MB
  cat > "$W/result-$n.txt" <<EOT
N=$n
DATE=$(date -u +%Y-%m-%d)
MACHINE="$(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB"
PRODUCTS=$PRODUCTS
CLAIMS=$CLAIMS
IMP_T=$IMP_T
IMP_RSS=$IMP_RSS
ING_T=$ING_T
ING_RSS=$ING_RSS
DUMP_MB=$(du -sm "$dump" | cut -f1)
IN_MB=$(du -sm "$in" | cut -f1)
SNAP_MB=$(du -sm "$snap" | cut -f1)
LOAD="$(cut -d' ' -f1-3 /proc/loadavg)"
EOT
  echo "off $n: ingest ${ING_T}s ${ING_RSS} MiB"
  rm -rf "$snap" "$in" # keep the disk free for the next size
  table
done
echo "bench-off: BENCHMARKS.md updated ($(machine))"
