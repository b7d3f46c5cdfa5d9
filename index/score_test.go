package index

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// A manufacturer's whole name with a typo ranks, and scores, above a name
// that merely starts with what was typed; each band keeps its place: exact
// 1, the name with typos above 0.9, a prefix in (0.5, 0.9), the rest at
// most 0.5.
func TestTypoOfWholeNameAbovePrefix(t *testing.T) {
	names := []string{"Bosch GmbH", "Boshart Industries", "Evergreen Snacks SAS", "Evergren Snackbar Holdings", "Siemens AG", "Siemens Healthineers AG"}
	var docs []Doc
	for i, n := range names {
		docs = append(docs, Doc{Subject: fmt.Sprintf("gtin:%014d", i+1), Manufacturer: n, TrustLevel: 3,
			UpdatedAt: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)})
	}
	ix := buildTestIndex(t, docs, defaultBlockSize)
	cases := []struct {
		query, first, second string
		firstMin, secondMax  float64
	}{
		{"bosh", "Bosch GmbH", "Boshart Industries", 0.9, 0.9},
		{"evergren snacks", "Evergreen Snacks SAS", "Evergren Snackbar Holdings", 0.9, 0.9},
		// A prefix that is not the query's own name with a typo stays a prefix.
		{"siemens h", "Siemens Healthineers AG", "Siemens AG", 0.5, 0.5},
	}
	for _, c := range cases {
		page, err := ix.Search(context.Background(), Query{Manufacturer: c.query, TrustLevelMin: -1, Sort: SortRelevance, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Hits) < 2 {
			t.Fatalf("%s: %d hits", c.query, len(page.Hits))
		}
		first, second := page.Hits[0], page.Hits[1]
		if first.Manufacturer != c.first || second.Manufacturer != c.second {
			t.Errorf("%s: %s (%v), %s (%v); want %s, then %s", c.query, first.Manufacturer, first.Score, second.Manufacturer, second.Score, c.first, c.second)
		}
		if first.Score <= c.firstMin || second.Score > c.secondMax || first.Score <= second.Score {
			t.Errorf("%s: scores %v and %v", c.query, first.Score, second.Score)
		}
	}
}
