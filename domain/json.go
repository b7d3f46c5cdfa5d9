package domain

import (
	"bytes"
	"encoding/json"
	"sync"
	"unicode/utf8"
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
// the bytes are otherwise those of json.Marshal, except that they are always
// valid UTF-8: encoding/json turns bad bytes in a string into U+FFFD, but
// copies a json.RawMessage as it is, so Marshal replaces each byte of a raw
// value that is not UTF-8 with U+FFFD too, written \ufffd as encoding/json
// writes it. The result is a new slice the caller owns.
func Marshal(v any) ([]byte, error) { return AppendMarshal(nil, v) }

// AppendMarshal appends v, as Marshal encodes it, to dst. On error dst is
// returned unchanged.
func AppendMarshal(dst []byte, v any) ([]byte, error) {
	m := marshalers.Get().(*marshaler)
	m.buf.Reset()
	err := m.enc.Encode(v)
	if err == nil {
		b := m.buf.Bytes()
		b = b[:len(b)-1] // Encode ends the value with a newline
		if utf8.Valid(b) {
			dst = append(dst, b...)
		} else {
			dst = appendValidUTF8(dst, b)
		}
	}
	if m.buf.Cap() <= maxPooledBuffer {
		marshalers.Put(m)
	}
	return dst, err
}

// appendValidUTF8 appends JSON text b to dst with each byte that is not
// part of a UTF-8 sequence written as \ufffd, the escape encoding/json writes
// for such a byte of a string. In JSON that was compacted (checked) by
// encoding/json such a byte can only be inside a string, where the escape
// is at home.
func appendValidUTF8(dst, b []byte) []byte {
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, `\ufffd`...)
		} else {
			dst = append(dst, b[:size]...)
		}
		b = b[size:]
	}
	return dst
}
