package service

import (
	"reflect"
	"testing"

	"github.com/productdata/pds/domain"
)

// A coverage union's remembered absence of a subject is what the subject's
// own coverage says, for the first subject of a class and for those after
// it, whoever the tenant.
func TestAbsenceMatchesCoverage(t *testing.T) {
	off := false
	sources := []*domain.Source{
		{ID: "a", Covers: &domain.Covers{Namespaces: []string{"gtin"}, GTINPrefixes: []string{"0952", "09510"}}},
		{ID: "b", Covers: &domain.Covers{Namespaces: []string{"internal_sku"}}, Tenant: "acme"},
		{ID: "c", Covers: &domain.Covers{Namespaces: []string{"gtin"}, GTINPrefixes: []string{"0953"}}, Enabled: &off},
		{ID: "d", Covers: &domain.Covers{Namespaces: []string{"gtin"}}},
		{ID: "e"},
	}
	subjects := []string{"gtin:09520000000028", "gtin:09520000000011", "gtin:09510000000104", "gtin:09519000000000",
		"gtin:09530000000000", "gtin:00012345678905", "gtin:0951", "gtin:09510", "internal_sku:X-1", "internal_sku:Y",
		"gln:9520000000028", "nonamespace", "gtin:09520000000028", "internal_sku:X-1"}
	for _, set := range [][]*domain.Source{sources, {sources[0], sources[1], sources[2], sources[4]}} {
		snap := &Snapshot{sources: set, prefixLen: 5}
		for _, tenant := range []string{"", "acme", "other"} {
			u := newCoverageUnion(snap, tenant)
			for round := 0; round < 2; round++ {
				for _, s := range subjects {
					status, reason := u.absence(s)
					wantStatus, wantReason := domain.CoverageOf(s, tenant, set).Absence()
					if status != wantStatus || reason != wantReason {
						t.Errorf("tenant %q, %s: %s %s, want %s %s", tenant, s, status, reason, wantStatus, wantReason)
					}
				}
			}
		}
	}
}

// A coverage union of subjects holds every source that covers one of them
// and that the tenant may see, as each subject's own coverage says.
func TestCoverageUnionMatchesCoverage(t *testing.T) {
	off := false
	sources := []*domain.Source{
		{ID: "a", Covers: &domain.Covers{Namespaces: []string{"gtin"}, GTINPrefixes: []string{"0952", "09510"}}},
		{ID: "b", Covers: &domain.Covers{Namespaces: []string{"internal_sku"}}, Tenant: "acme"},
		{ID: "c", Covers: &domain.Covers{Namespaces: []string{"gtin"}, GTINPrefixes: []string{"0953"}}, Enabled: &off},
		{ID: "f", Covers: &domain.Covers{Namespaces: []string{"gln"}}},
		{ID: "g", Covers: &domain.Covers{Namespaces: []string{"gtin"}, GTINPrefixes: []string{"4"}}},
		{ID: "e"},
	}
	subjects := []string{"gtin:09520000000028", "gtin:09510000000104", "gtin:09519000000000", "gtin:09530000000000",
		"gtin:00012345678905", "gtin:0951", "internal_sku:X-1", "gln:9520000000028", "gtin:40000000000000", "nonamespace"}
	snap := &Snapshot{sources: sources, prefixLen: 5}
	for _, tenant := range []string{"", "acme"} {
		for n := range len(subjects) + 1 {
			u := newCoverageUnion(snap, tenant)
			want := domain.Coverage{SourcesConsulted: []string{}}
			seen := map[string]bool{}
			for _, s := range subjects[:n] {
				u.add(s)
				c := domain.CoverageOf(s, tenant, sources)
				for _, id := range c.SourcesConsulted {
					if !seen[id] {
						seen[id] = true
						want.SourcesConsulted = append(want.SourcesConsulted, id)
					}
				}
				for _, sk := range c.SourcesSkipped {
					if !seen[sk.ID] {
						seen[sk.ID] = true
						want.SourcesSkipped = append(want.SourcesSkipped, sk)
					}
				}
			}
			got := mergeCoverage([]*coverageUnion{u})
			wantAll := mergeCoverage([]*coverageUnion{{cov: want}})
			if !reflect.DeepEqual(got, wantAll) {
				t.Errorf("tenant %q, %d subjects: %+v, want %+v", tenant, n, got, wantAll)
			}
		}
	}
}
