package mcp_test

import (
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// This file is a JSON Schema checker for exactly the subset the tool schemas
// use. checkKeywords refuses a schema that uses anything else, so that a
// keyword the checker does not know cannot pass unchecked.

var (
	validatingKeywords = []string{"type", "properties", "required", "additionalProperties", "items", "enum",
		"pattern", "minLength", "maxLength", "minimum", "maximum", "minItems", "maxItems", "anyOf", "$ref"}
	annotationKeywords = []string{"description", "default", "format", "title"}
)

// checkKeywords returns the paths of keywords outside the subset, and of
// a $ref that does not name one of the root's $defs ($defs is allowed at the
// root only).
func checkKeywords(schema any, path string) []string {
	return checkKeywordsIn(schema, schema, path)
}

func checkKeywordsIn(root, schema any, path string) []string {
	s, ok := schema.(map[string]any)
	if !ok {
		return []string{path + ": a schema must be an object"}
	}
	var bad []string
	for _, k := range sortedKeys(s) {
		v := s[k]
		switch {
		case k == "properties":
			props, _ := v.(map[string]any)
			for _, name := range sortedKeys(props) {
				bad = append(bad, checkKeywordsIn(root, props[name], path+".properties."+name)...)
			}
		case k == "items":
			bad = append(bad, checkKeywordsIn(root, v, path+".items")...)
		case k == "anyOf":
			list, _ := v.([]any)
			for i, sub := range list {
				bad = append(bad, checkKeywordsIn(root, sub, fmt.Sprintf("%s.anyOf.%d", path, i))...)
			}
		case k == "$defs":
			defs, _ := v.(map[string]any)
			if !reflect.DeepEqual(root, schema) {
				bad = append(bad, path+".$defs: only at the root")
			}
			for _, name := range sortedKeys(defs) {
				bad = append(bad, checkKeywordsIn(root, defs[name], path+".$defs."+name)...)
			}
		case k == "$ref":
			if _, ok := resolveRef(root, v); !ok {
				bad = append(bad, fmt.Sprintf("%s.$ref: %v is not #/$defs/NAME of a definition", path, v))
			}
		case k == "additionalProperties":
			if v != false {
				bad = append(bad, path+".additionalProperties: only false is supported")
			}
		case slices.Contains(validatingKeywords, k), slices.Contains(annotationKeywords, k):
		default:
			bad = append(bad, path+"."+k+": keyword not supported by the checker")
		}
	}
	return bad
}

// resolveRef finds the definition a $ref value names in root's $defs.
func resolveRef(root, ref any) (any, bool) {
	r, _ := ref.(string)
	name, ok := strings.CutPrefix(r, "#/$defs/")
	if !ok {
		return nil, false
	}
	defs, _ := root.(map[string]any)["$defs"].(map[string]any)
	def, ok := defs[name]
	return def, ok
}

// validate returns what is wrong with v (decoded JSON) under schema.
func validate(schema any, v any, path string) []string {
	return validateIn(schema, schema, v, path)
}

func validateIn(root, schema any, v any, path string) []string {
	s := schema.(map[string]any)
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, path+": "+fmt.Sprintf(format, args...)) }
	if r, ok := s["$ref"]; ok {
		def, ok := resolveRef(root, r)
		if !ok {
			fail("$ref %v names no definition", r)
			return errs
		}
		errs = append(errs, validateIn(root, def, v, path)...)
	}
	if any, ok := s["anyOf"].([]any); ok {
		matched := false
		for _, sub := range any {
			if len(validateIn(root, sub, v, path)) == 0 {
				matched = true
				break
			}
		}
		if !matched {
			fail("matches none of anyOf")
		}
	}
	if t, ok := s["type"]; ok && !typeMatches(t, v) {
		fail("is %s, want type %v", kindOf(v), t)
		return errs
	}
	if enum, ok := s["enum"].([]any); ok && !slices.ContainsFunc(enum, func(e any) bool { return e == v }) {
		fail("%v is not one of %v", v, enum)
	}
	switch x := v.(type) {
	case string:
		n := float64(utf8.RuneCountInString(x))
		if min, ok := s["minLength"].(float64); ok && n < min {
			fail("shorter than %v", min)
		}
		if max, ok := s["maxLength"].(float64); ok && n > max {
			fail("longer than %v", max)
		}
		if p, ok := s["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(x) {
			fail("%q does not match %s", x, p)
		}
	case float64:
		if min, ok := s["minimum"].(float64); ok && x < min {
			fail("%v is below %v", x, min)
		}
		if max, ok := s["maximum"].(float64); ok && x > max {
			fail("%v is above %v", x, max)
		}
	case []any:
		if min, ok := s["minItems"].(float64); ok && float64(len(x)) < min {
			fail("fewer than %v items", min)
		}
		if max, ok := s["maxItems"].(float64); ok && float64(len(x)) > max {
			fail("more than %v items", max)
		}
		if items, ok := s["items"]; ok {
			for i, e := range x {
				errs = append(errs, validateIn(root, items, e, fmt.Sprintf("%s.%d", path, i))...)
			}
		}
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				if _, ok := x[r.(string)]; !ok {
					fail("lacks required member %q", r)
				}
			}
		}
		for _, k := range sortedKeys(x) {
			if sub, ok := props[k]; ok {
				errs = append(errs, validateIn(root, sub, x[k], path+"."+k)...)
			} else if s["additionalProperties"] == false {
				fail("member %q is not allowed", k)
			}
		}
	}
	return errs
}

func typeMatches(t any, v any) bool {
	switch t := t.(type) {
	case string:
		return isKind(t, v)
	case []any:
		return slices.ContainsFunc(t, func(e any) bool { return isKind(e.(string), v) })
	}
	return false
}

func isKind(kind string, v any) bool {
	switch kind {
	case "integer":
		f, ok := v.(float64)
		return ok && f == math.Trunc(f)
	case "number":
		_, ok := v.(float64)
		return ok
	}
	return kindOf(v) == kind
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
