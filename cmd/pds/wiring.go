package main

import (
	"log/slog"
	"net/http"

	"github.com/productdata/pds/ingest"
	"github.com/productdata/pds/service"
)

// openIndexWriter builds the search index during ingest.
var openIndexWriter func(dir string) (ingest.IndexWriter, error)

// openSearcher opens a snapshot's search index.
var openSearcher func(dir string) (service.Searcher, error)

// newMCP returns the MCP endpoint's handler.
func newMCP(svc *service.Service, log *slog.Logger, allowedOrigins []string) http.Handler { return nil }
