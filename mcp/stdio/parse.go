package stdio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// JSON-RPC 2.0's error codes for a message that cannot be read.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// message is a line read as a valid JSON-RPC message: a request (id set), a
// notification (no id) or a response (response set).
type message struct {
	id       json.RawMessage // as written; nil for a notification
	method   string
	params   json.RawMessage // nil when absent
	response bool
	result   json.RawMessage
	err      json.RawMessage // the error member of a response
}

// lineError is the JSON-RPC error a line is answered with. id is the
// request's id as written when it was read and valid, else nil (null).
type lineError struct {
	code    int64
	message string
	id      json.RawMessage
}

func parseErr(format string, args ...any) *lineError {
	return &lineError{code: codeParseError, message: "parse error: " + fmt.Sprintf(format, args...)}
}

func invalid(id json.RawMessage, format string, args ...any) *lineError {
	return &lineError{code: codeInvalidRequest, message: "invalid request: " + fmt.Sprintf(format, args...), id: id}
}

// byteOrderMark is the UTF-8 encoding of U+FEFF.
const byteOrderMark = "\xef\xbb\xbf"

// parseLine reads one line (without its line end) as a JSON-RPC 2.0
// message, as the package comment says.
func parseLine(line []byte) (message, *lineError) {
	if bytes.HasPrefix(line, []byte(byteOrderMark)) {
		return message{}, parseErr("the line starts with a UTF-8 byte order mark (bytes EF BB BF); send each message as JSON text without one")
	}
	if i := invalidUTF8At(line); i >= 0 {
		return message{}, parseErr("the line is not UTF-8 (byte %d is not part of a UTF-8 sequence); JSON-RPC messages are UTF-8", i+1)
	}
	var raw json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		return message{}, parseErr("the line is not one JSON value: %s", jsonProblem(err))
	}
	switch raw[0] {
	case '{':
	case '[':
		return message{}, invalid(nil, "a JSON array is a batch, and MCP has no batches (removed in revision 2025-06-18); send one request a line")
	default:
		return message{}, invalid(nil, "the message is %s, not a JSON-RPC request object", kindOf(raw))
	}
	members, err := objectMembers(raw)
	if err != nil {
		return message{}, invalid(nil, "%s", err.Error())
	}
	id, hasID := members["id"]
	var idErr *lineError
	if hasID {
		if idErr = checkID(id); idErr != nil {
			id = nil
		}
	}
	if v, ok := members["jsonrpc"]; !ok || v[0] != '"' || stringValue(v) != "2.0" {
		return message{}, invalid(id, `jsonrpc must be the string "2.0"%s`, found(v, ok))
	}
	if idErr != nil {
		return message{}, idErr
	}
	m := message{id: id}
	if p, ok := members["params"]; ok {
		if p[0] != '{' && p[0] != '[' {
			return message{}, invalid(id, "params must be an object (or an array)%s", found(p, true))
		}
		m.params = p
	}
	if method, ok := members["method"]; ok {
		if method[0] != '"' {
			return message{}, invalid(id, "method must be a string%s", found(method, true))
		}
		m.method = stringValue(method)
		return m, nil
	}
	result, hasResult := members["result"]
	rerr, hasError := members["error"]
	if !hasID || hasResult == hasError || hasError && rerr[0] != '{' {
		return message{}, invalid(id, "the message has no method: a request needs a method (and a response an id and one of result and error)")
	}
	m.response, m.result, m.err = true, result, rerr
	return m, nil
}

// checkID checks a request id: MCP takes a string or a number (JSON-RPC 2.0
// also null, which MCP forbids).
func checkID(id json.RawMessage) *lineError {
	switch c := id[0]; {
	case c == '"', c == '-', c >= '0' && c <= '9':
		return nil
	case string(id) == "null":
		return invalid(nil, "id is null; MCP requests need a string or number id (a notification has no id member)")
	default:
		return invalid(nil, "id must be a string or a number%s", found(id, true))
	}
}

// objectMembers returns the members of a JSON object (one that
// json.Unmarshal read) by their exact names, each value as written. A member
// the message is made of (jsonrpc, id, method, params, result, error) that
// appears twice is an error: which of the two would count is not clear.
func objectMembers(obj json.RawMessage) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil { // {
		return nil, err
	}
	members := map[string]json.RawMessage{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		switch name {
		case "jsonrpc", "id", "method", "params", "result", "error":
			if _, dup := members[name]; dup {
				return nil, fmt.Errorf("the member %q appears twice", name)
			}
			members[name] = v
		}
	}
	return members, nil
}

// stringValue is the value of a JSON string as written ("" for anything
// else).
func stringValue(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) != nil {
		return ""
	}
	return s
}

// found says what a member held, for a message: ` (found 1.0)`, or ` (it is
// missing)`.
func found(v json.RawMessage, present bool) string {
	if !present {
		return " (it is missing)"
	}
	return " (found " + shorten(v) + ")"
}

// shorten is a value as written, cut after 40 bytes, for a message.
func shorten(v json.RawMessage) string {
	s := string(v)
	if len(s) > 40 {
		s = s[:40]
		for len(s) > 0 && !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
		s += "…"
	}
	return s
}

// kindOf names the JSON type of a value.
func kindOf(v json.RawMessage) string {
	switch v[0] {
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '[':
		return "an array"
	case '{':
		return "an object"
	}
	return "a number"
}

// invalidUTF8At returns the offset of the first byte of b that is not part
// of a UTF-8 sequence, or -1.
func invalidUTF8At(b []byte) int {
	if utf8.Valid(b) {
		return -1
	}
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

// jsonProblem says what encoding/json found wrong with a line.
func jsonProblem(err error) string {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("%s (at byte %d)", se.Error(), se.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the line ends inside a value"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}
