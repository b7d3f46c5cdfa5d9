package main

import (
	"log/slog"
	"net/http"

	"github.com/productdata/pds/mcp"
	"github.com/productdata/pds/service"
)

// newMCP returns the MCP endpoint's handler.
func newMCP(svc *service.Service, log *slog.Logger, allowedOrigins []string) http.Handler {
	return mcp.New(svc, log, allowedOrigins)
}
