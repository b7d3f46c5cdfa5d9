// Package openapi holds the hand-written OpenAPI 3.1 description of the pds
// REST API (openapi.yaml), embedded in the binary and served by the REST
// transport at /v1/openapi.yaml and, converted once, /v1/openapi.json. Tests
// keep it true: every response the REST and MCP tests receive is validated
// against it (ingest/ingesttest).
//
// It owns the description and its conversion only: it knows nothing of the
// handlers it describes, which the tests hold to it.
package openapi
