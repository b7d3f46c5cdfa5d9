package service

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"slices"
	"strings"

	"github.com/productdata/pds/domain"
)

// DecodeArgs decodes a JSON object of operation arguments into v (a pointer
// to one of the *Args types); both transports decode JSON arguments with it,
// so a REST body and an MCP tool's arguments are read alike. Anything but a
// JSON object, a member of the wrong type, and a member the operation does
// not take (names are matched exactly, case included) is INVALID_REQUEST,
// whose detail names the member in pds's words, never the Go decoder's. An
// Args type with its own UnmarshalJSON (SearchArgs) judges its members
// itself.
func DecodeArgs(raw []byte, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return domain.Errorf(domain.CodeInvalidRequest, "the body is empty; send a JSON object")
	}
	if raw[0] != '{' {
		return domain.Errorf(domain.CodeInvalidRequest, "the body is not a JSON object")
	}
	if ra, ok := v.(*ResolveArgs); ok && scanResolve(raw, ra) {
		return nil // the usual resolve body, read without encoding/json
	}
	if _, own := v.(json.Unmarshaler); !own {
		if err := checkMembers(raw, v); err != nil {
			return err
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
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
			return domain.Errorf(domain.CodeInvalidRequest, "the body is not a JSON object of the operation's members")
		}
	}
	if _, err := dec.Token(); err != io.EOF {
		return domain.Errorf(domain.CodeInvalidRequest, "the body holds more than one JSON value")
	}
	return nil
}

// checkMembers refuses a member of the JSON object raw that the struct v
// points to has no field for.
func checkMembers(raw []byte, v any) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return domain.Errorf(domain.CodeInvalidRequest, "the body is not valid JSON (offset %d)", se.Offset)
		}
		return domain.Errorf(domain.CodeInvalidRequest, "the body is not a JSON object")
	}
	known := memberNames(v)
	var unknown []string
	for name := range m {
		if !slices.Contains(known, name) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	takes := "no members"
	if len(known) > 0 {
		takes = "only '" + strings.Join(known, "', '") + "'"
	}
	noun := "member"
	if len(unknown) > 1 {
		noun = "members"
	}
	return domain.Errorf(domain.CodeInvalidRequest, "unknown %s '%s': this operation takes %s", noun, clipAt(strings.Join(unknown, "', '"), 200), takes)
}

// memberNames lists the JSON member names of the struct v points to, in
// field order.
func memberNames(v any) []string {
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var names []string
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return names
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
