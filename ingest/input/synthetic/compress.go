package synthetic

import (
	"bytes"
	"fmt"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Compression says how Generate compresses the files it writes. pds ingest
// reads each kind by its file name's extension.
type Compression string

const (
	None Compression = ""     // plain NDJSON: products.ndjson
	Gzip Compression = "gzip" // products.ndjson.gz
	Zstd Compression = "zstd" // products.ndjson.zst
)

// compressedExts are the extensions of every kind, for removing the twins
// of a file Generate writes.
var compressedExts = []string{"", ".gz", ".zst"}

// ParseCompression reads a --compress value: none, gzip or zstd.
func ParseCompression(s string) (Compression, error) {
	switch s {
	case "none", "":
		return None, nil
	case "gzip":
		return Gzip, nil
	case "zstd":
		return Zstd, nil
	}
	return None, fmt.Errorf("synthetic: compression %q is not none, gzip or zstd", s)
}

// ext is the extension the compression adds to a file name.
func (c Compression) ext() string {
	switch c {
	case Gzip:
		return ".gz"
	case Zstd:
		return ".zst"
	}
	return ""
}

func (c Compression) valid() bool { return c == None || c == Gzip || c == Zstd }

// framer compresses a piece of a file into one self-contained frame (a zstd
// frame, a gzip member). A compressed file is its frames one after another,
// which zstd and gzip readers read as one stream. Each render worker has its
// own framer and compresses its chunk, so compression runs in parallel and
// the bytes depend only on the chunk, not on the number of workers.
type framer struct {
	c  Compression
	zw *zstd.Encoder
	gz *gzip.Writer
}

func newFramer(c Compression) *framer {
	f := &framer{c: c}
	switch c {
	case Zstd:
		// The fastest level: on generated NDJSON it makes files about a
		// tenth of their size at several times the speed of the default
		// level, whose files are only a few percent smaller. One goroutine
		// per encoder: the workers are the parallelism.
		zw, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
		if err != nil {
			panic("synthetic: " + err.Error()) // only for invalid options, and these are constant
		}
		f.zw = zw
	case Gzip:
		gz, err := gzip.NewWriterLevel(nil, gzip.BestSpeed)
		if err != nil {
			panic("synthetic: " + err.Error()) // only for an invalid level, and this one is constant
		}
		f.gz = gz
	}
	return f
}

// frame appends to dst one frame holding src. Writing to a bytes.Buffer
// cannot fail, so neither can this.
func (f *framer) frame(dst, src []byte) []byte {
	switch f.c {
	case Zstd:
		return f.zw.EncodeAll(src, dst)
	case Gzip:
		b := bytes.NewBuffer(dst)
		f.gz.Reset(b)
		f.gz.Write(src)
		f.gz.Close()
		return b.Bytes()
	}
	return append(dst, src...)
}
