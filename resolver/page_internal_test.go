package resolver

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/productdata/pds/domain"
)

// A passport page links a document only by an http or https URL: one of
// another scheme, which a snapshot may hold from a build that took it, is
// left out of the page (and of the linkset, which links the same).
func TestPassportPageLinksOnlyWebURLs(t *testing.T) {
	urls := []string{"https://registry.example/p/1.json", "HTTP://registry.example/p/2", "javascript:alert(1)",
		"JavaScript:alert(1)", "data:text/html,x", "//registry.example/p/3", "/p/4", "vbscript:x", "ftp://registry.example/p/5"}
	var evs []evidenceView
	for i, u := range urls {
		evs = append(evs, evidenceViewOf(domain.EvidenceLink{Document: domain.Document{ID: "d" + string(rune('a'+i)), URL: &u}}))
	}
	page := passportPage{pageBase: pageBase{Title: "t", LinksetURL: "https://pds.example/01/09520123456788?linkType=linkset"},
		Groups: []groupView{{ID: "g", Name: "g", Claims: []claimView{{ID: "c1", Evidence: evs}}}}}
	var buf bytes.Buffer
	if err := pageTemplates.ExecuteTemplate(&buf, "passport", page); err != nil {
		t.Fatal(err)
	}
	var linked []string
	for _, m := range regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(buf.String(), -1) {
		href := m[1]
		if strings.HasPrefix(href, "#") || href == "data:," || strings.HasPrefix(href, "https://pds.example/") {
			continue // anchors, the empty icon, the page's own links
		}
		linked = append(linked, href)
	}
	if want := []string{"https://registry.example/p/1.json", "HTTP://registry.example/p/2"}; strings.Join(linked, " ") != strings.Join(want, " ") {
		t.Errorf("documents linked: %q, want %q", linked, want)
	}
	for _, bad := range []string{"javascript", "JavaScript", "data:text", "ZgotmplZ", "vbscript", "ftp:", "/p/4", "//registry.example/p/3"} {
		if strings.Contains(buf.String(), bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
}
