#!/usr/bin/env bash
# make bench-delta: what a night's change costs a replica. On the N_BIG-
# product snapshot (the base), the claims of 1% and then 5% of the products
# are changed (bench/changeinput) and each is built again in full with the
# base's compression dictionaries (ingest --dictionaries-from), as a nightly
# build keeps them (the build is not timed here: see the ingest rows). Each new build is signed and published to a file://
# origin with deltas from the earlier builds; one replica that keeps the base
# pulls it by delta and another pulls it whole (--no-delta), in the same
# run. Reports the build's time, the delta's size and how long publish took
# to make it, and per pull the bytes and objects fetched and the time to
# apply, verify, self-test and make current. Writes to BENCHMARKS.md.
source "$(dirname "$0")/bench-lib.sh"
cd "$(dirname "$0")/.."
N=${N_BIG:-1000000}
W=${BENCH_DIR:-var/bench}
D=${DELTA_DIR:-var/delta}
SHARES=${SHARES:-1 5}
go build -o bin/pds ./cmd/pds
go build -o bin/changeinput ./bench/changeinput
ensure_snapshot "$W" "$N"
base=$SNAP
rm -rf "$D"
mkdir -p "$D/builds"
D=$(realpath "$D")
origin="file://$D/origin"
bin/pds snapshot keygen --pub "$D/pds.pub" --key "$D/pds.key" >/dev/null
# Hard-linked copies, so that signing does not touch the benchmark's own
# snapshots.
cp -al "$base" "$D/builds/base"
bin/pds snapshot sign --key "$D/pds.key" "$D/builds/base" >/dev/null
bin/pds snapshot publish "$D/builds/base" "$origin" >/dev/null 2>&1
for r in $SHARES whole; do
  bin/pds snapshot pull "$origin" --into "$D/replica-$r" --pubkey "$D/pds.pub" >/dev/null 2>&1
done
full_bytes=$(du -sb --apparent-size "$D/builds/base" | cut -f1)

rows=$(mktemp)
for pct in $SHARES; do
  in="$W/in-$N-c$pct" snap="$W/snap-$N-c$pct"
  if [ ! -f "$snap/manifest.json" ] || ! grep -q '"format_version": '"$(pds_format)" "$snap/manifest.json"; then
    rm -rf "$snap"
    bin/changeinput --in "$W/in-$N" --out "$in" --per10k $((pct * 100))
    echo "bench-delta: building $snap ($pct% of the products changed)" >&2
    bin/pds ingest --in "$in" --out "$snap" --dictionaries-from "$base" --quiet
    rm -rf "$in"
  fi
  cp -al "$snap" "$D/builds/c$pct"
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
done

out=$(mktemp)
{
  echo "Measured $(date -u +%F) on $(machine) with \`make bench-delta\` (N_BIG=$N; the base snapshot is $full_bytes bytes)."
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
  echo 'The origin is a file:// folder on the same disk and the page cache is warm, so a whole pull here is a local copy; over a network, the bytes column is what counts. The new builds are full builds with the base'"'"'s dictionaries (`ingest --dictionaries-from`).'

} > "$out"
cat "$out"
write_section bench-delta "$out"
rm -f "$rows" "$rows.publish" "$out"
