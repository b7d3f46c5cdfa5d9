package kv_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/kv"
	"github.com/productdata/pds/snapshots"
)

// TestBatchedReadsAnswerInCallersOrder reads every alias and public
// identity view of a snapshot, shuffled and with identifiers and subjects
// that are stored nowhere mixed in, through Reader.Aliases and
// Reader.Identities (with the point index mapped and read with pread), and
// checks that the answer at i is what Store.Alias and Store.View give for
// the input at i.
func TestBatchedReadsAnswerInCallersOrder(t *testing.T) {
	snap := ingesttest.Build(t, ingesttest.SearchInput(t, 300))
	m, _ := snapshots.ReadManifest(snap)
	for _, mapped := range []bool{false, true} {
		t.Run(fmt.Sprint("mapped=", mapped), func(t *testing.T) {
			st := openStore(t, snap, m, 1<<20, mapped)
			defer st.Close()
			var ids []string
			var refs []kv.ViewRef
			err := st.Scan(kv.TagAlias, func(k, _ []byte) error {
				ids = append(ids, string(k), string(k)+"x")
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			err = st.Scan(kv.TagIdentity, func(k, _ []byte) error {
				subject, tenant, _ := strings.Cut(string(k), "\x00")
				refs = append(refs, kv.ViewRef{Subject: subject, Tenant: tenant}, kv.ViewRef{Subject: subject + "x"})
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(ids) < 600 || len(refs) < 600 {
				t.Fatalf("only %d identifiers and %d views to read", len(ids), len(refs))
			}
			rng := rand.New(rand.NewPCG(8, 9))
			rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
			rng.Shuffle(len(refs), func(i, j int) { refs[i], refs[j] = refs[j], refs[i] })
			r, err := st.NewReader()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var b kv.Batch
			aliases, err := r.Aliases(&b, ids)
			if err != nil || len(aliases) != len(ids) {
				t.Fatalf("Aliases: %d answers, %v; want %d", len(aliases), err, len(ids))
			}
			for i, id := range ids {
				want, ok, err := st.Alias(id)
				if err != nil || ok != aliases[i].Found || fmt.Sprint(want) != fmt.Sprint(aliases[i].Alias) {
					t.Fatalf("%q: %+v, want %+v (found %v, %v)", id, aliases[i], want, ok, err)
				}
			}
			views, arena, err := r.Identities(&b, refs, nil)
			if err != nil || len(views) != len(refs) || len(arena) == 0 {
				t.Fatalf("Identities: %d answers, %v; want %d", len(views), err, len(refs))
			}
			for i, ref := range refs {
				raw, ok, err := st.View(kv.TagIdentity, ref.Subject, ref.Tenant, nil)
				if err != nil || ok != views[i].Found {
					t.Fatalf("%+v: found %v, want %v (%v)", ref, views[i].Found, ok, err)
				}
				if !ok {
					continue
				}
				want, err := kv.DecodeView(raw)
				if err != nil || string(want.Body) != string(views[i].View.Body) || string(want.Coverage) != string(views[i].View.Coverage) {
					t.Fatalf("%+v: body %q, want %q (%v)", ref, views[i].View.Body, want.Body, err)
				}
			}
			if err := r.Check(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
