package httpwire_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/http/httpwire"
)

// Every Problem's type is an absolute URI naming docs/problems.md with the
// code's anchor, the page has that section (GitHub's anchor of a heading is
// its text in lower case), and docs_url is set to the same page.
func TestProblemTypesPointAtDocs(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "problems.md"))
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^#{2,4} ([A-Z_]+)\s*$`).FindAllStringSubmatch(string(page), -1) {
		anchors[strings.ToLower(m[1])] = true
	}
	for _, code := range domain.Codes() {
		p := httpwire.NewProblem(&domain.Error{Code: code}, "req_x")
		prefix := "https://github.com/productdata/pds/blob/main/docs/problems.md#"
		anchor, ok := strings.CutPrefix(p.Type, prefix)
		if !ok {
			t.Errorf("%s: type %q is not on %s", code, p.Type, prefix)
			continue
		}
		if !anchors[anchor] {
			t.Errorf("%s: docs/problems.md has no section %q", code, anchor)
		}
		if p.DocsURL != p.Type {
			t.Errorf("%s: docs_url %q, want %q", code, p.DocsURL, p.Type)
		}
		if !strings.Contains(string(page), "["+code+"](#"+anchor+")") {
			t.Errorf("%s: the table of docs/problems.md does not list it", code)
		}
	}
}
