#!/usr/bin/env bash
# make bench-scale: how pds grows with the catalogue. At SCALE products
# (10M by default) and at BASE_SCALE (1M), in the same run:
#   build   a full build that keeps its records (ingest --keep-records) of
#           generated input (zstd from 1M): wall and CPU time, peak RSS, the
#           build folder's peak disk (sampled every 2 s), the snapshot's and
#           the records' bytes;
#   night   a change set of NIGHT products (10,000; one in seven deleted,
#           about as many added) built on each base (ingest --base): wall
#           time and peak RSS, and its time at SCALE over its time at
#           BASE_SCALE;
#   delta   the night carried to a replica that keeps the base as an
#           air-gapped site's bundle (pds snapshot bundle: the delta of each
#           changed file) and applied there (pds snapshot apply: patched,
#           verified, self-tested, made current): the bundle's share of the
#           snapshot's bytes, the apply's time. A bundle rather than a pull
#           from an origin, which would hold every build whole and take four
#           snapshots' bytes of disk (51 GB at 10M); the replica here is the
#           base hard-linked, so the stage needs about three times the
#           night's own new bytes;
#   reads   bench-resolve (bulk resolve vs PostgreSQL, the stream, pds
#           resolve), bench-serve (cold start, serving RSS) and bench-memcg
#           (a 1 GiB memory cgroup) at SCALE, each in its own section.
# STAGES picks the parts (default: all four). Each stage checks the disk it
# needs first and stops saying how much. Progress goes to stderr; the table
# of the two sizes side by side, with their ratio, to BENCHMARKS.md.
source "$(dirname "$0")/bench-lib.sh"
cd "$(dirname "$0")/.."
need /usr/bin/time time
need zstd zstd
N=${SCALE:-10000000}
N1=${BASE_SCALE:-1000000}
NIGHT=${NIGHT:-10000}
STAGES=${STAGES:-build night delta reads}
W=${BENCH_DIR:-var/bench}
D=${SCALE_DIR:-var/scale}
mkdir -p "$W" "$D"
go build -o bin/pds ./cmd/pds
go build -o bin/changeinput ./scripts/bench/changeinput
format=$(pds_format) || exit 1
say() { echo "bench-scale: $*" >&2; }
has_stage() { [[ " $STAGES " == *" $1 "* ]]; }

# build N: the full build of N products that keeps its records, measured
# into $W/scale-build-N.txt (kept: a later run reuses it while the build is
# of this snapshot format).
build() {
  local n=$1 in=$W/in-$1 snap=$W/snap-$1-kept compress
  compress=$(gen_compress "$n")
  if [ -f "$W/scale-build-$n.txt" ] && grep -Eq "\"format_version\": *$format[,}]" "$snap/manifest.json" 2>/dev/null; then
    say "$n: the build of an earlier run is kept ($snap)"
    return
  fi
  local need=$((n * (BYTES_BUILD_PEAK + 3000)))
  have_input "$in" || need=$((need + $(input_bytes "$n" "$compress")))
  need_disk "$W" "$need" "a build of $n products with its records"
  if ! have_input "$in"; then
    say "$n: generating the input ($compress)"
    bin/pds gen --products "$n" --seed 7 --out "$in" --compress "$compress"
  fi
  rm -rf "$snap" "$snap.records"
  say "$n: full build with its records kept"
  local base peak=0 sampler
  base=$(du -sb "$W" | cut -f1)
  # set +e: du fails now and then on a file the build removes as it walks,
  # and a sampler that stopped would fail the run at its kill.
  ( set +e; while sleep 2; do du -sb "$W" 2>/dev/null | cut -f1; done ) > "$W/scale-du-$n.txt" &
  sampler=$!
  measure bin/pds ingest --in "$in" --out "$snap" --keep-records > "$W/scale-build-$n.out"
  kill "$sampler" 2>/dev/null || true
  peak=$(sort -n "$W/scale-du-$n.txt" | tail -n 1)
  echo "$WALL_S $CPU_S $RSS_MB $((${peak:-$base} - base)) $(du -sb --apparent-size "$snap" | cut -f1) $(du -sb --apparent-size "$snap.records" | cut -f1)" > "$W/scale-build-$n.txt"
  say "$n: built in ${WALL_S}s ($CPU_S s CPU), peak RSS $RSS_MB MiB"
}

# night N: NIGHT products changed, deleted and added, built on the base of
# N products; measured into $W/scale-night-N.txt.
night() {
  local n=$1 per10k add
  per10k=$((NIGHT * 10000 / n))
  [ "$per10k" -ge 1 ] || { say "NIGHT=$NIGHT is less than one per 10,000 of $n products"; exit 1; }
  add=$((per10k / 7))
  [ "$add" -ge 1 ] || add=1
  need_disk "$D" $((n * 600)) "a night on $n products"
  rm -rf "$D/night-$n" "$D/night-$n.records"
  # The change set is kept while its parameters hold: at 10M, making it
  # reads the whole 7 GB input (about 25 minutes on 2 cores).
  local params="$per10k 7 $add $(stat -c %Y "$W/in-$n")"
  if [ -d "$D/changes-$n" ] && [ "$(cat "$D/changes-$n.params" 2>/dev/null)" = "$params" ]; then
    say "$n: the change set of an earlier run is kept ($D/changes-$n)"
  else
    rm -rf "$D/changes-$n" "$D/changes-$n.params"
    say "$n: making the change set"
    bin/changeinput --in "$W/in-$n" --changes "$D/changes-$n" --per10k "$per10k" --delete-one-in 7 --add-per10k "$add" 2>/dev/null
    echo "$params" > "$D/changes-$n.params"
  fi
  say "$n: the night's incremental build"
  measure bin/pds ingest --base "$W/snap-$n-kept" --in "$D/changes-$n" --out "$D/night-$n" --keep-records > "$D/night-$n.out"
  local summary
  summary=$(sed -n 's/.*incremental from [^:]*: \(.*\)/\1/p' "$D/night-$n.out" | head -n 1)
  echo "$WALL_S $RSS_MB $summary" > "$W/scale-night-$n.txt"
  say "$n: night built in ${WALL_S}s: $summary"
}

# delta N: the night as a bundle from its base, applied by a replica that
# keeps the base (hard-linked here, as a site that pulled it holds it).
delta() {
  local n=$1 snapbytes newbytes
  snapbytes=$(du -sb --apparent-size "$W/snap-$n-kept" | cut -f1)
  # The night's own files (not the base's, linked): the bundle is at most
  # those, and the replica writes them and copies the unchanged ones it
  # cannot link (the search index's).
  newbytes=$(find "$D/night-$n" -type f -links 1 -printf '%s\n' | awk '{ s += $1 } END { printf "%.0f\n", s }')
  need_disk "$D" $((newbytes * 3 + (1 << 30))) "the bundle of a night on $n products and a replica that applies it"
  local b=$D/bundle-$n
  rm -rf "$b"
  mkdir -p "$b/replica"
  cp -al "$W/snap-$n-kept" "$b/base"
  cp -al "$D/night-$n" "$b/night"
  bin/pds snapshot keygen --pub "$b/pds.pub" --key "$b/pds.key" >/dev/null 2>&1
  for x in base night; do bin/pds snapshot sign --key "$b/pds.key" "$b/$x" >/dev/null; done
  measure bin/pds snapshot bundle --from "$b/base" --to "$b/night" --out "$b/night.bundle" >/dev/null
  local bundle_s=$WALL_S id bytes
  bytes=$(stat -c %s "$b/night.bundle")
  id=$(sed -n 's/.*"build_id": *"\([^"]*\)".*/\1/p' "$b/base/manifest.json" | head -1)
  cp -al "$b/base" "$b/replica/$id"
  ln -s "$id" "$b/replica/current"
  measure bin/pds snapshot apply "$b/night.bundle" --into "$b/replica" --pubkey "$b/pds.pub" > "$D/apply-$n.out" 2>&1
  echo "$bytes $snapbytes $bundle_s $WALL_S $RSS_MB" > "$W/scale-delta-$n.txt"
  say "$n: bundle $bytes bytes of $snapbytes, applied and made current in ${WALL_S}s"
  rm -rf "$b"
}

for n in "$N1" "$N"; do
  has_stage build && build "$n"
  has_stage night && night "$n"
  has_stage delta && delta "$n"
done
if has_stage reads; then
  say "$N: reads (bench-resolve, bench-serve, bench-memcg)"
  N_BIG=$N bash scripts/bench-resolve.sh
  N_BIG=$N bash scripts/bench-serve.sh
  N_BIG=$N bash scripts/bench-memcg.sh
fi

# The table: each figure at both sizes, and their ratio.
val() { [ -f "$W/scale-$1-$2.txt" ] && awk -v i="$3" '{print $i}' "$W/scale-$1-$2.txt" || echo; }
row() { # LABEL A B [UNIT]: a row with the ratio B/A
  local r=
  [ -n "$2" ] && [ -n "$3" ] && r=$(awk -v a="$2" -v b="$3" 'BEGIN { if (a > 0) printf "%.2f×", b / a }')
  echo "| $1 | ${2:-not run} | ${3:-not run} | ${r:-} |"
}
out=$(mktemp)
{
  echo "## How pds grows: $N1 and $N products (\`make bench-scale\`)"
  echo
  echo "Measured $(date -u +%Y-%m-%d) on $(machine); load average when the run ended: $(cut -d' ' -f1-3 /proc/loadavg). Command: \`SCALE=$N BASE_SCALE=$N1 STAGES=\"$STAGES\" make bench-scale\` (scripts/bench-scale.sh; generated input, seed 7, zstd from 1M products). A figure of a stage not run in this run is from the last run that ran it."
  echo
  echo "| figure | $N1 | $N | ratio |"
  echo "|---|---:|---:|---:|"
  row "full build with records kept: wall s" "$(val build "$N1" 1)" "$(val build "$N" 1)"
  row "full build: CPU s" "$(val build "$N1" 2)" "$(val build "$N" 2)"
  row "full build: products/s" "$(awk -v n="$N1" -v s="$(val build "$N1" 1)" 'BEGIN{ if (s > 0) printf "%.0f", n/s }')" "$(awk -v n="$N" -v s="$(val build "$N" 1)" 'BEGIN{ if (s > 0) printf "%.0f", n/s }')"
  row "full build: peak RSS MiB" "$(val build "$N1" 3)" "$(val build "$N" 3)"
  row "full build: peak disk of the build, bytes" "$(val build "$N1" 4)" "$(val build "$N" 4)"
  row "snapshot bytes" "$(val build "$N1" 5)" "$(val build "$N" 5)"
  row "kept records bytes" "$(val build "$N1" 6)" "$(val build "$N" 6)"
  row "night of $NIGHT products: wall s" "$(val night "$N1" 1)" "$(val night "$N" 1)"
  row "night: peak RSS MiB" "$(val night "$N1" 2)" "$(val night "$N" 2)"
  row "night's bundle (its delta): bytes" "$(val delta "$N1" 1)" "$(val delta "$N" 1)"
  row "night's bundle: applied and made current, s" "$(val delta "$N1" 4)" "$(val delta "$N" 4)"
  echo
  for n in "$N1" "$N"; do
    [ -f "$W/scale-night-$n.txt" ] && echo "The night on $n products: $(cut -d' ' -f3- "$W/scale-night-$n.txt")."
    [ -f "$W/scale-delta-$n.txt" ] && echo "Its bundle is $(awk '{printf "%.3f%%", 100*$1/$2}' "$W/scale-delta-$n.txt") of the snapshot's bytes."
  done
  echo
  echo "Goals at 10M on 2 cores: full build ≤ 15 min and ≤ 1.5 GiB; the night ≤ 15 s and ≤ 1.5× its time at 1M; its delta ≤ 0.3%. The reads at $N are in their own sections: bench-resolve-$N, bench-serve-$N, bench-memcg-$N."
} > "$out"
cat "$out"
write_section bench-scale "$out"
rm -f "$out"
