package http_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/productdata/pds/ingest/ingesttest"
)

func resolveBody(ids ...string) string {
	b, _ := json.Marshal(map[string]any{"identifiers": ids})
	return string(b)
}

func TestResolve(t *testing.T) {
	e := newEnv(t)
	many := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = demo
		}
		return out
	}
	type item struct {
		status, subject, reason, code string
		candidates                    int
	}
	cases := []struct {
		name     string
		key      string
		body     string
		status   int
		code     string
		envelope string
		items    []item
		counts   map[string]int
		golden   string // the whole answer, byte for byte (keys in order), when set
	}{
		{name: "mixed", key: ingesttest.KeyFull, status: 200, envelope: "partial",
			body: resolveBody(demo, "gtin:09520000000028", "00012345678905", "09520123456789", "9520000000011", demo, "internal_sku:ACME-7", "gln:9520000000028", "internal_sku:SKU-1"),
			items: []item{
				{status: "found", subject: demoSub},
				{status: "not_found", subject: "gtin:09520000000028"},
				{status: "unknown", subject: "gtin:00012345678905", reason: "NO_SOURCE"},
				{status: "invalid", code: "INVALID_IDENTIFIER"},
				{status: "ambiguous", candidates: 2},
				{status: "found", subject: demoSub},
				{status: "unknown", subject: "internal_sku:ACME-7", reason: "NO_SOURCE"},
				{status: "unknown", subject: "gln:9520000000028", reason: "OUT_OF_SCOPE"},
				{status: "found", subject: demoSub},
			},
			counts: map[string]int{"found": 3, "not_found": 1, "unknown": 3, "ambiguous": 1, "invalid": 1, "total": 9}, golden: "resolve-mixed"},
		{name: "tenant sees its private product", key: ingesttest.KeyAcme, status: 200, envelope: "partial",
			body:   resolveBody("internal_sku:ACME-7", demo, "gtin:09520000000011", "sku:ACME-7", "9520000000011", "gtin:09520000000028"),
			items:  []item{{status: "found", subject: "internal_sku:ACME-7"}, {status: "found", subject: demoSub}, {status: "found", subject: "gtin:09520000000011"}},
			golden: "resolve-tenant"},
		{name: "all found", key: ingesttest.KeyFull, status: 200, envelope: "found", body: resolveBody(demo, "gtin:09520000000011"),
			items: []item{{status: "found", subject: demoSub}, {status: "found", subject: "gtin:09520000000011"}}},
		{name: "all absent", key: ingesttest.KeyFull, status: 200, envelope: "not_found", body: resolveBody("gtin:09520000000028", "9520000000042"),
			items: []item{{status: "not_found"}, {status: "not_found"}}},
		{name: "all invalid", key: ingesttest.KeyFull, status: 200, envelope: "partial", body: resolveBody("bad value", ""),
			items: []item{{status: "invalid", code: "INVALID_IDENTIFIER"}, {status: "invalid", code: "INVALID_IDENTIFIER"}}},
		{name: "exactly 1000", key: ingesttest.KeyFull, status: 200, envelope: "found", body: resolveBody(many(1000)...), counts: map[string]int{"found": 1000, "total": 1000}},
		{name: "1001", key: ingesttest.KeyFull, status: 400, code: "BATCH_TOO_LARGE", body: resolveBody(many(1001)...)},
		{name: "empty", key: ingesttest.KeyFull, status: 400, code: "INVALID_REQUEST", body: `{"identifiers":[]}`},
		{name: "missing member", key: ingesttest.KeyFull, status: 400, code: "INVALID_REQUEST", body: `{}`},
		{name: "wrong type", key: ingesttest.KeyFull, status: 400, code: "INVALID_REQUEST", body: `{"identifiers":"09520123456788"}`},
		{name: "wrong item type", key: ingesttest.KeyFull, status: 400, code: "INVALID_REQUEST", body: `{"identifiers":[1,2]}`},
		{name: "not json", key: ingesttest.KeyFull, status: 400, code: "INVALID_REQUEST", body: `identifiers=1`},
		{name: "array body", key: ingesttest.KeyFull, status: 400, code: "INVALID_REQUEST", body: `["09520123456788"]`},
		{name: "too large body", key: ingesttest.KeyFull, status: 413, code: "PAYLOAD_TOO_LARGE", body: `{"identifiers":["` + strings.Repeat("1", 2<<20) + `"]}`},
		{name: "scope", key: ingesttest.KeyReadOnly, status: 403, code: "FORBIDDEN", body: resolveBody(demo)},
		{name: "no key", status: 401, code: "UNAUTHENTICATED", body: resolveBody(demo)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do(t, "POST", "/v1/products/resolve", c.key, c.body)
			checkEnvelope(t, r)
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %.300s", r.status, c.status, r.body)
			}
			if c.golden != "" {
				checkGolden(t, c.golden, r)
			}
			if c.code != "" {
				if r.json["code"] != c.code {
					t.Fatalf("code %v, want %s", r.json["code"], c.code)
				}
				return
			}
			if r.json["status"] != c.envelope {
				t.Errorf("envelope status %v, want %s", r.json["status"], c.envelope)
			}
			if ingesttest.Get(r.json, "meta.coverage.sources_consulted") == nil {
				t.Error("meta.coverage missing")
			}
			items, _ := ingesttest.Get(r.json, "data.items").([]any)
			var ids struct{ Identifiers []string }
			json.Unmarshal([]byte(c.body), &ids)
			if len(items) != len(ids.Identifiers) {
				t.Fatalf("%d items for %d inputs", len(items), len(ids.Identifiers))
			}
			for i, it := range items {
				if ingesttest.Get(it, "input") != ids.Identifiers[i] {
					t.Errorf("item %d input %v, want %s (input order)", i, ingesttest.Get(it, "input"), ids.Identifiers[i])
				}
				if ingesttest.Get(it, "status") == "found" && ingesttest.Get(it, "product.subject") != ingesttest.Get(it, "subject") {
					t.Errorf("item %d: found without its identity: %v", i, it)
				}
			}
			for i, w := range c.items {
				it := items[i]
				if ingesttest.Get(it, "status") != w.status {
					t.Errorf("item %d status %v, want %s", i, ingesttest.Get(it, "status"), w.status)
				}
				if w.subject != "" && ingesttest.Get(it, "subject") != w.subject {
					t.Errorf("item %d subject %v, want %s", i, ingesttest.Get(it, "subject"), w.subject)
				}
				if w.reason != "" && ingesttest.Get(it, "reason") != w.reason {
					t.Errorf("item %d reason %v, want %s", i, ingesttest.Get(it, "reason"), w.reason)
				}
				if w.code != "" && ingesttest.Get(it, "error.code") != w.code {
					t.Errorf("item %d error.code %v, want %s", i, ingesttest.Get(it, "error.code"), w.code)
				}
				if w.candidates > 0 {
					if cs, _ := ingesttest.Get(it, "candidates").([]any); len(cs) != w.candidates {
						t.Errorf("item %d candidates %v", i, ingesttest.Get(it, "candidates"))
					}
				}
			}
			for k, n := range c.counts {
				if got := ingesttest.Get(r.json, "data.counts."+k); fmt.Sprint(got) != fmt.Sprint(n) {
					t.Errorf("counts.%s = %v, want %d", k, got, n)
				}
			}
		})
	}
}
