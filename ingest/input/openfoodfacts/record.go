package openfoodfacts

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// record is the part of an Open Food Facts product record the importer reads.
// The dump is messy: the same field is a number in one record and a string in
// another, lists are sometimes one string, anything may be null or empty. The
// flex types below accept every such spelling, so one odd field never makes a
// whole record unreadable; fields the mapping cannot use are skipped and
// reported one by one.
type record struct {
	Code           flexString                 `json:"code"`
	ID             flexString                 `json:"_id"`
	LastModifiedT  flexInt                    `json:"last_modified_t"`
	BrandOwner     flexString                 `json:"brand_owner"`
	Owner          flexString                 `json:"owner"`
	Producer       flexString                 `json:"producer"`
	Brands         flexString                 `json:"brands"`
	ProductName    flexString                 `json:"product_name"`
	Quantity       flexString                 `json:"quantity"`
	Labels         flexStrings                `json:"labels_tags"`
	Origins        flexStrings                `json:"origins_tags"`
	Allergens      flexStrings                `json:"allergens_tags"`
	Categories     flexStrings                `json:"categories_tags"`
	Nutriments     map[string]json.RawMessage `json:"nutriments"`
	NutriscoreVer  flexString                 `json:"nutriscore_version"`
	NutriscoreGr   flexString                 `json:"nutriscore_grade"`
	NutriscoreSc   json.RawMessage            `json:"nutriscore_score"`
	NovaGroup      json.RawMessage            `json:"nova_group"`
	EcoscoreGrade  flexString                 `json:"ecoscore_grade"`
	EcoscoreScore  json.RawMessage            `json:"ecoscore_score"`
	QualityErrors  *flexStrings               `json:"data_quality_errors_tags"`
	QualityWarns   *flexStrings               `json:"data_quality_warnings_tags"`
	OwnerFields    map[string]json.RawMessage `json:"owner_fields"`
	Sources        []sourceEntry              `json:"sources"`
	EnvelopeRecord json.RawMessage            `json:"product"` // set only in an API envelope
}

// sourceEntry is one entry of a record's sources[]: an import into Open Food
// Facts (a producer's platform upload, a database such as a GS1 feed).
type sourceEntry struct {
	ID            flexString  `json:"id"`
	Name          flexString  `json:"name"`
	URL           flexString  `json:"url"`
	ImportT       flexInt     `json:"import_t"`
	Fields        flexStrings `json:"fields"`
	Manufacturer  flexString  `json:"manufacturer"`
	Licence       flexString  `json:"source_licence"`
	LicenceURL    flexString  `json:"source_licence_url"`
	unusableEntry bool
}

// UnmarshalJSON reads an entry leniently: an entry that is not an object is
// kept as unusable instead of failing the record.
func (e *sourceEntry) UnmarshalJSON(b []byte) error {
	type plain sourceEntry
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		*e = sourceEntry{unusableEntry: true}
		return nil
	}
	*e = sourceEntry(p)
	return nil
}

// flexString is a string that may arrive as a string, a number, a boolean or
// null. Set tells a present value from an absent one.
type flexString struct {
	S   string
	Set bool
}

func (f *flexString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	*f = flexString{}
	switch {
	case len(b) == 0 || string(b) == "null":
		return nil
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return nil
		}
		*f = flexString{S: s, Set: true}
	case b[0] == '{' || b[0] == '[':
		return nil // not a scalar: treated as absent
	default:
		*f = flexString{S: string(b), Set: true}
	}
	return nil
}

// flexInt is an integer (a Unix time, a count) written as a number or as a
// string of digits. Bad is set when a value was there but is not an integer.
type flexInt struct {
	N   int64
	Set bool
	Bad string
}

func (f *flexInt) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	*f = flexInt{}
	s := string(b)
	if s == "null" || s == "" {
		return nil
	}
	if b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			f.Bad = string(b)
			return nil
		}
		s = strings.TrimSpace(s)
		if s == "" {
			return nil
		}
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		*f = flexInt{N: n, Set: true}
		return nil
	}
	if x, err := strconv.ParseFloat(s, 64); err == nil && x == float64(int64(x)) {
		*f = flexInt{N: int64(x), Set: true}
		return nil
	}
	f.Bad = clip(string(b), 40)
	return nil
}

// flexStrings is a list of strings that may also arrive as one string (then
// split at commas), with non-string entries and empty strings dropped.
type flexStrings []string

func (f *flexStrings) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	*f = nil
	if len(b) == 0 {
		return nil
	}
	switch b[0] {
	case '"':
		var s string
		if json.Unmarshal(b, &s) == nil {
			for _, part := range strings.Split(s, ",") {
				if part = strings.TrimSpace(part); part != "" {
					*f = append(*f, part)
				}
			}
		}
	case '[':
		var items []json.RawMessage
		if json.Unmarshal(b, &items) != nil {
			return nil
		}
		for _, it := range items {
			var s string
			if json.Unmarshal(it, &s) == nil && strings.TrimSpace(s) != "" {
				*f = append(*f, s)
			}
		}
	}
	return nil
}

// number reads a JSON value that should be a number: a number, or a string
// holding one (OFF writes both, and decimal commas now and then). ok is false
// for anything else; present is false for null or an empty string.
func number(raw json.RawMessage) (v float64, present, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return 0, false, false
	}
	s := string(raw)
	if raw[0] == '"' {
		if json.Unmarshal(raw, &s) != nil {
			return 0, true, false
		}
		s = strings.TrimSpace(s)
		if s == "" {
			return 0, false, false
		}
		s = strings.Replace(s, ",", ".", 1)
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, true, false
	}
	return x, true, true
}

// clip shortens s to at most n bytes and an ellipsis, cutting between two
// UTF-8 sequences.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
