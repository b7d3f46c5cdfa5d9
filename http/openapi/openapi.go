// Package openapi holds the hand-written OpenAPI 3.1 description of the pds
// REST API (openapi.yaml), embedded in the binary and served by the REST
// transport at /v1/openapi.yaml and, converted once, /v1/openapi.json. Tests
// keep it true: every response the REST and MCP tests receive is validated
// against it (internal/fixture).
package openapi

import (
	_ "embed"
	"sync"

	"github.com/oasdiff/yaml"
)

// YAML is the document as written.
//
//go:embed openapi.yaml
var YAML []byte

var asJSON = sync.OnceValues(func() ([]byte, error) { return yaml.YAMLToJSON(YAML) })

// JSON returns the document converted to JSON.
func JSON() ([]byte, error) { return asJSON() }
