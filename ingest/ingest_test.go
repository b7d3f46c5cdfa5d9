package ingest_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/productdata/pds/ingest"
	"github.com/productdata/pds/internal/fixture"
	"github.com/productdata/pds/kv"
)

var update = flag.Bool("update", false, "rewrite golden files")

// dump lists every entry of the views, aliases and sources of a snapshot.
func dump(t testing.TB, snap string) string {
	t.Helper()
	st, err := kv.Open(filepath.Join(snap, "store"), 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var out strings.Builder
	for _, tag := range []byte{kv.TagAlias, kv.TagIdentity, kv.TagPassport, kv.TagEvidence, kv.TagSource} {
		err := st.Scan(tag, func(k, v []byte) error {
			fmt.Fprintf(&out, "%c %s\n", tag, strings.ReplaceAll(string(k), "\x00", " | "))
			switch tag {
			case kv.TagAlias:
				fmt.Fprintf(&out, "  %s\n", strings.ReplaceAll(string(v), "\x00", " | "))
			case kv.TagSource:
				fmt.Fprintf(&out, "  %s\n", v)
			default:
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
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out.String()
}

func TestCases(t *testing.T) {
	cases, err := filepath.Glob("testdata/cases/*.txt")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, c := range cases {
		name := strings.TrimSuffix(filepath.Base(c), ".txt")
		t.Run(name, func(t *testing.T) {
			in := fixture.WriteCase(t, c)
			out := filepath.Join(t.TempDir(), "snap")
			var rejects bytes.Buffer
			sum, err := ingest.Run(context.Background(), ingest.Options{In: in, Out: out, Rejects: &rejects})
			if err != nil {
				t.Fatal(err)
			}
			got := "rejects:\n" + rejects.String() + fmt.Sprintf("accepted: %v\nrejected: %v\n\n", sum.Accepted, sum.Rejected) + dump(t, out)
			golden := strings.TrimSuffix(c, ".txt") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("snapshot of %s differs from %s (run with -update after checking):\n%s", c, golden, diff(string(want), got))
			}
		})
	}
}

// diff shows the first differing lines.
func diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n want: %s\n  got: %s", i+1, a, b)
		}
	}
	return ""
}
