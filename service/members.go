package service

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/productdata/pds/domain"
)

// Stored answers are JSON written at ingest. When an answer must say more
// than the stored one (how the input was read), its members are edited
// here: each member's value is kept byte for byte, in its order.

// member is one member of a JSON object, its value as written.
type member struct {
	key   string
	value json.RawMessage
}

var errNotObject = errors.New("not a JSON object")

// readMembers splits a JSON object into its members.
func readMembers(obj []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errNotObject
	}
	var ms []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		ms = append(ms, member{key: k, value: v})
	}
	return ms, nil
}

// appendMembers appends ms as object members, without braces.
func appendMembers(dst []byte, ms []member) []byte {
	for i, m := range ms {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, m.key)
		dst = append(dst, ':')
		dst = append(dst, m.value...)
	}
	return dst
}

// editBody edits the envelope members of a stored answer: data becomes
// setData(data), and ws follow the stored warnings.
func editBody(body []byte, setData func(json.RawMessage) (json.RawMessage, error), ws []domain.Warning) ([]byte, error) {
	obj := make([]byte, 0, len(body)+2)
	obj = append(append(append(obj, '{'), body...), '}')
	ms, err := readMembers(obj)
	if err != nil {
		return nil, fmt.Errorf("stored answer: %w", err)
	}
	haveWarnings := false
	for i := range ms {
		switch ms[i].key {
		case "data":
			if ms[i].value, err = setData(ms[i].value); err != nil {
				return nil, err
			}
		case "warnings":
			haveWarnings = true
			if len(ws) > 0 {
				var stored []domain.Warning
				if err := json.Unmarshal(ms[i].value, &stored); err != nil {
					return nil, fmt.Errorf("stored warnings: %w", err)
				}
				if ms[i].value, err = json.Marshal(append(stored, ws...)); err != nil {
					return nil, err
				}
			}
		}
	}
	if !haveWarnings && len(ws) > 0 {
		wj, err := json.Marshal(ws)
		if err != nil {
			return nil, err
		}
		ms = append(ms, member{key: "warnings", value: wj})
	}
	return appendMembers(make([]byte, 0, len(body)+256), ms), nil
}

// prependMember returns the JSON object obj with key: value as its first
// member.
func prependMember(obj json.RawMessage, key, value string) (json.RawMessage, error) {
	obj = bytes.TrimSpace(obj)
	if len(obj) < 2 || obj[0] != '{' {
		return nil, errNotObject
	}
	out := make([]byte, 0, len(obj)+len(key)+len(value)+8)
	out = append(out, '{')
	out = appendString(out, key)
	out = append(out, ':')
	out = appendString(out, value)
	if rest := bytes.TrimSpace(obj[1:]); len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, obj[1:]...), nil
}
