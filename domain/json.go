package domain

import (
	"bytes"
	"encoding/json"
	"sync"
)

// marshaler is an encoder with its buffer, kept in marshalers between calls
// so that a Marshal does not allocate an encoder and regrow a buffer from
// nothing each time (ingest marshals millions of claims).
type marshaler struct {
	buf bytes.Buffer
	enc *json.Encoder
}

var marshalers = sync.Pool{New: func() any {
	m := &marshaler{}
	m.enc = json.NewEncoder(&m.buf)
	m.enc.SetEscapeHTML(false)
	return m
}}

// maxPooledBuffer is the largest buffer returned to marshalers; a rare large
// answer's buffer is left to the garbage collector.
const maxPooledBuffer = 64 << 10

// Marshal is json.Marshal without HTML escaping: <, > and & are written as
// themselves, not as \u003c, \u003e and \u0026 (JSON needs no such escape,
// and pds's answers are never embedded in HTML). Every JSON answer pds
// writes, REST, MCP and the views ingest precomputes, is encoded with it;
// the bytes are otherwise those of json.Marshal. The result is a new slice
// the caller owns.
func Marshal(v any) ([]byte, error) { return AppendMarshal(nil, v) }

// AppendMarshal appends v, as Marshal encodes it, to dst. On error dst is
// returned unchanged.
func AppendMarshal(dst []byte, v any) ([]byte, error) {
	m := marshalers.Get().(*marshaler)
	m.buf.Reset()
	err := m.enc.Encode(v)
	if err == nil {
		b := m.buf.Bytes()
		dst = append(dst, b[:len(b)-1]...) // Encode ends the value with a newline
	}
	if m.buf.Cap() <= maxPooledBuffer {
		marshalers.Put(m)
	}
	return dst, err
}
