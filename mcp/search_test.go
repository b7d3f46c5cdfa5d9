package mcp_test

import (
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/productdata/pds/ingest/ingesttest"
)

// A date-only updated_since (2025-01-04) is its midnight UTC, over REST and
// MCP alike: the same items as 2025-01-04T00:00:00Z, every one updated at or
// after it, and fewer than without the filter. A value that is neither a
// date-time nor a date is INVALID_FILTER naming both forms.
func TestSearchReadsADateAsMidnightUTC(t *testing.T) {
	e := newEnv(t)
	subjects := func(env map[string]any) []string {
		var out []string
		items, _ := ingesttest.Get(env, "data.items").([]any)
		for _, it := range items {
			out = append(out, ingesttest.Get(it, "subject").(string))
			if at := ingesttest.Get(it, "updated_at").(string); at < "2025-01-04T00:00:00Z" {
				t.Errorf("%v updated at %s, before the date", ingesttest.Get(it, "subject"), at)
			}
		}
		return out
	}
	rest := func(since string) map[string]any {
		t.Helper()
		q := ""
		if since != "" {
			q = "?updated_since=" + url.QueryEscape(since)
		}
		r := e.do(t, "GET", "/v1/products/search"+q, ingesttest.KeyFull, "", nil)
		if r.status != 200 {
			t.Fatalf("search%s: %d %s", q, r.status, r.body)
		}
		return r.json
	}
	all, _ := ingesttest.Get(rest(""), "data.items").([]any)
	date := subjects(rest("2025-01-04"))
	instant := subjects(rest("2025-01-04T00:00:00Z"))
	tool := subjects(callTool(t, e, "search_products", map[string]any{"updated_since": "2025-01-04"}))
	if len(date) == 0 || len(date) >= len(all) || !reflect.DeepEqual(date, instant) || !reflect.DeepEqual(tool, date) {
		t.Errorf("REST date %v, REST date-time %v, MCP date %v, of %d products", date, instant, tool, len(all))
	}
	for _, bad := range []string{"2025-1-4", "2025-01-04T00:00", "04.01.2025"} {
		r := e.do(t, "GET", "/v1/products/search?updated_since="+url.QueryEscape(bad), ingesttest.KeyFull, "", nil)
		checkProblem(t, r, "INVALID_FILTER")
		if d, _ := r.json["detail"].(string); !strings.Contains(d, "or a date such as 2025-01-31") {
			t.Errorf("updated_since %q: detail %q", bad, d)
		}
	}
}
