package records_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/productdata/pds/ingest/records"
)

func get(t *testing.T, s *records.Store, key string) string {
	t.Helper()
	v, ok, err := s.Get([]byte(key), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return "<none>"
	}
	return string(v)
}

// TestCopyLeavesTheOriginalAsItWas: a copy is written to and closed, and the
// store it was copied from still holds what it held, as does a copy of it.
func TestCopyLeavesTheOriginalAsItWas(t *testing.T) {
	dir := t.TempDir()
	s, err := records.Create(filepath.Join(dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		if err := s.Set(fmt.Appendf(nil, "k%04d", i), fmt.Appendf(nil, "v%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	a, err := records.Open(filepath.Join(dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := a.Copy(filepath.Join(dir, "b"))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Delete([]byte("k0001")); err != nil {
		t.Fatal(err)
	}
	if err := b.Set([]byte("k0002"), []byte("changed")); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if got := get(t, a, "k0001") + " " + get(t, a, "k0002"); got != "v1 v2" {
		t.Errorf("original after the copy's writes: %s", got)
	}
	b, err = records.Open(filepath.Join(dir, "b"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if got := get(t, b, "k0001") + " " + get(t, b, "k0002") + " " + get(t, b, "k0999"); got != "<none> changed v999" {
		t.Errorf("copy: %s", got)
	}
	n := 0
	if err := b.Scan([]byte("k"), func(k, v []byte) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 999 {
		t.Errorf("copy scans %d keys, want 999", n)
	}
}

func TestOpenMissing(t *testing.T) {
	_, err := records.Open(filepath.Join(t.TempDir(), "none"))
	if !errors.Is(err, records.ErrMissing) {
		t.Fatalf("got %v, want ErrMissing", err)
	}
}

// filled makes a closed store of 1000 keys at dir.
func filled(t *testing.T, dir string) {
	t.Helper()
	s, err := records.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		if err := s.Set(fmt.Appendf(nil, "k%04d", i), bytes.Repeat(fmt.Appendf(nil, "v%d", i), 20)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// largestTable returns the path of the largest table of the store at dir.
func largestTable(t *testing.T, dir string) string {
	t.Helper()
	tables, err := filepath.Glob(filepath.Join(dir, "*.sst"))
	if err != nil || len(tables) == 0 {
		t.Fatalf("no tables in %s: %v", dir, err)
	}
	var largest string
	var size int64 = -1
	for _, p := range tables {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > size {
			largest, size = p, st.Size()
		}
	}
	return largest
}

// flipByteAt inverts the byte at offset at of the file at path.
func flipByteAt(t *testing.T, path string, at int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[at] ^= 0xff
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A store with one byte of a table flipped is refused by Open, naming the
// file, before any block is read. OpenListed, which reads no file, opens
// it; reading the damaged block is then an error naming the file.
func TestOpenRefusesAStoreWithAFlippedByte(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a")
	filled(t, dir)
	table := largestTable(t, dir)
	flipByteAt(t, table, 1) // in the first data block, which holds k0000
	_, err := records.Open(dir)
	if !errors.Is(err, records.ErrDamaged) || !strings.Contains(err.Error(), filepath.Base(table)) {
		t.Fatalf("Open of a store with a flipped byte: %v", err)
	}
	s, err := records.OpenListed(dir)
	if err != nil {
		t.Fatalf("OpenListed of a store with a flipped byte: %v", err)
	}
	defer s.Close()
	if _, _, err := s.Get([]byte("k0000"), nil); !errors.Is(err, records.ErrDamaged) || !strings.Contains(err.Error(), filepath.Base(table)) {
		t.Errorf("Get from the damaged block after OpenListed: %v", err)
	}
}

// A store whose list of checksums is gone, that holds a file the list does
// not name, or whose file is missing or of another size, is refused by Open
// and by OpenListed alike.
func TestOpenRefusesAStoreItsChecksumsDoNotCover(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(dir string) error
		want   string
	}{
		{"no list", func(dir string) error { return os.Remove(filepath.Join(dir, records.SumsName)) }, "has no " + records.SumsName},
		{"a file added", func(dir string) error { return os.WriteFile(filepath.Join(dir, "000999.sst"), []byte("x"), 0o644) }, "000999.sst"},
		{"a file removed", func(dir string) error { return os.Remove(largestTable(t, dir)) }, "is missing"},
		{"a file cut", func(dir string) error {
			p := largestTable(t, dir)
			st, err := os.Stat(p)
			if err != nil {
				return err
			}
			return os.Truncate(p, st.Size()-1)
		}, "cut or changed since it was kept"},
	} {
		for name, open := range map[string]func(string) (*records.Store, error){"Open": records.Open, "OpenListed": records.OpenListed} {
			dir := filepath.Join(t.TempDir(), "a")
			filled(t, dir)
			if err := c.change(dir); err != nil {
				t.Fatal(err)
			}
			_, err := open(dir)
			if !errors.Is(err, records.ErrDamaged) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %s: %v, want %q", c.name, name, err, c.want)
			}
		}
	}
}

// A read of a block damaged after Open is an error naming the store, the
// key and the file, never an absent key, and it does not end the process.
func TestReadOfADamagedBlockIsAnErrorNotAnAbsence(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a")
	filled(t, dir)
	s, err := records.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	table := largestTable(t, dir)
	flipByteAt(t, table, 1) // in the first data block, which holds k0000
	_, ok, err := s.Get([]byte("k0000"), nil)
	if err == nil || ok {
		t.Fatalf("Get of a key in a damaged block: %v %v", ok, err)
	}
	for _, want := range []string{dir, `"k0000"`, filepath.Base(table)} {
		if !strings.Contains(err.Error(), want) || !errors.Is(err, records.ErrDamaged) {
			t.Errorf("the error does not name %s or wrap ErrDamaged: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("the error is more than one line: %q", err)
	}
	if err := s.Scan([]byte("k"), func(k, v []byte) error { return nil }); !errors.Is(err, records.ErrDamaged) {
		t.Errorf("Scan over a damaged block: %v", err)
	}
}
