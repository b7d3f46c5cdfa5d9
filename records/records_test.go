package records_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/productdata/pds/records"
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
