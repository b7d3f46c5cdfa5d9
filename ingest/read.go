package ingest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// Input file names, in the order ingest reads them.
const (
	FileParties   = "parties.ndjson"
	FileSources   = "sources.ndjson"
	FileProducts  = "products.ndjson"
	FileClaims    = "claims.ndjson"
	FileDocuments = "documents.ndjson"
	FileEvidence  = "evidence.ndjson"
	FileVerdicts  = "verdicts.ndjson"
)

var inputFiles = []string{FileDeletions, FileParties, FileSources, FileProducts, FileClaims, FileDocuments, FileEvidence, FileVerdicts}

// maxLine is the longest input line accepted; a longer one is rejected.
const maxLine = 1 << 20

// Extensions of compressed input files: products.ndjson.gz is read through
// gzip, products.ndjson.zst through zstd.
const (
	extGzip = ".gz"
	extZstd = ".zst"
)

// inputSet is the files found in an input directory, by logical name
// (FileClaims and so on), each plain, gzip or zstd.
type inputSet struct {
	dir   string
	paths map[string]string // logical name -> file name in dir
}

// logicalName is the input file name without its compression extension.
func logicalName(name string) string {
	for _, ext := range []string{extGzip, extZstd} {
		if l, ok := strings.CutSuffix(name, ext); ok {
			return l
		}
	}
	return name
}

// findInputs lists the input files of dir. products.ndjson is required; a
// file present in two versions (plain, gzip, zstd) is an error that names
// both.
func findInputs(dir string) (inputSet, []string, error) {
	set := inputSet{dir: dir, paths: map[string]string{}}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return set, nil, fmt.Errorf("input: %w", err)
	}
	var ignored []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() {
			continue
		}
		logical := logicalName(name)
		known := false
		for _, f := range inputFiles {
			if f == logical {
				known = true
			}
		}
		if !known {
			ignored = append(ignored, name)
			continue
		}
		if prev, dup := set.paths[logical]; dup {
			return set, nil, fmt.Errorf("input: both %s and %s are present; keep one", prev, name)
		}
		set.paths[logical] = name
	}
	if _, ok := set.paths[FileProducts]; !ok {
		return set, nil, fmt.Errorf("input: %s has no %s (or %s%s, %s%s); it is the one required file", dir, FileProducts, FileProducts, extGzip, FileProducts, extZstd)
	}
	return set, ignored, nil
}

// digest is the input digest: sha256 over every input file in name order,
// each as its name, a newline, the sha256 of its bytes and a newline.
type digest struct{ files map[string]string }

func (d *digest) add(name string, sum []byte) {
	if d.files == nil {
		d.files = map[string]string{}
	}
	d.files[name] = hex.EncodeToString(sum)
}

func (d *digest) String() string {
	names := make([]string, 0, len(d.files))
	for n := range d.files {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%s\n%s\n", n, d.files[n])
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// lineReader reads one input file line by line, hashing its raw bytes.
type lineReader struct {
	name   string // the file name as reported in rejects
	f      *os.File
	dec    io.ReadCloser // the decompressor of a compressed file, else nil
	r      *bufio.Reader
	hash   hash.Hash
	line   int
	buf    []byte
	tooBig bool
	// bom is set when the file began with a UTF-8 byte order mark, which
	// next skipped.
	bom bool
}

func openLines(dir, name string) (*lineReader, error) {
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	lr := &lineReader{name: name, f: f, hash: sha256.New()}
	var src io.Reader = io.TeeReader(f, lr.hash)
	switch {
	case strings.HasSuffix(name, extGzip):
		gz, err := gzip.NewReader(bufio.NewReaderSize(src, 256<<10))
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("input: %s: not gzip: %w", name, err)
		}
		lr.dec = gz
	case strings.HasSuffix(name, extZstd):
		// Bad data shows on the first read, not here.
		zr, err := zstd.NewReader(bufio.NewReaderSize(src, 256<<10))
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("input: %s: %w", name, err)
		}
		lr.dec = zr.IOReadCloser()
	}
	if lr.dec != nil {
		src = lr.dec
	}
	lr.r = bufio.NewReaderSize(src, 256<<10)
	return lr, nil
}

// next returns the next line without its newline; io.EOF at the end. A line
// longer than maxLine comes back with tooLong set and no content.
func (lr *lineReader) next() (line []byte, tooLong bool, err error) {
	lr.buf = lr.buf[:0]
	lr.tooBig = false
	for {
		chunk, isPrefix, err := lr.r.ReadLine()
		if err != nil {
			if errors.Is(err, io.EOF) && (len(lr.buf) > 0 || lr.tooBig) {
				break
			}
			return nil, false, err
		}
		if !lr.tooBig {
			if len(lr.buf)+len(chunk) > maxLine {
				lr.tooBig = true
				lr.buf = lr.buf[:0]
			} else {
				lr.buf = append(lr.buf, chunk...)
			}
		}
		if !isPrefix {
			break
		}
	}
	lr.line++
	if lr.line == 1 && bytes.HasPrefix(lr.buf, []byte(byteOrderMark)) {
		// RFC 8259 lets a parser ignore a byte order mark at the start of a
		// text; editors on Windows write one. Anywhere else it is refused.
		lr.bom = true
		return lr.buf[len(byteOrderMark):], lr.tooBig, nil
	}
	return lr.buf, lr.tooBig, nil
}

// readError is an error reading the file's bytes (a cut-off or corrupt
// compressed file, a failing disk), naming the file and the last line read.
func (lr *lineReader) readError(err error) error {
	if lr.line == 0 {
		return fmt.Errorf("input: %s: cannot read its first line: %w", lr.name, err)
	}
	return fmt.Errorf("input: %s: cannot read past line %d: %w", lr.name, lr.line, err)
}

// finish drains what is left (so the hash covers the whole file) and closes.
func (lr *lineReader) finish() ([]byte, error) {
	if lr.dec != nil {
		if _, err := io.Copy(io.Discard, lr.dec); err != nil {
			lr.close()
			return nil, lr.readError(err)
		}
		lr.dec.Close()
	}
	if _, err := io.Copy(lr.hash, lr.f); err != nil {
		lr.f.Close()
		return nil, lr.readError(err)
	}
	return lr.hash.Sum(nil), lr.f.Close()
}

// close closes the file and stops its decompressor. Closing twice is
// harmless.
func (lr *lineReader) close() {
	if lr.dec != nil {
		lr.dec.Close()
	}
	lr.f.Close()
}
