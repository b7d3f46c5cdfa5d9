package domain

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// The encoders of this file write the bytes AppendMarshal writes (always
// valid UTF-8, see Marshal) for the values ingest encodes millions of times
// for the views (claims, evidence locators, passport data), without
// reflection, which would be most of that cost. FuzzAppendJSONMatchesMarshal
// holds them to AppendMarshal's bytes, and to valid UTF-8 JSON.

// AppendClaim appends c's JSON to dst, as AppendMarshal writes it. What is
// not plain (a string that needs escaping, a raw value with white space to
// remove or bytes that are not UTF-8, a float that encoding/json writes in exponent form) is handed to
// AppendMarshal, so the bytes stay its bytes. On error dst is returned
// unchanged.
func AppendClaim(dst []byte, c *Claim) ([]byte, error) {
	orig := len(dst)
	var err error
	dst = appendKeyString(dst, `{"id":`, c.ID)
	dst = appendKeyString(dst, `,"subject":`, c.Subject)
	dst = appendKeyString(dst, `,"predicate":`, c.Predicate)
	if dst, err = appendRaw(append(dst, `,"object":{"value":`...), c.Object.Value); err != nil {
		return dst[:orig], err
	}
	dst = appendKeyNullable(dst, `,"unit":`, c.Object.Unit)
	dst = appendKeyNullable(dst, `,"language":`, c.Object.Language)
	dst = appendKeyString(dst, `},"claim_type":`, c.ClaimType)
	dst = appendKeyNullable(dst, `,"method":`, c.Method)
	dst = appendKeyNullable(dst, `,"method_version":`, c.MethodVersion)
	dst = appendKeyNullable(dst, `,"source_ref":`, c.SourceRef)
	dst = appendKeyNullable(dst, `,"publisher_ref":`, c.PublisherRef)
	if len(c.EvidenceRefs) > 0 {
		dst = append(dst, `,"evidence_refs":[`...)
		for i, r := range c.EvidenceRefs {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, r)
		}
		dst = append(dst, ']')
	}
	if c.VerificationStatus != "" {
		dst = appendKeyString(dst, `,"verification_status":`, c.VerificationStatus)
	}
	dst = appendKeyNullable(dst, `,"verification_method":`, c.VerificationMethod)
	dst = appendKeyString(dst, `,"trust_level":`, c.TrustLevel)
	if c.Confidence != nil {
		if dst, err = appendFloat(append(dst, `,"confidence":`...), *c.Confidence); err != nil {
			return dst[:orig], err
		}
	}
	dst = appendKeyNullable(dst, `,"published_at":`, c.PublishedAt)
	dst = appendKeyString(dst, `,"retrieved_at":`, c.RetrievedAt)
	dst = appendKeyNullable(dst, `,"superseded_by":`, c.SupersededBy)
	return append(dst, '}'), nil
}

func appendKeyString(dst []byte, key, s string) []byte {
	return AppendString(append(dst, key...), s)
}

func appendKeyNullable(dst []byte, key string, s *string) []byte {
	dst = append(dst, key...)
	if s == nil {
		return append(dst, "null"...)
	}
	return AppendString(dst, *s)
}

// AppendString appends s as a JSON string, as AppendMarshal would. A string of printable ASCII
// without quotes or backslashes, or of valid UTF-8 beyond it other than
// U+2028 and U+2029, is written as it is, which is what encoding/json
// writes; any other goes through AppendMarshal.
func AppendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == '"' || c == '\\' {
				return appendMarshalString(dst, s)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			return appendMarshalString(dst, s)
		}
		i += size
	}
	return append(append(append(dst, '"'), s...), '"')
}

func appendMarshalString(dst []byte, s string) []byte {
	out, _ := AppendMarshal(dst, s) // a string always encodes
	return out
}

// appendRaw appends a raw JSON value as AppendMarshal does: null for nil,
// and otherwise compacted, with any byte that is not UTF-8 replaced by
// U+FFFD. One without white space bytes is already compact; one with them,
// or with bytes that are not UTF-8, goes through AppendMarshal, which also
// refuses one that is empty or not JSON.
func appendRaw(dst []byte, v json.RawMessage) ([]byte, error) {
	if v == nil {
		return append(dst, "null"...), nil
	}
	if !utf8.Valid(v) {
		return AppendMarshal(dst, v)
	}
	for _, c := range v {
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			return AppendMarshal(dst, v)
		}
	}
	if len(v) == 0 || !json.Valid(v) {
		return AppendMarshal(dst, v)
	}
	return append(dst, v...), nil
}

// appendFloat appends f as encoding/json does where it uses plain decimal
// notation (0, and magnitudes from 1e-6 up to 1e21); others go through
// AppendMarshal, which also refuses NaN and the infinities.
func appendFloat(dst []byte, f float64) ([]byte, error) {
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) || math.IsNaN(f) {
		return AppendMarshal(dst, f)
	}
	return strconv.AppendFloat(dst, f, 'f', -1, 64), nil
}

// AppendLocator appends l's JSON to dst, as AppendMarshal writes it.
func AppendLocator(dst []byte, l Locator) []byte {
	dst = appendKeyString(dst, `{"kind":`, l.Kind)
	if l.ContentHash != "" {
		dst = appendKeyString(dst, `,"content_hash":`, l.ContentHash)
	}
	if l.Start != nil {
		dst = strconv.AppendInt(append(dst, `,"start":`...), *l.Start, 10)
	}
	if l.End != nil {
		dst = strconv.AppendInt(append(dst, `,"end":`...), *l.End, 10)
	}
	if l.Pointer != "" {
		dst = appendKeyString(dst, `,"pointer":`, l.Pointer)
	}
	return append(dst, '}')
}

// SortedKeys returns m's keys in the order of their bytes, the order in which
// AppendMarshal writes a map's members. It sizes the slice to the map first:
// slices.Sorted(maps.Keys(m)) grows it from nothing, and those growths are
// about 1% of a build's CPU, on maps of a few keys for every product.
func SortedKeys[M ~map[string]V, V any](m M) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// AppendPassportData appends d's JSON to dst, as AppendMarshal writes it
// (map members in the order of their keys' bytes). On error dst is returned
// unchanged.
func AppendPassportData(dst []byte, d PassportData) ([]byte, error) {
	orig := len(dst)
	dst = appendKeyString(dst, `{"subject":`, d.Subject)
	dst = append(dst, `,"attributes":`...)
	if d.Attributes == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '{')
		for i, k := range SortedKeys(d.Attributes) {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendRaw(append(AppendString(dst, k), ':'), d.Attributes[k]); err != nil {
				return dst[:orig], err
			}
		}
		dst = append(dst, '}')
	}
	if len(d.Units) > 0 {
		dst = append(dst, `,"units":{`...)
		for i, k := range SortedKeys(d.Units) {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(append(AppendString(dst, k), ':'), d.Units[k])
		}
		dst = append(dst, '}')
	}
	dst = appendKeyString(dst, `,"updated_at":`, d.UpdatedAt)
	return append(dst, '}'), nil
}
