package ingest

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// A build counts its records in int64s (the progress counter, Summary's
// per-file counts and Views, the incremental counts) and the manifest
// carries them as int64: a count past 2^32, as a billion products' claims
// reach, is printed as it is, not wrapped.
func TestProgressCountsPast4G(t *testing.T) {
	var b builder
	for _, n := range []int64{1<<32 + 1, 5_000_000_000, 1<<40 + 3} {
		b.count.Store(0)
		b.count.Add(n)
		got := progressLine("claims.ndjson", n, b.count.Load(), time.Second, time.Minute)
		if want := " " + strconv.FormatInt(n, 10) + " records "; !strings.Contains(got, want) {
			t.Errorf("progress line %q does not say %q", got, want)
		}
	}
}
