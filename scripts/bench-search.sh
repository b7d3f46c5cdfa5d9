#!/usr/bin/env bash
# make bench-search: typo'd manufacturer queries over a 1M-product snapshot:
# pds latency at 1 connection, throughput at 4 (wrk), first-hit accuracy;
# PostgreSQL 15 pg_trgm (GIN, %, ORDER BY similarity) over the same names,
# in the same run.
source "$(dirname "$0")/bench-lib.sh"
cd "$(dirname "$0")/.."
need wrk wrk
N=${N_BIG:-1000000}
DUR=${DUR:-20s}
Q=${QUERIES:-500}
QPG=${QUERIES_PG:-100}
W=${BENCH_DIR:-var/bench}
PORT_PDS=${PORT_PDS:-18082}
PORT_PG=${PORT_PG:-15433}
mkdir -p "$W"
go build -o bin/pds ./cmd/pds
go build -o bin/searchbench ./scripts/bench/searchbench
ensure_snapshot "$W" "$N"
in=$IN snap=$SNAP
bin/searchbench queries --products "$in/products.ndjson" --n "$Q" --seed 11 --out "$W/queries.tsv"
bin/searchbench paths --queries "$W/queries.tsv" > "$W/paths-search.txt"
head -n "$QPG" "$W/queries.tsv" > "$W/queries-pg.tsv"

# pds
PGDIR=$(mktemp -d /tmp/pds-bench-pg.XXXX)
trap 'stop_pds; pg_stop "$PGDIR"; rm -rf "$PGDIR"' EXIT
start_pds search "$snap" "$PORT_PDS" products:search
ACC=$(bin/searchbench pds --url "http://127.0.0.1:$PORT_PDS" --key "$KEY" --queries "$W/queries.tsv")
ACC_PG_SUBSET=$(bin/searchbench pds --url "http://127.0.0.1:$PORT_PDS" --key "$KEY" --queries "$W/queries-pg.tsv")
PDS1=$(PATHS="$W/paths-search.txt" wrk_run pds-c1 1 "$DUR" "http://127.0.0.1:$PORT_PDS")
PDS4=$(PATHS="$W/paths-search.txt" wrk_run pds-c4 4 "$DUR" "http://127.0.0.1:$PORT_PDS")
stop_pds
echo "pds accuracy: $ACC (first $QPG: $ACC_PG_SUBSET)"; echo "$PDS1"; echo "$PDS4"

# PostgreSQL pg_trgm
pg_start "$PGDIR" "$PORT_PG"
"${PSQL[@]}" -c "CREATE DATABASE bench" postgres
"${PSQL[@]}" -d bench -c "CREATE EXTENSION pg_trgm"
"${PSQL[@]}" -d bench -c "CREATE TABLE products (subject text PRIMARY KEY, manufacturer text NOT NULL)"
bin/searchbench pgcopy --products "$in/products.ndjson" > "$W/products.tsv"
"${PSQL[@]}" -d bench -c "\\copy products FROM '$W/products.tsv'"
"${PSQL[@]}" -d bench -c "CREATE INDEX products_trgm ON products USING gin (manufacturer gin_trgm_ops)"
"${PSQL[@]}" -d bench -c "VACUUM ANALYZE products"
bin/searchbench sql --queries "$W/queries-pg.tsv" > "$W/pg-queries.sql"
# Accuracy and latency at 1 client: each query once, timed by psql.
{ echo '\timing on'; cat "$W/pg-queries.sql"; } | "${PSQL[@]}" -d bench -At > "$W/pg-out.txt" 2>&1
# First hit per query: the first line after each 'Time:' boundary.
awk 'BEGIN{first=""; got=0} /^Timing is on/{next} /^Time: /{print first; first=""; got=0; next} { if (!got) {first=$0; got=1} }' "$W/pg-out.txt" > "$W/pg-first.txt"
grep '^Time: ' "$W/pg-out.txt" | awk '{print $2*1000}' > "$W/pg-lat.txt"
n_lat=$(wc -l < "$W/pg-lat.txt")
paste <(cut -f2 "$W/queries-pg.tsv") <(head -n "$QPG" "$W/pg-first.txt") > "$W/pg-pairs.tsv"
ACC_PG=$(bin/searchbench score --pairs "$W/pg-pairs.tsv")
read -r PG_P50 PG_P99 < <(percentiles "$W/pg-lat.txt")
# Throughput at 4 clients.
split -l 1 -d -a 4 "$W/pg-queries.sql" "$W/pgq-"
args=(); for f in "$W"/pgq-*; do args+=(-f "$f"); done
pgbench -n -h 127.0.0.1 -p "$PORT_PG" -U postgres -c 4 -j 2 -T "${DUR%s}" "${args[@]}" bench > "$W/pgbench-search.out" 2>&1 || true
PG_TPS=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$W/pgbench-search.out" | head -1)
rm -f "$W"/pgq-*
echo "pg: accuracy $ACC_PG, p50_us=$PG_P50 p99_us=$PG_P99 ($n_lat timings), tps=$PG_TPS"

ms() { awk -v u="$1" 'BEGIN{printf "%.2f", u/1000}'; }
rate() { sed -n 's/.*rate=\([0-9.]*\).*/\1/p' <<<"$1"; }
out=$(mktemp)
{
  echo "## Manufacturer search vs PostgreSQL pg_trgm (\`make bench-search\`)"
  echo
  echo "Measured $(date -u +%Y-%m-%d) on $(machine). Command: \`make bench-search\` (scripts/bench-search.sh; N=$N products, $Q typo'd queries for pds, the first $QPG of them for PostgreSQL, DUR=$DUR)."
  echo
  echo "Queries: distinct manufacturer names of the generated data, picked weighted by product count, lower-cased, with one or two random letter edits (substitution, deletion, insertion, transposition). \"First\" means the first hit's normalised manufacturer equals the intended one. pds: \`GET /v1/products/search?manufacturer=…\` (default limit 20) under wrk on loopback. PostgreSQL 15: \`products(subject, manufacturer)\` with a GIN \`gin_trgm_ops\` index, \`WHERE manufacturer % q ORDER BY similarity(manufacturer, q) DESC, subject LIMIT 20\`, latency from psql \`\\timing\` (one client, each query once), throughput from pgbench at 4 clients."
  echo
  echo "| peer | p50 ms (1 conn) | p99 ms (1 conn) | queries/s (4 conns) | intended maker first |"
  echo "|---|---:|---:|---:|---:|"
  echo "| pds | $(ms "$(field p50_us "$PDS1")") | $(ms "$(field p99_us "$PDS1")") | $(field rps "$PDS4") | $(rate "$ACC") ($ACC; on PostgreSQL's $QPG: $(rate "$ACC_PG_SUBSET")) |"
  echo "| PostgreSQL pg_trgm | $(ms "$PG_P50") | $(ms "$PG_P99") | ${PG_TPS:-n/a} | $(rate "$ACC_PG") ($ACC_PG) |"
  echo
  echo "Per query, pds is **$(awk -v a="$PG_P50" -v b="$(field p50_us "$PDS1")" 'BEGIN{printf "%.0f", a/b}')×** faster at the median and **$(awk -v a="${PG_TPS:-0}" -v b="$(field rps "$PDS4")" 'BEGIN{ if (a>0) printf "%.0f", b/a; else print "n/a"}')×** in throughput (goals: p99 ≤ 10 ms, ≥ 10×, first ≥ 95%)."
} > "$out"
write_section bench-search "$out"
cat "$out"
