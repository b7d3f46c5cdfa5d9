package kv

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2/record"
)

// tableCreationTime is the creation time a built store's MANIFEST gives
// every table: 2000-01-01T00:00:00Z, in place of the wall clock.
//
// Pebble stamps each ingested table with time.Now() in Unix seconds
// (ingest.go: meta.CreationTime) and writes it into the store's MANIFEST,
// with no option to give it another clock; so two builds of the same input
// differed in that file alone. A served store is read-only and never
// compacts, which is all the time is used for. fixCreationTimes rewrites the
// MANIFEST's records with the fixed time, through Pebble's own record
// package, once the store is closed.
var tableCreationTime = uint64(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).Unix())

// creationTimeField is how a version edit holds a table's creation time: the
// custom field tag 6, the field's length (5: a Unix time in seconds from 1978
// to 3058 is a 5-byte uvarint), then the uvarint.
const (
	creationTimeTag = 6
	creationTimeLen = 5
)

// fixCreationTimes rewrites the MANIFEST of the closed store in dir so that
// the tables it lists, ingested between the Unix seconds from and to, carry
// tableCreationTime. It finds exactly tables such fields or fails.
func fixCreationTimes(dir string, tables int, from, to int64) error {
	if tables == 0 {
		return nil
	}
	path, err := manifestPath(dir)
	if err != nil {
		return err
	}
	recs, err := readRecords(path)
	if err != nil {
		return fmt.Errorf("kv: read %s: %w", path, err)
	}
	var fixed [binary.MaxVarintLen64]byte
	if binary.PutUvarint(fixed[:], tableCreationTime) != creationTimeLen {
		return fmt.Errorf("kv: the fixed creation time is not a %d-byte uvarint", creationTimeLen)
	}
	found := 0
	for _, rec := range recs {
		for i := 0; i+2+creationTimeLen <= len(rec); i++ {
			if rec[i] != creationTimeTag || rec[i+1] != creationTimeLen {
				continue
			}
			t, n := binary.Uvarint(rec[i+2 : i+2+creationTimeLen])
			if n != creationTimeLen || int64(t) < from || int64(t) > to {
				continue
			}
			copy(rec[i+2:], fixed[:creationTimeLen])
			found++
			i += 1 + creationTimeLen
		}
	}
	if found != tables {
		return fmt.Errorf("kv: %s holds %d table creation times, not the %d tables ingested; this Pebble writes its MANIFEST otherwise than kv expects", path, found, tables)
	}
	return writeRecords(path, recs)
}

// manifestPath returns the one MANIFEST file of the store in dir.
func manifestPath(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("kv: %w", err)
	}
	var found []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "MANIFEST-") {
			found = append(found, e.Name())
		}
	}
	if len(found) != 1 {
		return "", fmt.Errorf("kv: %s holds %d MANIFEST files, want 1", dir, len(found))
	}
	return filepath.Join(dir, found[0]), nil
}

func readRecords(path string) ([][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := record.NewReader(f, 0)
	var recs [][]byte
	for {
		rr, err := r.Next()
		if err == io.EOF {
			return recs, nil
		}
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(rr)
		if err != nil {
			return nil, err
		}
		recs = append(recs, b)
	}
}

// writeRecords replaces the record file at path with recs, through a
// temporary file renamed over it.
func writeRecords(path string, recs [][]byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("kv: %w", err)
	}
	w := record.NewWriter(f)
	for _, rec := range recs {
		if _, err := w.WriteRecord(rec); err != nil {
			f.Close()
			os.Remove(tmp)
			return fmt.Errorf("kv: rewrite %s: %w", path, err)
		}
	}
	err = w.Close()
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("kv: rewrite %s: %w", path, err)
	}
	return nil
}
