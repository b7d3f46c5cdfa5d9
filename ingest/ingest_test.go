package ingest_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/productdata/pds/ingest"
	"github.com/productdata/pds/internal/fixture"
	"github.com/productdata/pds/kv"
)

// entry is one key of a snapshot's store and its value, as the tests show
// them.
type entry struct {
	tag     byte
	subject string // the subject of a view, else ""
	text    string
}

// entries lists the aliases, views and sources of a snapshot, by table and
// key.
func entries(t testing.TB, snap string) []entry {
	t.Helper()
	st, err := kv.Open(filepath.Join(snap, "store"), 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var all []entry
	for _, tag := range []byte{kv.TagAlias, kv.TagIdentity, kv.TagPassport, kv.TagEvidence, kv.TagSource} {
		err := st.Scan(tag, func(k, v []byte) error {
			var out strings.Builder
			e := entry{tag: tag}
			fmt.Fprintf(&out, "%c %s\n", tag, strings.ReplaceAll(string(k), "\x00", " | "))
			switch tag {
			case kv.TagAlias:
				fmt.Fprintf(&out, "  %s\n", strings.ReplaceAll(string(v), "\x00", " | "))
			case kv.TagSource:
				fmt.Fprintf(&out, "  %s\n", v)
			default:
				e.subject, _, _ = strings.Cut(string(k), "\x00")
				vw, err := kv.DecodeView(v)
				if err != nil {
					return err
				}
				if len(vw.Tenants) > 0 {
					fmt.Fprintf(&out, "  tenants with their own view: %s\n", strings.Join(vw.Tenants, ", "))
				}
				fmt.Fprintf(&out, "  body: %s\n", vw.Body)
				if len(vw.Coverage) > 0 {
					fmt.Fprintf(&out, "  coverage: %s\n", vw.Coverage)
				}
			}
			e.text = out.String()
			all = append(all, e)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return all
}

// dump lists every alias, view and source of a snapshot.
func dump(t testing.TB, snap string) string {
	t.Helper()
	var out strings.Builder
	for _, e := range entries(t, snap) {
		out.WriteString(e.text)
	}
	return out.String()
}

// TestStore runs the data-driven files under testdata/store. Each shows the
// store built from a case file part by part, so that a comment can say what
// each part shows:
//
//	build case=NAME    ingests testdata/cases/NAME.txt with the real ingest;
//	                   shows the rejected lines and the counts
//	aliases            every alias
//	views subject=S    the identity, passport and evidence views of S, for
//	                   every visibility
//	sources            every source record
//
// Every entry of the store must be shown by some directive of the file. The
// rules of passport selection have a case each in testdata/selection.
// Refresh the expected output with go test ./ingest -run TestStore -rewrite.
func TestStore(t *testing.T) {
	datadriven.Walk(t, "testdata/store", func(t *testing.T, path string) {
		var all []entry
		shown := map[int]bool{}
		show := func(keep func(entry) bool) string {
			var out strings.Builder
			for i, e := range all {
				if keep(e) {
					shown[i] = true
					out.WriteString(e.text)
				}
			}
			return out.String()
		}
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			switch td.Cmd {
			case "build":
				var name string
				td.ScanArgs(t, "case", &name)
				in := fixture.WriteCase(t, fixture.CaseFile(name))
				out := filepath.Join(t.TempDir(), "snap")
				var rejects bytes.Buffer
				sum, err := ingest.Run(context.Background(), ingest.Options{In: in, Out: out, Rejects: &rejects})
				if err != nil {
					t.Fatal(err)
				}
				all = entries(t, out)
				return "rejects:\n" + rejects.String() + fmt.Sprintf("accepted: %v\nrejected: %v\n", sum.Accepted, sum.Rejected)
			case "aliases":
				return show(func(e entry) bool { return e.tag == kv.TagAlias })
			case "views":
				var subject string
				td.ScanArgs(t, "subject", &subject)
				return show(func(e entry) bool { return e.subject == subject })
			case "sources":
				return show(func(e entry) bool { return e.tag == kv.TagSource })
			default:
				t.Fatalf("unknown directive %q", td.Cmd)
				return ""
			}
		})
		for i, e := range all {
			if !shown[i] {
				t.Errorf("%s: no directive shows this entry:\n%s", path, e.text)
			}
		}
	})
}
