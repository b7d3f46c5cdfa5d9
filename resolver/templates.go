package resolver

import (
	"embed"
	"html/template"

	"github.com/productdata/pds/http/httpwire"
)

//go:embed templates/*.html
var templateFiles embed.FS

// pageTemplates are the resolver's pages, parsed once.
var pageTemplates = template.Must(template.ParseFS(templateFiles, "templates/*.html"))

// problemPage is an error as a page.
type problemPage struct {
	pageBase
	Problem httpwire.Problem
}
