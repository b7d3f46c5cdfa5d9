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
