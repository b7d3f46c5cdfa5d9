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

// inputSet is the files found in an input directory, by logical name
// (FileClaims and so on), each plain or gzip.
type inputSet struct {
	dir   string
	paths map[string]string // logical name -> file name in dir
}

// findInputs lists the input files of dir. products.ndjson is required; a
// file present both plain and gzip is an error, as is an unknown .ndjson file.
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
		logical := strings.TrimSuffix(name, ".gz")
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
		return set, nil, fmt.Errorf("input: %s has no %s (or %s.gz); it is the one required file", dir, FileProducts, FileProducts)
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
	gz     *gzip.Reader
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
	if strings.HasSuffix(name, ".gz") {
		gz, err := gzip.NewReader(bufio.NewReaderSize(src, 256<<10))
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("input: %s: not gzip: %w", name, err)
		}
		lr.gz = gz
		src = gz
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

// finish drains what is left (so the hash covers the whole file) and closes.
func (lr *lineReader) finish() ([]byte, error) {
	if lr.gz != nil {
		if _, err := io.Copy(io.Discard, lr.gz); err != nil {
			lr.f.Close()
			return nil, fmt.Errorf("input: %s: %w", lr.name, err)
		}
	}
	if _, err := io.Copy(lr.hash, lr.f); err != nil {
		lr.f.Close()
		return nil, fmt.Errorf("input: %s: %w", lr.name, err)
	}
	return lr.hash.Sum(nil), lr.f.Close()
}

func (lr *lineReader) close() { lr.f.Close() }
