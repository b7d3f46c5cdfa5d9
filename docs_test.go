package pds_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestDocsLinksIntoOpenAPIPointAtTheirPath holds the links of README.md and
// docs/*.md into the OpenAPI document to the operations they name: a link
// like [`GET /v1/whoami`](http/openapi/openapi.yaml#L54) must land on the line
// where that path is declared, so a change to the document that moves a path
// fails here until the link is moved with it.
func TestDocsLinksIntoOpenAPIPointAtTheirPath(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("http", "openapi", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(doc), "\n")
	files, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{"README.md"}, files...)
	link := regexp.MustCompile(`\[([^\]]*)\]\((?:\.\./)?http/openapi/openapi\.yaml#L(\d+)\)`)
	path := regexp.MustCompile(`/[A-Za-z0-9_./{}-]*`)
	found := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			found++
			text, n := m[1], m[2]
			line, _ := strconv.Atoi(n)
			p := path.FindString(text)
			if p == "" {
				t.Errorf("%s: the link %q names no path", f, m[0])
				continue
			}
			if line < 1 || line > len(lines) || strings.TrimSpace(lines[line-1]) != p+":" {
				at := "past the end"
				if line >= 1 && line <= len(lines) {
					at = strconv.Quote(strings.TrimSpace(lines[line-1]))
				}
				want := ""
				for i, l := range lines {
					if strings.TrimSpace(l) == p+":" && strings.HasPrefix(l, "  /") {
						want = "; " + p + " is at line " + strconv.Itoa(i+1)
					}
				}
				t.Errorf("%s: %s points at line %d of http/openapi/openapi.yaml, which is %s%s", f, m[0], line, at, want)
			}
		}
	}
	if found == 0 {
		t.Fatal("README.md links no operation of http/openapi/openapi.yaml")
	}
}
