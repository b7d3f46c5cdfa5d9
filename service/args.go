package service

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/productdata/pds/domain"
)

// DecodeArgs decodes a JSON object of operation arguments into v (a pointer
// to one of the *Args types); both transports decode JSON arguments with it. Anything but a JSON object, a member of the
// wrong type, and (when strict) an unknown member is INVALID_REQUEST.
func DecodeArgs(raw []byte, v any, strict bool) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return domain.Errorf(domain.CodeInvalidRequest, "the body is empty; send a JSON object")
	}
	if raw[0] != '{' {
		return domain.Errorf(domain.CodeInvalidRequest, "the body is not a JSON object")
	}
	if ra, ok := v.(*ResolveArgs); ok && scanResolve(raw, ra) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		var se *json.SyntaxError
		var de *domain.Error
		switch {
		case errors.As(err, &de): // from an Args type's own UnmarshalJSON
			return de
		case errors.As(err, &te) && te.Field != "":
			return domain.Errorf(domain.CodeInvalidRequest, "member '%s' has the wrong type: %s where %s is expected", te.Field, te.Value, jsonKind(te.Type.String()))
		case errors.As(err, &se):
			return domain.Errorf(domain.CodeInvalidRequest, "the body is not valid JSON (offset %d)", se.Offset)
		default:
			return domain.Errorf(domain.CodeInvalidRequest, "the body could not be decoded: %s", err.Error())
		}
	}
	if _, err := dec.Token(); err != io.EOF {
		return domain.Errorf(domain.CodeInvalidRequest, "the body holds more than one JSON value")
	}
	return nil
}

func jsonKind(goType string) string {
	switch goType {
	case "string", "*string":
		return "a string"
	case "[]string", "*[]string":
		return "an array of strings"
	}
	return goType
}

// scanResolve reads the usual body of a resolve call, {"identifiers":[...]}
// of plain strings, without encoding/json: it is most of a call's decoding
// cost, and one conversion of the body to a string gives every identifier
// without an allocation of its own. It reports false, having set nothing,
// for anything else (another member, an escape or a byte outside printable
// ASCII in a string, an empty array, a syntax error), which DecodeArgs then
// decodes, and refuses, the general way. Written by hand because the shape
// is fixed and small; a JSON library would still allocate per string.
func scanResolve(raw []byte, a *ResolveArgs) bool {
	const member = `"identifiers"`
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return false
	}
	i = skipSpace(raw, i+1)
	if !bytes.HasPrefix(raw[i:], []byte(member)) {
		return false
	}
	i = skipSpace(raw, i+len(member))
	if i >= len(raw) || raw[i] != ':' {
		return false
	}
	i = skipSpace(raw, i+1)
	if i >= len(raw) || raw[i] != '[' {
		return false
	}
	// The identifiers are slices of one string holding the whole body.
	s := string(raw)
	n := bytes.Count(raw[i:], []byte{','}) + 1
	ids := make([]string, 0, min(n, MaxBatch+1))
	for {
		i = skipSpace(raw, i+1)
		if i >= len(raw) || raw[i] != '"' {
			return false
		}
		start := i + 1
		for i = start; i < len(raw) && raw[i] != '"'; i++ {
			if c := raw[i]; c < 0x20 || c >= 0x7f || c == '\\' {
				return false
			}
		}
		if i >= len(raw) {
			return false
		}
		ids = append(ids, s[start:i])
		i = skipSpace(raw, i+1)
		if i >= len(raw) {
			return false
		}
		if raw[i] == ']' {
			break
		}
		if raw[i] != ',' {
			return false
		}
	}
	i = skipSpace(raw, i+1)
	if i >= len(raw) || raw[i] != '}' || skipSpace(raw, i+1) != len(raw) {
		return false
	}
	a.Identifiers = &ids
	return true
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}
