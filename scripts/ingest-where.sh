# Sourced by the benchmark scripts that measure pds ingest (bench-ingest.sh,
# bench-http.sh): "where the time goes" in a build.

# ingest_where IN PROF: run pds ingest of IN with --cpuprofile PROF and print
# one line with the share of CPU (cumulative, from go tool pprof -top -cum)
# of each stage of the build ("reading: ...", "views: ...") and of the main
# costs inside them, which are counted in their stage too.
ingest_where() {
  local in=$1 prof=$2 snap
  snap=$(mktemp -d)/snap
  bin/pds ingest --in "$in" --out "$snap" --quiet --cpuprofile "$prof" >/dev/null
  rm -rf "$(dirname "$snap")"
  go tool pprof -top -cum bin/pds "$prof" 2>/dev/null | awk '
    BEGIN {
      n = split("ingest.(*builder).readFile.func1|reading: parsing lines (all cores)" \
        ";segmentio/encoding/json.Parse|JSON decoding of input lines" \
        ";ingest.(*builder).readFile|reading: checking ids and references in line order (one goroutine)" \
        ";ingest.(*idFilter).testAndAdd|the id filter" \
        ";kv.(*Scratch).Set|scratch writes" \
        ";kv.(*ScratchReader).Get|scratch point reads" \
        ";ingest.(*builder).joinRange|document join (a goroutine a core)" \
        ";ingest.(*builder).gather|views: gathering each product'"'"'s records (one goroutine)" \
        ";ingest.(*builder).writeViews.func1|views: decoding records and computing views (all cores)" \
        ";ingest.(*builder).decodeSubject|decoding binary scratch records" \
        ";domain.Marshal|JSON encoding" \
        ";ingest.(*builder).write|views: writing views (one goroutine)" \
        ";index.(*Builder).Add|views: Bleve (one goroutine)" \
        ";pebble/v2.(*DB).runCompaction|scratch compactions" \
        ";runtime.gcBgMarkWorker|GC" \
        ";runtime.mallocgc|allocation", parts, ";")
      for (i = 1; i <= n; i++) { split(parts[i], kv, "|"); fn[i] = kv[1]; label[i] = kv[2] }
    }
    $5 ~ /%$/ && NF >= 6 {
      name = $6; for (i = 7; i <= NF; i++) name = name " " $i
      for (i = 1; i <= n; i++) if (!(i in got) && substr(name, length(name) - length(fn[i]) + 1) == fn[i]) { got[i] = $5 }
    }
    END { sep = ""; for (i = 1; i <= n; i++) if (i in got) { printf "%s%s %s", sep, label[i], got[i]; sep = ", " }; print "" }'
}
