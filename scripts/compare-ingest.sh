#!/usr/bin/env bash
# make compare-ingest A=REF B=REF: builds of the same generated input by two
# pds binaries, alternating A and B for PAIRS pairs, each under
# /usr/bin/time: wall time, CPU time, peak RSS and the summary's took: line,
# then the medians. A REF is an executable or a git revision (built into
# var/compare). Nothing is written to BENCHMARKS.md: this is for deciding
# whether a change goes further, whose figures are then written up by hand.
source "$(dirname "$0")/bench-lib.sh"
source "$(dirname "$0")/compare-lib.sh"
cd "$(dirname "$0")/.."
need /usr/bin/time time

: "${A:?name the first pds: A=FILE or A=REVISION (make compare-ingest A=main B=bin/pds)}"
B=${B:-bin/pds}
PAIRS=${PAIRS:-2}
N=${N:-200000}
W=${BENCH_DIR:-var/bench}
IN="$W/in-$N"

bin_a=$(compare_bin "$A")
bin_b=$(compare_bin "$B")
[ -f "$IN/products.ndjson" ] || "$bin_b" gen --products "$N" --seed 7 --out "$IN" --quiet

echo "compare-ingest: $N products, $PAIRS pairs; A=$A ($bin_a), B=$B ($bin_b); $(machine)"
results=$(mktemp)
trap 'rm -f "$results"; rm -rf "$W/compare-out"' EXIT
for i in $(seq 1 "$PAIRS"); do
  for side in A B; do
    if [ "$side" = A ]; then bin=$bin_a; else bin=$bin_b; fi
    rm -rf "$W/compare-out"
    measure "$bin" ingest --in "$IN" --out "$W/compare-out" > "$W/compare-ingest.txt" 2> "$W/compare-ingest.log" || {
      echo "compare-ingest: $side failed; its output is in $W/compare-ingest.log" >&2
      exit 1
    }
    took=$(grep -o 'took:.*' "$W/compare-ingest.txt" | head -1)
    echo "$side $WALL_S $CPU_S $RSS_MB" >> "$results"
    echo "pair $i $side: wall ${WALL_S} s, cpu ${CPU_S} s, peak RSS ${RSS_MB} MiB; $took"
  done
done
for side in A B; do
  echo "median $side: wall $(awk -v s=$side '$1 == s { print $2 }' "$results" | median) s," \
    "cpu $(awk -v s=$side '$1 == s { print $3 }' "$results" | median) s," \
    "peak RSS $(awk -v s=$side '$1 == s { print $4 }' "$results" | median) MiB"
done
