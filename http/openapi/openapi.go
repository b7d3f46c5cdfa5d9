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
