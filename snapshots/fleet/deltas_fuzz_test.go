package fleet

import (
	"archive/tar"
	"bytes"
	"testing"

	"github.com/productdata/pds/snapshots"
)

// FuzzOpenDelta: any bytes as a delta file are read or refused, never a
// panic.
func FuzzOpenDelta(f *testing.F) {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range []struct{ name, body string }{
		{deltaHeaderName, `{"format":1,"base":"A","target":"B","files":[{"path":"x","how":"same","from":"x"}]}`},
		{snapshots.ManifestName, `{}`}, {snapshots.SignatureName, `sig`},
	} {
		tw.WriteHeader(&tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.body))})
		tw.Write([]byte(e.body))
	}
	tw.Close()
	f.Add(b.Bytes())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := openDelta(bytes.NewReader(data), "fuzz")
		if err == nil && d.header.Format != deltaFormat {
			t.Fatalf("opened a delta of format %d", d.header.Format)
		}
	})
}
