package pds_test

import (
	"os"
	"os/exec"
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

// TestDesignMapsEveryPackage holds the package map of docs/design.md to the
// tree: every package of the module is named in it, and every name in it is
// a package.
func TestDesignMapsEveryPackage(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("docs", "design.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Packages\n")
	if !ok {
		t.Fatal("docs/design.md has no \"## Packages\" section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	mapped := map[string]bool{}
	name := regexp.MustCompile("`([^`]+)`")
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first := strings.SplitN(line, "|", 3)[1]
		for _, m := range name.FindAllStringSubmatch(first, -1) {
			mapped[m[1]] = true
		}
	}
	out, err := exec.Command("go", "list", "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p, "github.com/productdata/pds"), "/")
		if rel == "" {
			rel = "."
		}
		if !mapped[rel] {
			t.Errorf("package %s is not in docs/design.md's package map", rel)
		}
		delete(mapped, rel)
	}
	for p := range mapped {
		t.Errorf("docs/design.md's package map names %s, which is not a package", p)
	}
}
