package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/service"
	"github.com/productdata/pds/service/keys"
)

// recordedOut is a StreamOutput that keeps what it is given.
type recordedOut struct {
	begins  int
	writes  [][]byte
	flushes int
}

func (o *recordedOut) Begin(*service.Stamp) error { o.begins++; return nil }
func (o *recordedOut) Write(b []byte) (int, error) {
	o.writes = append(o.writes, bytes.Clone(b))
	return len(b), nil
}
func (o *recordedOut) Flush() error { o.flushes++; return nil }

// lineSource is a StreamInput of ids, then endless copies of them when
// endless is set, calling at (if set) before each line.
type lineSource struct {
	ids     []string
	i       int
	endless bool
	at      func(i int)
}

func (s *lineSource) Next() ([]byte, string, error) {
	if s.i >= len(s.ids) && !s.endless {
		return nil, "", io.EOF
	}
	if s.at != nil {
		s.at(s.i)
	}
	id := s.ids[s.i%len(s.ids)]
	s.i++
	return []byte(id), "", nil
}

// A stream is written a chunk at a time, in input order whatever chunk its
// workers finish first, after one Begin, each write whole lines and
// flushed, then the summary.
func TestResolveStreamWritesChunksInOrder(t *testing.T) {
	svc, _ := ingesttest.Service(t, ingesttest.Build(t, ingesttest.WriteCase(t, ingesttest.CaseFile("passport"))))
	var ids []string
	for i := 0; i < 2500; i++ {
		ids = append(ids, []string{"09520123456788", "gtin:09520000000028", "x y", "9520000000011"}[i%4])
	}
	c := domain.Caller{Tenant: "public-co", Scopes: keys.AllScopes, KeyID: "test"}
	out := &recordedOut{}
	sum, err := svc.ResolveStream(context.Background(), c, &lineSource{ids: ids}, out)
	if err != nil {
		t.Fatal(err)
	}
	if out.begins != 1 || len(out.writes) != 4 || out.flushes != 4 {
		t.Fatalf("%d begins, %d writes, %d flushes; want 1, 4 (three chunks and the summary), 4", out.begins, len(out.writes), out.flushes)
	}
	line := 0
	for w, b := range out.writes[:3] {
		if n := bytes.Count(b, []byte{'\n'}); n != []int{1000, 1000, 500}[w] || b[len(b)-1] != '\n' {
			t.Fatalf("write %d: %d lines", w, n)
		}
		for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			var it struct{ Input string }
			if err := json.Unmarshal([]byte(l), &it); err != nil || it.Input != ids[line] {
				t.Fatalf("line %d: %s, want the item of %q", line+1, l, ids[line])
			}
			line++
		}
	}
	if !strings.HasPrefix(string(out.writes[3]), `{"summary":{"complete":true,`) || sum.Counts["total"] != 2500 || sum.Stopped != nil {
		t.Errorf("summary %s, %+v", out.writes[3], sum)
	}
}

// A stream whose context ends stops, though its input does not.
func TestResolveStreamStopsWithItsContext(t *testing.T) {
	svc, _ := ingesttest.Service(t, ingesttest.Build(t, ingesttest.WriteCase(t, ingesttest.CaseFile("passport"))))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in := &lineSource{ids: []string{"09520123456788"}, endless: true, at: func(i int) {
		if i == 5000 {
			cancel()
		}
	}}
	c := domain.Caller{Tenant: "public-co", Scopes: keys.AllScopes, KeyID: "test"}
	_, err := svc.ResolveStream(ctx, c, in, &recordedOut{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}
