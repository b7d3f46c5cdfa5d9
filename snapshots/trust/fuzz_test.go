package trust

import (
	"bytes"
	"context"
	"testing"
	"time"
)

// FuzzStatements serves a replica a genuine origin with one statement
// replaced by the fuzzer's bytes: the replica never panics, and whatever
// it takes is the genuine build, since nothing else is signed.
func FuzzStatements(f *testing.F) {
	fl := newFleet(&testing.T{}, "eu")
	genuine := fl.publish("B1", 1)
	names := []string{"1.root.json", "2.root.json", TimestampName, snapshotName(1), targetsName(1)}
	for i, n := range names {
		f.Add(uint8(i), fl.origin[n])
	}
	f.Add(uint8(2), []byte(`{"signed":{"_type":"timestamp","version":99999999999999,"expires":"2099-01-01T00:00:00Z","meta":{"snapshot.json":{"version":1}}},"signatures":[]}`))
	f.Fuzz(func(t *testing.T, which uint8, b []byte) {
		origin := Files{}
		for k, v := range fl.origin {
			origin[k] = v
		}
		origin[names[int(which)%len(names)]] = b
		r, err := NewReplica(fl.roots[0], t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		rel, err := r.Update(context.Background(), origin.Fetch, fl.now.Add(time.Hour))
		if err != nil {
			return
		}
		if rel.BuildID != genuine.ID || rel.Manifest.Check("manifest", genuine.Manifest) != nil {
			t.Fatalf("took %+v, which the genuine statements do not name", rel)
		}
		if r.Check(genuine.Manifest, rel.Statement) != nil || r.Check(append(bytes.Clone(genuine.Manifest), ' '), rel.Statement) == nil {
			t.Fatal("the kept statement does not hold for exactly the genuine manifest")
		}
	})
}
