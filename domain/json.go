package domain

import (
	"bytes"
	"encoding/json"
)

// Marshal is json.Marshal without HTML escaping: <, > and & are written as
// themselves, not as \u003c, \u003e and \u0026 (JSON needs no such escape,
// and pds's answers are never embedded in HTML). Every JSON answer pds
// writes, REST, MCP and the views ingest precomputes, is encoded with it;
// the bytes are otherwise those of json.Marshal.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return b[:len(b)-1], nil // Encode ends the value with a newline
}
