package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/productdata/pds/ingest/jsonutf8"
	fastjson "github.com/segmentio/encoding/json"
)

// parseRecord returns the parser of one input file: a line's text is checked
// (checkText), then the line is decoded into a new T and judged (and
// normalised) by check. readFile's workers then encode it for the scratch
// store (appendScratchRecord).
func parseRecord[T any](strict bool, check func(*T) *reject) parseFunc {
	return func(line []byte) (parsed, *reject) {
		line, replaced, r := checkText(line, strict)
		if r != nil {
			return parsed{}, r
		}
		v := new(T)
		unknown, r := unmarshal(line, v)
		if r != nil {
			return parsed{}, r
		}
		if r := check(v); r != nil {
			return parsed{}, r
		}
		return parsed{v: v, unknown: unknown, replaced: replaced}, nil
	}
}

// checkText makes sure every string of a line, in every member at any depth
// (claim values, unknown members and member names included), is Unicode
// text, before either decoder sees it. The decoders do not check: both turn
// a bad byte in a string member into U+FFFD without a word, and both copy a
// json.RawMessage member (a claim's object.value) as it is, bad bytes and
// all, which the views would then serve. A line that fails the check is
// refused when strict, naming the member and byte; otherwise it is read with
// each bad byte replaced by U+FFFD (and each unpaired surrogate escape by
// \ufffd), and replaced says where, for the warning.
func checkText(line []byte, strict bool) (text []byte, replaced string, r *reject) {
	if jsonutf8.Valid(line) {
		return line, "", nil
	}
	first, total := jsonutf8.Check(line, 1)
	where := first[0].String()
	if total > 1 {
		where += fmt.Sprintf(", and %d more", total-1)
	}
	if strict {
		return nil, "", rejectf("%s", where)
	}
	return jsonutf8.Fix(line), where, nil
}

// byteOrderMark is the UTF-8 encoding of U+FEFF.
const byteOrderMark = "\xef\xbb\xbf"

// unknownFieldError is how encoding/json's DisallowUnknownFields names a
// member the record type does not have.
const unknownFieldError = "json: unknown field "

// fastFlags are the flags of the fast decoding pass: refuse unknown members,
// and let strings and raw values point into the line instead of copying them
// (ZeroCopy). That is safe because a line's bytes are never written again
// (readBatches cuts lines from buffers it replaces, never reuses), and cheap
// in memory because what ingest keeps of a line beyond its batch is the
// scratch record, a copy; only the few parties and sources stay in memory,
// holding their lines' buffer. Copying the strings would be the largest
// single source of allocations in a build.
const fastFlags = fastjson.DisallowUnknownFields | fastjson.ZeroCopy

// unmarshal decodes one line; it refuses anything but a JSON object. It
// returns the name of the first member that the record type does not have
// ("" when there is none): such members are ignored, and counted.
func unmarshal[T any](line []byte, v *T) (unknown string, r *reject) {
	line = bytes.TrimSpace(line)
	if bytes.HasPrefix(line, []byte(byteOrderMark)) {
		return "", rejectf("not a JSON object: the line starts with a UTF-8 byte order mark (bytes EF BB BF), which only the first line of a file may carry")
	}
	if len(line) == 0 || line[0] != '{' {
		return "", rejectf("not a JSON object")
	}
	// Most lines decode in one pass of segmentio/encoding's decoder that
	// also refuses unknown members: it is about five times as fast as
	// encoding/json here, where decoding with encoding/json alone is a fifth
	// of a build's CPU. A line that fails that pass is decoded again by
	// encoding/json alone, so that a reject says what encoding/json says
	// (and unknown members are ignored). FuzzFastDecodeMatchesStd holds the two decoders
	// to the same values on the lines the fast pass accepts.
	if rest, err := fastjson.Parse(line, v, fastFlags); err == nil && len(rest) == 0 {
		return "", nil
	}
	*v = *new(T)
	return unmarshalStd(line, v)
}

// unmarshalStd is unmarshal with encoding/json alone: one pass that refuses
// unknown members, then, for a line that fails it, one without the check.
func unmarshalStd[T any](line []byte, v *T) (unknown string, r *reject) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.InputOffset() == int64(len(line)) {
		return "", nil
	}
	if err != nil {
		if name, ok := strings.CutPrefix(err.Error(), unknownFieldError); ok {
			unknown = strings.Trim(name, `"`)
		}
	}
	*v = *new(T)
	if err := json.Unmarshal(line, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return "", rejectf("%s: wrong type (%s where %s is expected)", te.Field, te.Value, te.Type)
		}
		return "", rejectf("not valid JSON: %v", err)
	}
	return unknown, nil
}
