package domain

import (
	"sort"
	"strings"
)

// CoversSubject reports whether s speaks for subject ("namespace:value"). gtin
// prefixes are prefixes of the 14-digit canonical GTIN; a source that lists
// gtin prefixes covers those GTINs even without naming the gtin namespace.
func (s *Source) CoversSubject(subject string) bool {
	if s.Covers == nil {
		return false
	}
	ns, value, ok := strings.Cut(subject, ":")
	if !ok {
		return false
	}
	named := false
	for _, n := range s.Covers.Namespaces {
		if n == ns {
			named = true
		}
	}
	if ns != "gtin" || len(s.Covers.GTINPrefixes) == 0 {
		return named
	}
	for _, p := range s.Covers.GTINPrefixes {
		if strings.HasPrefix(value, p) {
			return true
		}
	}
	return false
}

// CoverageOf says which of sources a caller of tenant would consult for
// subject: the enabled covering sources it may see, and the disabled ones as
// skipped. Sources another tenant owns are left out entirely.
func CoverageOf(subject, tenant string, sources []*Source) Coverage {
	cov := Coverage{SourcesConsulted: []string{}}
	for _, s := range sources {
		if !s.VisibleTo(tenant) || !s.CoversSubject(subject) {
			continue
		}
		if s.IsEnabled() {
			cov.SourcesConsulted = append(cov.SourcesConsulted, s.ID)
		} else {
			cov.SourcesSkipped = append(cov.SourcesSkipped, Skipped{ID: s.ID, Reason: SkipDisabled})
		}
	}
	sort.Strings(cov.SourcesConsulted)
	sort.Slice(cov.SourcesSkipped, func(i, j int) bool { return cov.SourcesSkipped[i].ID < cov.SourcesSkipped[j].ID })
	return cov
}

// Absence is the status and reason of a subject nothing is stored for: not
// found when an enabled source covering it was consulted, else unknown with
// NO_SOURCE.
func (c Coverage) Absence() (status, reason string) {
	if len(c.SourcesConsulted) > 0 {
		return StatusNotFound, ""
	}
	return StatusUnknown, ReasonNoSource
}
