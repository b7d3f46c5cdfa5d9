#!/usr/bin/env bash
# make bench-delta: what a night's change costs, built and shipped. The base
# is a full build of the N_BIG-product input that keeps its records
# (ingest --keep-records; timed when it is built). Then, for 1% and 5% of
# the products, scripts/bench/changeinput writes a change set (each changed product
# whole: new claim values and a new updated_at; about one changed product in
# DELETE_ONE_IN, 7 unless set, deleted instead, as real nights delete some:
# DELETE_ONE_IN=0 changes only; and, as real nights add some, about
# ADD_PER10K new products per 10,000, by default as many as are deleted
# (one in seven of the changed share: pct*100/7; ADD_PER10K=0 adds none)
# and ingest --base builds the next snapshot from the base and it,
# incrementally. Each new build is
# signed and published to a file:// origin with deltas from the earlier
# builds; one replica that keeps the base pulls it by delta and another
# pulls it whole (--no-delta), in the same run. Reports the incremental
# build's time and memory, the delta's size and how long publish took to
# make it, and per pull the bytes and objects fetched and the time to
# apply, verify, self-test and make current. Writes to BENCHMARKS.md. The
# input is generated zstd from 1M products (GEN_COMPRESS: none, gzip or zstd;
# see gen_compress).
source "$(dirname "$0")/bench-lib.sh"
cd "$(dirname "$0")/.."
N=${N_BIG:-1000000}
W=${BENCH_DIR:-var/bench}
D=${DELTA_DIR:-var/delta}
SHARES=${SHARES:-1 5}
DELETE_ONE_IN=${DELETE_ONE_IN:-7}
go build -o bin/pds ./cmd/pds
go build -o bin/changeinput ./scripts/bench/changeinput
in=$W/in-$N
compress=$(gen_compress "$N")
base=$W/snap-$N-kept
rm -rf "$D"
# The disk this needs, from the per-product figures of bench-lib.sh: the
# input and the base when they are to be made (a snapshot and its kept
# records, 1.47 KB a product at 1M in BENCHMARKS.md: 3 KB together; its
# build's peak, BYTES_BUILD_PEAK, comes before the rest and is smaller than
# it), then eleven snapshots of BYTES_SNAPSHOT each: the three builds at the
# origin, seven on the replicas (the whole one pulls all three builds, the
# two by delta the base and one new build each), and one for the two new
# builds together (their store's tables are the base's, linked).
need=$((N * 11 * BYTES_SNAPSHOT))
have_input "$in" || need=$((need + $(input_bytes "$N" "$compress")))
[ -d "$base.records" ] || need=$((need + N * 3000))
need_disk "$W" "$need" "bench-delta of $N products"
have_input "$in" || bin/pds gen --products "$N" --seed 7 --out "$in" --quiet --compress "$compress"
format=$(pds_format) || exit 1
if [ ! -d "$base.records" ] || [ ! -f "$W/ingest-kept-$N.txt" ] || ! grep -Eq "\"format_version\": *$format[,}]" "$base/manifest.json" 2>/dev/null; then
  rm -rf "$base" "$base.records"
  echo "bench-delta: building $base with its records kept" >&2
  measure bin/pds ingest --in "$in" --out "$base" --keep-records --quiet > "$W/ingest-kept-$N.out"
  echo "$WALL_S $RSS_MB" > "$W/ingest-kept-$N.txt"
fi
read -r kept_s kept_rss < "$W/ingest-kept-$N.txt"
mkdir -p "$D/builds"
D=$(realpath "$D")
origin="file://$D/origin"
bin/pds snapshot keygen --pub "$D/pds.pub" --key "$D/pds.key" >/dev/null
# Hard-linked copies, so that signing does not touch the benchmark's own
# snapshot (a build's kept records are only read by the next build).
cp -al "$base" "$D/builds/base"
cp -al "$base.records" "$D/builds/base.records"
bin/pds snapshot sign --key "$D/pds.key" "$D/builds/base" >/dev/null
bin/pds snapshot publish "$D/builds/base" "$origin" >/dev/null 2>&1
for r in $SHARES whole; do
  bin/pds snapshot pull "$origin" --into "$D/replica-$r" --pubkey "$D/pds.pub" >/dev/null 2>&1
done
full_bytes=$(du -sb --apparent-size "$D/builds/base" | cut -f1)
records_bytes=$(du -sb --apparent-size "$base.records" | cut -f1)

rows=$(mktemp)
for pct in $SHARES; do
  add=${ADD_PER10K:-$((pct * 100 / 7))}
  bin/changeinput --in "$in" --changes "$D/changes-$pct" --per10k $((pct * 100)) --delete-one-in "$DELETE_ONE_IN" --add-per10k "$add" 2>/dev/null
  measure bin/pds ingest --base "$D/builds/base" --in "$D/changes-$pct" --out "$D/builds/c$pct" --quiet > "$D/ingest-$pct.out"
  changed=$(sed -n 's/.*incremental from [^:]*: \([0-9]*\) products changed.*/\1/p' "$D/ingest-$pct.out")
  added=$(sed -n 's/.*incremental from [^:]*:.* \([0-9]*\) added.*/\1/p' "$D/ingest-$pct.out")
  deleted=$(sed -n 's/.*incremental from [^:]*:.* \([0-9]*\) deleted.*/\1/p' "$D/ingest-$pct.out")
  finishing=$(sed -n 's/.*finishing \([0-9.ms]*\).*/\1/p' "$D/ingest-$pct.out")
  echo "$pct $changed ${added:-0} ${deleted:-0} $add $WALL_S $RSS_MB $finishing" >> "$rows.build"
  echo "bench-delta: $pct%: incremental build of $changed changed, ${added:-0} added and ${deleted:-0} deleted products in ${WALL_S}s" >&2
  bin/pds snapshot sign --key "$D/pds.key" "$D/builds/c$pct" >/dev/null
  measure bin/pds snapshot publish --deltas-from "$D/builds" "$D/builds/c$pct" "$origin" > "$D/publish-$pct.out" 2>&1
  publish_s=$WALL_S publish_rss=$RSS_MB
  ndeltas=$(grep -c '/deltas/' "$D/publish-$pct.out" || true)
  id=$(sed -n 's/.*"build_id": *"\([^"]*\)".*/\1/p' "$D/builds/c$pct/manifest.json" | head -1)
  base_id=$(sed -n 's/.*"build_id": *"\([^"]*\)".*/\1/p' "$D/builds/base/manifest.json" | head -1)
  delta_bytes=$(stat -c %s "$D/origin/$id/deltas/$base_id")
  for how in delta whole; do
    if [ $how = delta ]; then rep="$D/replica-$pct" flags=(); else rep="$D/replica-whole" flags=(--no-delta); fi
    measure bin/pds snapshot pull "$origin" --into "$rep" --pubkey "$D/pds.pub" "${flags[@]}" > "$D/pull-$pct-$how.out" 2>"$D/pull-$pct-$how.err"
    line=$(cat "$D/pull-$pct-$how.out")
    got=$(sed -n 's/.* \([0-9]*\) bytes pulled in \([0-9]*\) objects.*/\1 \2/p' <<<"$line")
    read -r bytes objects <<<"$got"
    grep -q "by delta" <<<"$line" && came=delta || came=whole
    printf '| %s%% | %s | %s | %s (%.2f%%) | %s | %s s | %s MiB |\n' "$pct" "$how" "$came" \
      "$bytes" "$(awk -v a="$bytes" -v b="$full_bytes" 'BEGIN{print 100*a/b}')" "$objects" "$WALL_S" "$RSS_MB" >> "$rows"
  done
  echo "bench-delta: $pct%: delta $delta_bytes bytes, publish (with its deltas) ${publish_s}s" >&2
  echo "$pct $delta_bytes $publish_s $ndeltas $publish_rss" >> "$rows.publish"
  rm -rf "$D/changes-$pct"
done

out=$(mktemp)
{
  echo "Measured $(date -u +%F) on $(machine) with \`make bench-delta\` (N_BIG=$N, DELETE_ONE_IN=$DELETE_ONE_IN, ADD_PER10K=${ADD_PER10K:-pct*100/7}; the base snapshot is $full_bytes bytes)."
  echo
  echo "| products changed | \`ingest --base\`: the incremental build | of which finishing: the store's layer beside the search index's update | peak RSS |"
  echo "|---|---|---|---|"
  while read -r pct changed added deleted add secs rss fin; do
    printf '| %s%% (%s products changed, %s added, %s deleted) | %s s | %s | %s MiB |\n' "$pct" "$changed" "$added" "$deleted" "$secs" "$fin" "$rss"
  done < "$rows.build"
  echo
  echo "The base, a full build that keeps its records (\`ingest --keep-records\`): $kept_s s, peak $kept_rss MiB; the records take $records_bytes bytes beside it."
  echo
  echo "| products changed | pull | came | bytes fetched (of the snapshot) | objects | pull: fetch, apply, verify, self-test, swap | peak RSS |"
  echo "|---|---|---|---|---|---|---|"
  cat "$rows"
  echo
  echo "| products changed | delta from the base | publish: upload, and deltas made | publish peak RSS |"
  echo "|---|---|---|---|"
  while read -r pct bytes secs n rss; do
    printf '| %s%% | %s bytes (%.2f%%) | %s s, %s deltas | %s MiB |\n' "$pct" "$bytes" "$(awk -v a="$bytes" -v b="$full_bytes" 'BEGIN{print 100*a/b}')" "$secs" "$n" "$rss"
  done < "$rows.publish"
  echo
  echo 'The origin is a file:// folder on the same disk and the page cache is warm, so a whole pull here is a local copy; over a network, the bytes column is what counts. The new builds are incremental builds from the base (`ingest --base`), which keep its compression dictionaries.'
} > "$out"
cat "$out"
write_section "$(scale_section bench-delta "$N")" "$out"
rm -f "$rows" "$rows.publish" "$rows.build" "$out"
