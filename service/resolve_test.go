package service_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/ingest/input/synthetic"
	"github.com/productdata/pds/service"
	"github.com/productdata/pds/service/keys"
	"github.com/productdata/pds/snapshots"
)

// generated builds a snapshot of n generated products (pds gen, seed 7) and
// returns it with every identifier of its products.ndjson, in file order,
// and those of tenants' private products.
func generated(tb testing.TB, n int) (snap string, identifiers, private []string) {
	tb.Helper()
	in := tb.TempDir()
	if err := synthetic.Generate(synthetic.Options{Products: n, Seed: 7, Out: in}); err != nil {
		tb.Fatal(err)
	}
	f, err := os.Open(filepath.Join(in, "products.ndjson"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var p struct {
			Identifiers []string
			Tenant      string
		}
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			tb.Fatal(err)
		}
		identifiers = append(identifiers, p.Identifiers...)
		if p.Tenant != "" {
			private = append(private, p.Identifiers...)
		}
	}
	return ingesttest.Build(tb, in), identifiers, private
}

var interpretedAs = regexp.MustCompile(`^\{"interpreted_as":"[^"]*",`)

// resolveItems decodes the items of a Resolve answer, each product kept as
// the bytes it was sent as.
func resolveItems(tb testing.TB, res *service.Result) []struct {
	Input   string          `json:"input"`
	Status  string          `json:"status"`
	Subject string          `json:"subject"`
	Product json.RawMessage `json:"product"`
} {
	tb.Helper()
	var body struct {
		Data struct {
			Items []struct {
				Input   string          `json:"input"`
				Status  string          `json:"status"`
				Subject string          `json:"subject"`
				Product json.RawMessage `json:"product"`
			} `json:"items"`
		} `json:"data"`
	}
	if err := json.Unmarshal(append(append([]byte{'{'}, res.Body...), '}'), &body); err != nil {
		tb.Fatalf("%v: %.300s", err, res.Body)
	}
	return body.Data.Items
}

// A batch of 1000 inputs of every kind answers, item by item, what a single
// identity lookup of that input answers: the same status and subject, and
// the same identity document, byte for byte. It holds the batch path (its
// key order, its shortcuts, its copying of stored documents) to the path
// every single GET takes, for a public caller and for a tenant.
func TestResolveItemsMatchSingleLookups(t *testing.T) {
	snap, ids, private := generated(t, 3000)
	st, err := service.OpenSnapshot(snap, snapshots.OpenOptions{CacheBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	keysFile := filepath.Join(t.TempDir(), "keys.json")
	secrets := map[string]string{}
	for _, tenant := range []string{"public-co", "acme-retail"} { // acme-retail has private products and views
		if secrets[tenant], _, err = keys.Add(keysFile, keys.New{Tenant: tenant, Scopes: keys.AllScopes}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	ks, err := keys.Load(keysFile)
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(st, ks, nil, ingesttest.Logger(t))
	t.Cleanup(svc.Close)
	rng := rand.New(rand.NewPCG(1, 2))
	if len(private) == 0 {
		t.Fatal("the generated data has no private product")
	}
	inputs := append([]string(nil), private...)
	for len(inputs) < service.MaxBatch {
		id := ids[rng.IntN(len(ids))]
		switch rng.IntN(8) {
		case 0: // the value without its namespace: auto-detected
			_, v, _ := strings.Cut(id, ":")
			inputs = append(inputs, strings.TrimPrefix(v, "0"))
		case 1: // an absent GTIN with a valid check digit
			inputs = append(inputs, "gtin:09520000000028")
		case 2:
			inputs = append(inputs, "not an identifier")
		default:
			inputs = append(inputs, id)
		}
	}
	for _, key := range []string{"public-co", "acme-retail"} {
		t.Run(key, func(t *testing.T) {
			c, err := svc.Authenticate("Bearer " + secrets[key])
			if err != nil {
				t.Fatal(err)
			}
			res, err := svc.Resolve(context.Background(), c, service.ResolveArgs{Identifiers: &inputs})
			if err != nil {
				t.Fatal(err)
			}
			items := resolveItems(t, res)
			if len(items) != len(inputs) {
				t.Fatalf("%d items for %d inputs", len(items), len(inputs))
			}
			found, privateFound := 0, 0
			for i, it := range items {
				if it.Input != inputs[i] {
					t.Fatalf("item %d answers %q, asked %q", i, it.Input, inputs[i])
				}
				one, err := svc.Identity(context.Background(), c, service.ProductArgs{Identifier: &inputs[i]})
				if err != nil {
					if it.Status != "invalid" {
						t.Errorf("item %d (%s): %s, the single lookup refused it: %v", i, inputs[i], it.Status, err)
					}
					continue
				}
				var single struct {
					Status  string          `json:"status"`
					Subject string          `json:"subject"`
					Data    json.RawMessage `json:"data"`
				}
				if err := json.Unmarshal(append(append([]byte{'{'}, one.Body...), '}'), &single); err != nil {
					t.Fatal(err)
				}
				if it.Status != single.Status {
					t.Errorf("item %d (%s): status %s, single lookup %s", i, inputs[i], it.Status, single.Status)
				}
				if it.Status != "found" {
					continue
				}
				found++
				if slices.Contains(private, inputs[i]) {
					privateFound++
				}
				// A single lookup of an input that is not the subject says how it
				// read it in data.interpreted_as; a resolve item says it beside
				// the product.
				data := interpretedAs.ReplaceAll(single.Data, []byte("{"))
				if !bytes.Equal(it.Product, data) {
					t.Errorf("item %d (%s): product differs from the single lookup:\n%s\n%s", i, inputs[i], it.Product, single.Data)
				}
			}
			if (privateFound > 0) != (key == "acme-retail") {
				t.Errorf("%d private products found for %s", privateFound, key)
			}
			if found < len(inputs)/2 {
				t.Errorf("only %d of %d items found: the batch does not exercise the found path", found, len(inputs))
			}
		})
	}
}

// BenchmarkResolve1000 is one Resolve call of 1000 random existing canonical
// subjects of a 20,000-product snapshot, as make bench-resolve sends them
// (without HTTP). Read allocs/op: it is the regression guard of the batch
// path (go test -run '^$' -bench Resolve1000 -benchmem ./service/).
func BenchmarkResolve1000(b *testing.B) {
	snap, ids, _ := generated(b, 20000)
	svc, secrets := ingesttest.Service(b, snap)
	c, err := svc.Authenticate("Bearer " + secrets[ingesttest.KeyFull])
	if err != nil {
		b.Fatal(err)
	}
	var canonical []string
	for _, id := range ids {
		if strings.HasPrefix(id, "gtin:") {
			canonical = append(canonical, id)
		}
	}
	rng := rand.New(rand.NewPCG(7, 7))
	batches := make([][]string, 16)
	for i := range batches {
		for range service.MaxBatch {
			batches[i] = append(batches[i], canonical[rng.IntN(len(canonical))])
		}
	}
	ctx := context.Background()
	i := 0
	b.ReportAllocs()
	defer ingesttest.ReportCPU(b, ingesttest.CPUTime())
	for b.Loop() {
		res, err := svc.Resolve(ctx, c, service.ResolveArgs{Identifiers: &batches[i%len(batches)]})
		if err != nil {
			b.Fatal(err)
		}
		res.Release() // as the transports do once the answer is written
		i++
	}
	b.ReportMetric(float64(b.N*service.MaxBatch)/b.Elapsed().Seconds(), "identifiers/s")
}
