#!/usr/bin/env bash
# make bench-size: how many bytes a product a whole snapshot takes (every
# file: store, point index, search index, chunk list, manifest), for pds gen's data
# (seed 1) at each size of SIZES (default 200,000 and 1,000,000 products).
# Prints bytes a product per file, per folder and in all, and writes them to
# BENCHMARKS.md's bench-size section. The 1M build takes minutes.
source "$(dirname "$0")/bench-lib.sh"
cd "$(dirname "$0")/.."
need /usr/bin/time time

SIZES=${SIZES:-"200000 1000000"}
W=${BENCH_DIR:-var/bench}
mkdir -p "$W"
go build -o bin/pds ./cmd/pds

out=$(mktemp)
{
  echo "## Snapshot size (\`make bench-size\`)"
  echo
  echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') on $(machine); lscpu: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(lscpu | sed -n 's/^CPU(s): *//p' | head -1) CPUs. Command: \`make bench-size\` (scripts/bench-size.sh: \`pds gen --products N --seed 1\`, then \`pds ingest --sequence 1\`; sizes in bytes, KB = 1000 bytes)."
  for n in $SIZES; do
    in="$W/in-$n-seed1"
    if [ ! -f "$in/products.ndjson" ]; then
      rm -rf "$in"
      bin/pds gen --products "$n" --seed 1 --out "$in" --quiet
    fi
    snap="$W/size-$n"
    rm -rf "$snap"
    measure bin/pds ingest --in "$in" --out "$snap" --sequence 1 --quiet >/dev/null
    echo
    echo "### $n products: built in $WALL_S s, peak RSS $RSS_MB MiB"
    echo
    echo "| file or folder | bytes | bytes a product |"
    echo "|---|---:|---:|"
    find "$snap" -type f -printf '%s %P\n' | sort -k1,1nr -k2 | awk -v n="$n" '$1 > 0 { printf "| `%s` | %d | %.1f |\n", $2, $1, $1 / n }'
    for part in store points index chunks manifest.json; do
      bytes=$(find "$snap/$part" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
      awk -v p="$part" -v b="$bytes" -v n="$n" 'BEGIN { printf "| **%s** (all of it) | %d | %.1f |\n", p, b, b / n }'
    done
    total=$(find "$snap" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
    awk -v b="$total" -v n="$n" 'BEGIN { printf "| **the snapshot** | %d | **%.1f** (%.2f KB) |\n", b, b / n, b / n / 1000 }'
    rm -rf "$snap"
  done
} > "$out"
write_section bench-size "$out"
cat "$out"
rm -f "$out"
