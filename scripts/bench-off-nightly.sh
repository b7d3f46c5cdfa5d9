#!/usr/bin/env bash
# make bench-off-nightly: the Open Food Facts nightly job of
# docs/import-off.md, end to end, at N_OFF records (default 1,000,000): the
# base (pds import off of a synthetic dump, seed 7, then a full build that
# keeps its records), then one night: a daily delta file of 1% of the
# products (scripts/bench/offdelta), pds import off of it into a change set, the
# incremental build, sign, publish with a delta, and a replica's pull by
# delta. Each step under /usr/bin/time; writes to BENCHMARKS.md.
source "$(dirname "$0")/bench-lib.sh"
cd "$(dirname "$0")/.."
need /usr/bin/time time
N=${N_OFF:-1000000}
W=${BENCH_DIR:-var/bench-off}
mkdir -p "$W"
go build -o "$W/pds" ./cmd/pds # its own copy: rebuilding bin/pds meanwhile does not change the run
go build -o "$W/offdelta" ./scripts/bench/offdelta
PDS="$W/pds"
dump="$W/off-$N.jsonl.gz"
[ -f "$dump" ] || "$PDS" gen --format off --products "$N" --seed 7 --out "$dump" --quiet
J=$W/nightly-$N
rm -rf "$J"
mkdir -p "$J/builds"
J=$(realpath "$J")
rows=$(mktemp)
step() { # step NAME CMD...: run CMD under time, add a row
  local name=$1
  shift
  measure "$@" > "$J/step.out" 2> "$J/step.err" || { cat "$J/step.err" >&2; exit 1; }
  printf '| %s | `%s` | %s s | %s MiB |\n' "$name" "$(sed "s|^$PDS |pds |; s|$J/||g; s|$PWD/||g" <<<"$*")" "$WALL_S" "$RSS_MB" >> "$rows"
  echo "bench-off-nightly: $name: ${WALL_S}s, ${RSS_MB} MiB" >&2
}
"$PDS" snapshot keygen --pub "$J/pds.pub" --key "$J/pds.key" >/dev/null
step "base: import the dump" "$PDS" import off --in "$dump" --out "$J/in" --retrieved-at 2026-11-27T00:00:00Z --no-documents --quiet
step "base: full build, records kept" "$PDS" ingest --in "$J/in" --out "$J/builds/base" --keep-records --quiet
rm -rf "$J/in"
"$PDS" snapshot sign --key "$J/pds.key" "$J/builds/base" >/dev/null
"$PDS" snapshot publish "$J/builds/base" "file://$J/origin" >/dev/null 2>&1
"$PDS" snapshot pull "file://$J/origin" --into "$J/replica" --pubkey "$J/pds.pub" >/dev/null 2>&1
"$W/offdelta" --in "$dump" --out "$J/delta.jsonl.gz" --per10k 100 2>"$J/offdelta.out"
changed=$(sed -n 's/offdelta: \([0-9]*\) products.*/\1/p' "$J/offdelta.out")
step "night: import the delta ($changed products)" "$PDS" import off --in "$J/delta.jsonl.gz" --out "$J/changes" --retrieved-at 2026-11-28T00:00:00Z --no-documents --quiet
step "night: incremental build" "$PDS" ingest --base "$J/builds/base" --in "$J/changes" --out "$J/builds/next" --quiet
cp "$J/step.out" "$J/ingest.out"
step "night: sign" "$PDS" snapshot sign --key "$J/pds.key" "$J/builds/next"
step "night: publish, with a delta from the base" "$PDS" snapshot publish --deltas-from "$J/builds" "$J/builds/next" "file://$J/origin"
step "night: a replica pulls it" "$PDS" snapshot pull "file://$J/origin" --into "$J/replica" --pubkey "$J/pds.pub"
pulled=$(cat "$J/step.out")
out=$(mktemp)
{
  echo "Measured $(date -u +%F) on $(machine) with \`make bench-off-nightly\` (N_OFF=$N records of \`pds gen --format off --seed 7\`; a delta of 1% of its products, \`bench/offdelta\`). Without \`documents/\` (\`--no-documents\`), to spare the disk."
  echo
  echo "| step | command | time | peak RSS |"
  echo "|---|---|---|---|"
  cat "$rows"
  echo
  echo "The incremental build's summary: $(grep -h 'incremental from' "$J/ingest.out" | sed 's/^ *//; s|'"$J"'/||g')"
  echo
  echo "The pull: $(sed 's|'"$J"'/||g' <<<"$pulled")"
} > "$out"
cat "$out"
write_section bench-off-nightly "$out"
rm -f "$rows" "$out"
rm -rf "$J"
