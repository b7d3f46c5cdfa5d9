package http_test

import (
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	pdshttp "github.com/productdata/pds/http"
	"github.com/productdata/pds/ingest/ingesttest"
)

const searchProducts = 120

func newSearchEnv(t *testing.T) *env {
	t.Helper()
	snap := ingesttest.Build(t, ingesttest.SearchInput(t, searchProducts))
	svc, secrets := ingesttest.Service(t, snap)
	srv := httptest.NewServer(pdshttp.New(svc, ingesttest.Logger(t), nil))
	t.Cleanup(srv.Close)
	return &env{url: srv.URL, keys: secrets, snap: snap, svc: svc}
}

func items(r response) []map[string]any {
	raw, _ := ingesttest.Get(r.json, "data.items").([]any)
	out := make([]map[string]any, 0, len(raw))
	for _, x := range raw {
		out = append(out, x.(map[string]any))
	}
	return out
}

// walk pages through a query and returns every subject in order.
func walk(t *testing.T, e *env, key, query string) []string {
	t.Helper()
	var subjects []string
	cursor := ""
	for page := 0; page < 1000; page++ {
		q := query
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		r := e.do(t, "GET", "/v1/products/search?"+q, key, "")
		checkEnvelope(t, r)
		if r.status != 200 {
			t.Fatalf("page %d: %d %s", page, r.status, r.body)
		}
		for _, it := range items(r) {
			subjects = append(subjects, it["subject"].(string))
		}
		next, _ := ingesttest.Get(r.json, "meta.next_cursor").(string)
		if next == "" {
			return subjects
		}
		cursor = next
	}
	t.Fatal("paging did not end")
	return nil
}

func TestSearch(t *testing.T) {
	e := newSearchEnv(t)
	full := ingesttest.KeyFull

	t.Run("errors", func(t *testing.T) {
		for _, c := range []struct{ query, code string }{
			{"manufacturer=acme&brand=x", "UNSUPPORTED_FILTER"},
			{"category=food", "UNSUPPORTED_FILTER"},
			{"market=DE&manufacturer=acme", "UNSUPPORTED_FILTER"},
			{"manufacturer=acme&offset=20", "INVALID_FILTER"},
			{"colour=red", "INVALID_FILTER"},
			{"manufacturer=acme&manufacturer=zeta", "INVALID_FILTER"},
			{"manufacturer=", "INVALID_FILTER"},
			{"manufacturer=" + strings.Repeat("a", 201), "INVALID_FILTER"},
			{"trust_level_min=L9", "INVALID_FILTER"},
			{"has_passport=yes", "INVALID_FILTER"},
			{"updated_since=yesterday", "INVALID_FILTER"},
			{"limit=0", "INVALID_FILTER"},
			{"limit=101", "INVALID_FILTER"},
			{"limit=ten", "INVALID_FILTER"},
			{"sort=price", "INVALID_SORT"},
			{"sort=relevance", "INVALID_SORT"},
			{"cursor=", "INVALID_CURSOR"},
			{"cursor=not-a-cursor", "INVALID_CURSOR"},
			{"manufacturer=acme&cursor=eyJxIjoiIn0AAAAAAAAAAAAAAAAAAAAA", "INVALID_CURSOR"},
		} {
			r := e.do(t, "GET", "/v1/products/search?"+c.query, full, "")
			checkEnvelope(t, r)
			if r.status != 400 || r.json["code"] != c.code {
				t.Errorf("%s: %d %v, want 400 %s", c.query, r.status, r.json["code"], c.code)
			}
		}
		if r := e.do(t, "GET", "/v1/products/search?manufacturer=acme", ingesttest.KeyReadOnly, ""); r.status != 403 {
			t.Errorf("without products:search: %d", r.status)
		}
	})

	t.Run("relevance", func(t *testing.T) {
		for _, c := range []struct{ query, first string }{
			{"manufacturer=acme%20foods", "Acme Foods Inc."},
			{"manufacturer=ACME%20FOODS%20INC", "Acme Foods Inc."},
			{"manufacturer=muller%20milch", "Müller Milch GmbH"},
			{"manufacturer=mueller%20dairy", "Mueller Dairy Ltd"},
			{"manufacturer=nordic%20fsh", "Nordic Fish AB"},
			{"manufacturer=zeta%20pharma%20sa", "Zeta Pharma S.A."},
			{"manufacturer=omega%20elecronics", "Omega Electronics Corp"},
		} {
			r := e.do(t, "GET", "/v1/products/search?"+c.query, full, "")
			its := items(r)
			if r.status != 200 || len(its) == 0 {
				t.Errorf("%s: %d %s", c.query, r.status, r.body)
				continue
			}
			if its[0]["manufacturer"] != c.first {
				t.Errorf("%s: first is %v, want %s", c.query, its[0]["manufacturer"], c.first)
			}
			for i := 1; i < len(its); i++ {
				if its[i]["score"].(float64) > its[i-1]["score"].(float64) {
					t.Errorf("%s: scores not descending at %d", c.query, i)
				}
			}
		}
		r := e.do(t, "GET", "/v1/products/search?manufacturer=xylophone%20quartet", full, "")
		if r.status != 200 || r.json["status"] != "not_found" || len(items(r)) != 0 || ingesttest.Get(r.json, "data.items") == nil {
			t.Errorf("no match: %d %s", r.status, r.body)
		}
		if _, ok := ingesttest.Get(r.json, "meta.next_cursor").(string); ok {
			t.Error("next_cursor on an empty result")
		}
	})

	t.Run("filters", func(t *testing.T) {
		r := e.do(t, "GET", "/v1/products/search?trust_level_min=L4&limit=100", full, "")
		for _, it := range items(r) {
			if tl := it["trust_level"].(string); tl != "L4" && tl != "L5" {
				t.Errorf("trust_level_min=L4 gave %s", tl)
			}
		}
		if n := len(items(r)); n != searchProducts/3 {
			t.Errorf("trust_level_min=L4: %d items, want %d", n, searchProducts/3)
		}
		for _, hp := range []string{"true", "false"} {
			r := e.do(t, "GET", "/v1/products/search?has_passport="+hp+"&limit=100", full, "")
			for _, it := range items(r) {
				if fmtBool(it["has_passport"]) != hp {
					t.Errorf("has_passport=%s gave %v", hp, it["has_passport"])
				}
			}
		}
		since := "2025-01-02T00:00:00Z"
		got := walk(t, e, full, "updated_since="+since+"&limit=9")
		r = e.do(t, "GET", "/v1/products/search?updated_since="+since+"&limit=100", full, "")
		for _, it := range items(r) {
			ts, _ := time.Parse(time.RFC3339, it["updated_at"].(string))
			if ts.Before(time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC)) {
				t.Errorf("updated_since gave %v", it["updated_at"])
			}
		}
		if want := searchProducts - 48; len(got) != want {
			t.Errorf("updated_since: %d items, want %d", len(got), want)
		}
	})

	t.Run("paging", func(t *testing.T) {
		for _, q := range []string{"sort=updated_at", "manufacturer=acme%20foods", "manufacturer=nordic&sort=updated_at", "has_passport=true&sort=updated_at"} {
			all := walk(t, e, full, q+"&limit=100")
			paged := walk(t, e, full, q+"&limit=7")
			if strings.Join(all, ",") != strings.Join(paged, ",") {
				t.Errorf("%s: paging by 7 gives another sequence than one page:\n%v\n%v", q, paged, all)
			}
			seen := map[string]bool{}
			for _, s := range paged {
				if seen[s] {
					t.Errorf("%s: %s repeated", q, s)
				}
				seen[s] = true
			}
			if len(all) == 0 {
				t.Errorf("%s: no results", q)
			}
		}
		// Newest first, ties by subject.
		all := walk(t, e, full, "limit=100")
		if len(all) != searchProducts {
			t.Fatalf("all products: %d, want %d", len(all), searchProducts)
		}
		if all[0] != "internal_sku:P-0118" || all[1] != "internal_sku:P-0119" {
			t.Errorf("updated_at order starts %v", all[:2])
		}
	})

	t.Run("cursor binding", func(t *testing.T) {
		r := e.do(t, "GET", "/v1/products/search?manufacturer=acme&limit=2", full, "")
		cur, _ := ingesttest.Get(r.json, "meta.next_cursor").(string)
		if cur == "" {
			t.Fatal("no next_cursor")
		}
		ok := e.do(t, "GET", "/v1/products/search?manufacturer=acme&limit=5&cursor="+url.QueryEscape(cur), full, "")
		if ok.status != 200 {
			t.Fatalf("same query, other limit: %d %s", ok.status, ok.body)
		}
		tampered := []byte(cur)
		tampered[len(tampered)/2] ^= 1
		for _, c := range []struct{ name, query, key string }{
			{"tampered", "manufacturer=acme&cursor=" + url.QueryEscape(string(tampered)), full},
			{"other query", "manufacturer=zeta&cursor=" + url.QueryEscape(cur), full},
			{"other filter", "manufacturer=acme&has_passport=true&cursor=" + url.QueryEscape(cur), full},
			{"other tenant", "manufacturer=acme&cursor=" + url.QueryEscape(cur), ingesttest.KeyAcme},
		} {
			r := e.do(t, "GET", "/v1/products/search?"+c.query, c.key, "")
			if r.status != 400 || r.json["code"] != "INVALID_CURSOR" {
				t.Errorf("%s: %d %v", c.name, r.status, r.json["code"])
			}
		}
		// A cursor from another snapshot of the same data.
		other := newSearchEnv(t)
		r = other.do(t, "GET", "/v1/products/search?manufacturer=acme&cursor="+url.QueryEscape(cur), full, "")
		if r.status != 400 || r.json["code"] != "INVALID_CURSOR" {
			t.Errorf("other snapshot: %d %v", r.status, r.json["code"])
		}
	})

	t.Run("tenant", func(t *testing.T) {
		r := e.do(t, "GET", "/v1/products/search?manufacturer=acme%20secret%20labs", full, "")
		for _, it := range items(r) {
			if it["subject"] == "internal_sku:SECRET-1" {
				t.Error("another tenant found a private product")
			}
		}
		r = e.do(t, "GET", "/v1/products/search?manufacturer=acme%20secret%20labs", ingesttest.KeyAcme, "")
		its := items(r)
		if len(its) == 0 || its[0]["subject"] != "internal_sku:SECRET-1" {
			t.Errorf("owner does not find its private product first: %s", r.body)
		}
	})
}

func fmtBool(v any) string {
	if b, ok := v.(bool); ok && b {
		return "true"
	}
	return "false"
}
