package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/service"
	"github.com/productdata/pds/service/keys"
	"github.com/productdata/pds/snapshots"
)

// restFor names the REST call that runs the same operation as a tool call.
func restFor(tool string, args map[string]any) (method, path, body string) {
	b, _ := json.Marshal(args)
	str := func(k string) string { s, _ := args[k].(string); return s }
	switch tool {
	case "validate_identifier":
		return "POST", "/v1/identifiers/validate", string(b)
	case "resolve_identifiers":
		return "POST", "/v1/products/resolve", string(b)
	case "get_product":
		return "GET", "/v1/products/" + url.PathEscape(str("identifier")), ""
	case "get_passport":
		return "GET", "/v1/products/" + url.PathEscape(str("identifier")) + "/dpp", ""
	case "get_evidence":
		return "GET", "/v1/products/" + url.PathEscape(str("identifier")) + "/evidence", ""
	case "search_products":
		q := url.Values{}
		for k, v := range args {
			switch v := v.(type) {
			case nil:
			case float64:
				q.Set(k, strconv.FormatFloat(v, 'f', -1, 64))
			default:
				q.Set(k, fmt.Sprint(v))
			}
		}
		return "GET", "/v1/products/search?" + q.Encode(), ""
	case "parse_digital_link":
		return "POST", "/v1/digital-links/resolve", string(b)
	case "get_source":
		return "GET", "/v1/sources/" + url.PathEscape(str("source_id")), ""
	case "whoami":
		return "GET", "/v1/whoami", ""
	}
	panic("no REST call for " + tool)
}

// withoutVolatile drops what differs between two answers to the same call.
func withoutVolatile(m map[string]any) map[string]any {
	delete(m, "request_id")
	if meta, ok := m["meta"].(map[string]any); ok {
		delete(meta, "duration_ms")
	}
	return m
}

type toolCase struct {
	name string
	tool string
	args map[string]any
	key  string // KeyFull when empty
	// want is the envelope status of a success, or the Problem code of a
	// failure; empty: whatever REST answers.
	want string
	// mcpOnly: REST has no equivalent of these arguments (they break the
	// inputSchema in a way a URL cannot); only want is checked.
	mcpOnly bool
}

func toolCases() []toolCase {
	batch := make([]any, 1001)
	for i := range batch {
		batch[i] = demo
	}
	return []toolCase{
		{name: "valid GTIN", tool: "validate_identifier", args: map[string]any{"value": demo}, want: "found"},
		{name: "13 digits are ambiguous", tool: "validate_identifier", args: map[string]any{"value": "9520123456788"}, want: "ambiguous"},
		{name: "wrong check digit is an answer", tool: "validate_identifier", args: map[string]any{"value": "09520123456789"}, want: "found"},
		{name: "namespace given", tool: "validate_identifier", args: map[string]any{"value": "9520123456788", "namespace": "gln"}, want: "found"},
		{name: "internal SKU", tool: "validate_identifier", args: map[string]any{"value": "SKU-1", "namespace": "internal_sku"}, want: "found"},
		{name: "unsupported namespace", tool: "validate_identifier", args: map[string]any{"value": "1", "namespace": "isbn"}, want: "UNSUPPORTED_NAMESPACE"},
		{name: "value missing", tool: "validate_identifier", args: map[string]any{}, want: "INVALID_REQUEST"},
		{name: "value too long", tool: "validate_identifier", args: map[string]any{"value": strings.Repeat("a", 257)}, want: "INVALID_REQUEST"},
		{name: "value a number", tool: "validate_identifier", args: map[string]any{"value": 12}, want: "INVALID_REQUEST"},
		{name: "unknown member", tool: "validate_identifier", args: map[string]any{"value": "1", "extra": true}, want: "INVALID_REQUEST"},
		{name: "unknown member id", tool: "validate_identifier", args: map[string]any{"value": "1", "id": "x"}, want: "INVALID_REQUEST"},

		{name: "mixed batch is partial", tool: "resolve_identifiers", args: map[string]any{"identifiers": []any{demo, absent, "00012345678905", "gln:9520000000028", "09520123456789", "internal_sku:SKU-1"}}, want: "partial"},
		{name: "all found", tool: "resolve_identifiers", args: map[string]any{"identifiers": []any{demo, "internal_sku:SKU-1"}}, want: "found"},
		{name: "all absent", tool: "resolve_identifiers", args: map[string]any{"identifiers": []any{absent}}, want: "not_found"},
		{name: "batch too large", tool: "resolve_identifiers", args: map[string]any{"identifiers": batch}, want: "BATCH_TOO_LARGE"},
		{name: "empty batch", tool: "resolve_identifiers", args: map[string]any{"identifiers": []any{}}, want: "INVALID_REQUEST"},
		{name: "identifiers missing", tool: "resolve_identifiers", args: map[string]any{}, want: "INVALID_REQUEST"},

		{name: "found by subject", tool: "get_product", args: map[string]any{"identifier": demoSub}, want: "found"},
		{name: "found by element string", tool: "get_product", args: map[string]any{"identifier": "(01)09520123456788(17)261231(10)AB12"}, want: "found"},
		{name: "passport by element string", tool: "get_passport", args: map[string]any{"identifier": "(01)09520123456788(10)AB12"}, want: "found"},
		{name: "invalid element string", tool: "get_product", args: map[string]any{"identifier": "(01)09520123456789(10)AB12"}, want: "INVALID_IDENTIFIER"},
		{name: "element string without a pds key", tool: "get_product", args: map[string]any{"identifier": "(8004)9520ABC"}, want: "INVALID_IDENTIFIER"},
		{name: "resolve element strings", tool: "resolve_identifiers", args: map[string]any{"identifiers": []any{"(01)09520123456788(10)AB", "]C10109520123456788" + "21S1"}}, want: "found"},
		{name: "validate element string", tool: "validate_identifier", args: map[string]any{"value": "(01)09520123456788(17)261231(10)AB12"}, want: "found"},
		{name: "validate scanner data", tool: "validate_identifier", args: map[string]any{"value": "]d2010952012345678810AB12\x1d17261231"}, want: "found"},
		{name: "validate invalid element string", tool: "validate_identifier", args: map[string]any{"value": "(01)09520123456789"}, want: "found"},
		{name: "found by a Digital Link URI", tool: "get_product", args: map[string]any{"identifier": "https://id.gs1.org/01/09520123456788/10/AB?17=261231"}, want: "found"},
		{name: "passport by hyphenated digits", tool: "get_passport", args: map[string]any{"identifier": "952-0123-456788"}, want: "found"},
		{name: "evidence by raw scanner data", tool: "get_evidence", args: map[string]any{"identifier": "0109520123456788"}, want: "found"},
		{name: "no passport yet, product known", tool: "get_evidence", args: map[string]any{"identifier": "4006381333931"}, want: "not_found"},
		{name: "resolve forms people hold", tool: "resolve_identifiers", args: map[string]any{"identifiers": []any{"9520 1234 5678 8", "12345678905", "https://example.com/01/9520123456788"}}, want: "partial"},
		{name: "found by bare 13 digits", tool: "get_product", args: map[string]any{"identifier": "9520123456788"}, want: "found"},
		{name: "found by linked SKU", tool: "get_product", args: map[string]any{"identifier": "SKU-1"}, want: "found"},
		{name: "absent and covered", tool: "get_product", args: map[string]any{"identifier": absent}, want: "not_found"},
		{name: "absent and uncovered", tool: "get_product", args: map[string]any{"identifier": "00012345678905"}, want: "unknown"},
		{name: "GLN is out of scope", tool: "get_product", args: map[string]any{"identifier": "gln:9520000000028"}, want: "unknown"},
		{name: "another tenant's product is hidden", tool: "get_product", args: map[string]any{"identifier": "internal_sku:ACME-7"}, want: "unknown"},
		{name: "own tenant's product", tool: "get_product", key: ingesttest.KeyAcme, args: map[string]any{"identifier": "internal_sku:ACME-7"}, want: "found"},
		{name: "invalid identifier", tool: "get_product", args: map[string]any{"identifier": "09520123456789"}, want: "INVALID_IDENTIFIER"},
		{name: "unknown namespace", tool: "get_product", args: map[string]any{"identifier": "isbn:123"}, want: "INVALID_IDENTIFIER"},
		{name: "identifier missing", tool: "get_product", args: map[string]any{}, want: "INVALID_REQUEST", mcpOnly: true},
		{name: "identifier a number", tool: "get_product", args: map[string]any{"identifier": 9520123456788}, want: "INVALID_REQUEST", mcpOnly: true},

		{name: "passport", tool: "get_passport", args: map[string]any{"identifier": demo}, want: "found"},
		{name: "tenant's passport", tool: "get_passport", key: ingesttest.KeyAcme, args: map[string]any{"identifier": demo}, want: "found"},
		{name: "licence restricted", tool: "get_passport", args: map[string]any{"identifier": shop}, want: "unknown"},
		{name: "no passport", tool: "get_passport", args: map[string]any{"identifier": "gtin:04006381333931"}, want: "not_found"},
		{name: "passport absent", tool: "get_passport", args: map[string]any{"identifier": absent}, want: "not_found"},
		{name: "passport invalid", tool: "get_passport", args: map[string]any{"identifier": "abc def"}, want: "INVALID_IDENTIFIER"},
		{name: "passport without the scope", tool: "get_passport", key: ingesttest.KeyNoScope, args: map[string]any{"identifier": demo}, want: "FORBIDDEN"},

		{name: "evidence", tool: "get_evidence", args: map[string]any{"identifier": demo}, want: "found"},
		{name: "tenant's evidence", tool: "get_evidence", key: ingesttest.KeyAcme, args: map[string]any{"identifier": demo}, want: "found"},
		{name: "evidence absent", tool: "get_evidence", args: map[string]any{"identifier": absent}, want: "not_found"},
		{name: "evidence uncovered", tool: "get_evidence", args: map[string]any{"identifier": "00012345678905"}, want: "unknown"},
		{name: "evidence invalid", tool: "get_evidence", args: map[string]any{"identifier": "09520123456789"}, want: "INVALID_IDENTIFIER"},

		// search_products: the lead extends the success cases once search lands;
		// until then these hold MCP to whatever REST answers.
		{name: "by manufacturer", tool: "search_products", args: map[string]any{"manufacturer": "Demo Foods"}},
		{name: "with filters", tool: "search_products", args: map[string]any{"has_passport": true, "limit": 5, "trust_level_min": "L1", "sort": "updated_at"}},
		{name: "null counts as left out", tool: "search_products", args: map[string]any{"manufacturer": "Demo", "cursor": nil}},
		{name: "brand is unsupported", tool: "search_products", args: map[string]any{"brand": "Demo"}, want: "UNSUPPORTED_FILTER"},
		{name: "market is unsupported", tool: "search_products", args: map[string]any{"market": "DE", "manufacturer": "Demo"}, want: "UNSUPPORTED_FILTER"},
		{name: "unknown filter", tool: "search_products", args: map[string]any{"colour": "blue"}, want: "INVALID_FILTER"},
		{name: "relevance without manufacturer", tool: "search_products", args: map[string]any{"sort": "relevance"}, want: "INVALID_SORT"},
		{name: "limit zero", tool: "search_products", args: map[string]any{"limit": 0}, want: "INVALID_FILTER"},
		{name: "limit over 100", tool: "search_products", args: map[string]any{"limit": 101}, want: "INVALID_FILTER"},
		{name: "trust level out of range", tool: "search_products", args: map[string]any{"trust_level_min": "L9"}, want: "INVALID_FILTER"},
		{name: "bad date", tool: "search_products", args: map[string]any{"updated_since": "yesterday"}, want: "INVALID_FILTER"},
		{name: "date only", tool: "search_products", args: map[string]any{"updated_since": "2025-01-04"}, want: "found"},
		{name: "no such date", tool: "search_products", args: map[string]any{"updated_since": "2025-02-30"}, want: "INVALID_FILTER"},
		{name: "empty cursor", tool: "search_products", args: map[string]any{"cursor": ""}, want: "INVALID_CURSOR"},
		{name: "limit not an integer", tool: "search_products", args: map[string]any{"limit": 2.5}, want: "INVALID_REQUEST", mcpOnly: true},
		{name: "limit a string", tool: "search_products", args: map[string]any{"limit": "20"}, want: "INVALID_REQUEST", mcpOnly: true},
		{name: "has_passport a string", tool: "search_products", args: map[string]any{"has_passport": "yes"}, want: "INVALID_REQUEST", mcpOnly: true},
		{name: "search without the scope", tool: "search_products", key: ingesttest.KeyNoScope, args: map[string]any{"manufacturer": "Demo"}, want: "FORBIDDEN"},

		{name: "digital link", tool: "parse_digital_link", args: map[string]any{"uri": "https://id.gs1.org/01/09520123456788/10/ABC123"}, want: "found"},
		{name: "malformed", tool: "parse_digital_link", args: map[string]any{"uri": "not a uri"}, want: "MALFORMED_URI"},
		{name: "no primary identifier", tool: "parse_digital_link", args: map[string]any{"uri": "https://example.com/about"}, want: "NO_PRIMARY_IDENTIFIER"},
		{name: "unsupported form", tool: "parse_digital_link", args: map[string]any{"uri": "https://example.com/gtin/09520123456788"}, want: "UNSUPPORTED_URI_FORM"},
		{name: "bad check digit in link", tool: "parse_digital_link", args: map[string]any{"uri": "https://example.com/01/09520123456789"}, want: "INVALID_IDENTIFIER"},
		{name: "uri missing", tool: "parse_digital_link", args: map[string]any{}, want: "INVALID_REQUEST"},

		{name: "source", tool: "get_source", args: map[string]any{"source_id": srcReg}, want: "found"},
		{name: "unknown source", tool: "get_source", args: map[string]any{"source_id": "22222222-0000-4000-8000-000000000001"}, want: "not_found"},
		{name: "another tenant's source", tool: "get_source", args: map[string]any{"source_id": "11111111-0000-4000-8000-000000000004"}, want: "not_found"},
		{name: "own tenant's source", tool: "get_source", key: ingesttest.KeyAcme, args: map[string]any{"source_id": "11111111-0000-4000-8000-000000000004"}, want: "found"},
		{name: "source id not a UUID", tool: "get_source", args: map[string]any{"source_id": "registry"}, want: "INVALID_IDENTIFIER"},
		{name: "source without the scope", tool: "get_source", key: ingesttest.KeyNoScope, args: map[string]any{"source_id": srcReg}, want: "FORBIDDEN"},
		{name: "source_id missing", tool: "get_source", args: map[string]any{}, want: "INVALID_REQUEST", mcpOnly: true},

		{name: "whoami", tool: "whoami", args: map[string]any{}, want: "found"},
		{name: "whoami needs only mcp", tool: "whoami", key: ingesttest.KeyNoScope, args: map[string]any{}, want: "found"},
		{name: "whoami takes no arguments", tool: "whoami", args: map[string]any{"tenant": "x"}, want: "INVALID_REQUEST", mcpOnly: true},
	}
}

// TestTools calls every tool (success, absence, error) and holds each answer
// to the REST answer of the same operation and to the tool's outputSchema.
func TestTools(t *testing.T) {
	e := newEnv(t)
	tools, _ := listTools(t, e)
	seen := map[string]bool{}
	for _, c := range toolCases() {
		seen[c.tool] = true
		t.Run(c.tool+"/"+c.name, func(t *testing.T) {
			key := c.key
			if key == "" {
				key = ingesttest.KeyFull
			}
			schema := tools[c.tool]
			r := e.do(t, "POST", "/v1/mcp", key, rpc(1, "tools/call", callParams(c.tool, c.args)), headers("tools/call", c.tool, nil))
			if r.status != 200 || r.json["error"] != nil {
				t.Fatalf("tools/call: %d %s", r.status, r.body)
			}
			res := r.json["result"].(map[string]any)
			if res["resultType"] != "complete" {
				t.Errorf("resultType %v", res["resultType"])
			}
			content, _ := res["content"].([]any)
			if len(content) != 1 || ingesttest.Get(content, "0.type") != "text" {
				t.Fatalf("content %v", res["content"])
			}
			text := ingesttest.Get(content, "0.text").(string)
			rid := r.header.Get("X-Request-Id")
			failed := res["isError"] == true

			var rest response
			if !c.mcpOnly {
				m, p, b := restFor(c.tool, c.args)
				rest = e.do(t, m, p, key, b, nil)
			}
			if failed {
				if _, ok := res["structuredContent"]; ok {
					t.Error("a failure carries structuredContent")
				}
				problemJSON, sentence, ok := strings.Cut(text, "\n\n")
				if !ok || len(sentence) < 20 || !strings.HasSuffix(sentence, ".") {
					t.Errorf("no actionable sentence after the Problem: %q", text)
				}
				var problem map[string]any
				if err := json.Unmarshal([]byte(problemJSON), &problem); err != nil {
					t.Fatalf("text block does not start with the Problem: %v\n%s", err, text)
				}
				if problem["request_id"] != rid {
					t.Errorf("problem request_id %v, x-request-id %s", problem["request_id"], rid)
				}
				if c.want != "" && problem["code"] != c.want {
					t.Errorf("code %v, want %s: %s", problem["code"], c.want, problemJSON)
				}
				if !c.mcpOnly {
					if rest.status == 200 {
						t.Fatalf("MCP failed (%s) where REST succeeded: %s", problemJSON, rest.body)
					}
					delete(problem, "request_id")
					delete(rest.json, "request_id")
					if problem["code"] == "FORBIDDEN" {
						// Each transport names the call in its own terms: REST
						// its method and path, MCP the tool.
						if d, _ := problem["detail"].(string); !strings.Contains(d, c.tool) {
							t.Errorf("MCP 403 does not name the tool %s: %s", c.tool, d)
						}
						delete(problem, "detail")
						delete(rest.json, "detail")
					}
					if !reflect.DeepEqual(problem, rest.json) {
						t.Errorf("Problem differs from REST:\nMCP:  %s\nREST: %s", problemJSON, rest.body)
					}
				}
				if problem["code"] == "INVALID_REQUEST" && len(validate(schema["inputSchema"], jsonValue(c.args), "arguments")) == 0 {
					t.Errorf("arguments refused as INVALID_REQUEST fit the inputSchema: %v", c.args)
				}
				return
			}
			sc, ok := res["structuredContent"].(map[string]any)
			if !ok {
				t.Fatalf("success without structuredContent: %s", r.body)
			}
			var fromText map[string]any
			if err := json.Unmarshal([]byte(text), &fromText); err != nil || !reflect.DeepEqual(fromText, sc) {
				t.Errorf("text block does not hold the structuredContent JSON (%v):\n%s", err, text)
			}
			if sc["request_id"] != rid {
				t.Errorf("request_id %v, x-request-id %s", sc["request_id"], rid)
			}
			if c.want != "" && sc["status"] != c.want {
				t.Errorf("status %v, want %s", sc["status"], c.want)
			}
			for _, bad := range validate(schema["outputSchema"], jsonValue(sc), "structuredContent") {
				t.Error(bad)
			}
			if _, hasNull := nullMember(c.args); !hasNull {
				for _, bad := range validate(schema["inputSchema"], jsonValue(c.args), "arguments") {
					t.Error(bad)
				}
			}
			if !c.mcpOnly {
				if rest.status != 200 {
					t.Fatalf("MCP succeeded where REST failed: %s", rest.body)
				}
				if got, want := withoutVolatile(sc), withoutVolatile(rest.json); !reflect.DeepEqual(got, want) {
					g, _ := json.Marshal(got)
					t.Errorf("structuredContent differs from the REST envelope:\nMCP:  %s\nREST: %s", g, rest.body)
				}
			}
		})
	}
	for _, name := range toolNames {
		if !seen[name] {
			t.Errorf("no case for tool %s", name)
		}
	}
}

// jsonValue round-trips v through JSON, as the checker wants decoded JSON.
func jsonValue(v any) any {
	b, _ := json.Marshal(v)
	var out any
	json.Unmarshal(b, &out)
	return out
}

func nullMember(m map[string]any) (string, bool) {
	for k, v := range m {
		if v == nil {
			return k, true
		}
	}
	return "", false
}

// TestSchemaChecker holds the checker itself to a few known verdicts.
func TestSchemaChecker(t *testing.T) {
	schema := jsonValue(map[string]any{
		"type": "object", "additionalProperties": false, "required": []string{"a"},
		"properties": map[string]any{
			"a": map[string]any{"type": "string", "pattern": "^x", "maxLength": 3},
			"b": map[string]any{"type": "integer", "minimum": 1, "maximum": 5},
			"c": map[string]any{"anyOf": []any{map[string]any{"type": "null"}, map[string]any{"type": "array", "maxItems": 1, "items": map[string]any{"enum": []any{"p"}}}}},
		},
	})
	cases := []struct {
		value string
		ok    bool
	}{
		{`{"a":"xy"}`, true},
		{`{"a":"xy","b":5,"c":null}`, true},
		{`{"a":"xy","c":["p"]}`, true},
		{`{}`, false},
		{`{"a":"y"}`, false},
		{`{"a":"xyzw"}`, false},
		{`{"a":"x","b":1.5}`, false},
		{`{"a":"x","b":6}`, false},
		{`{"a":"x","c":["q"]}`, false},
		{`{"a":"x","c":["p","p"]}`, false},
		{`{"a":"x","d":1}`, false},
		{`[]`, false},
	}
	for _, c := range cases {
		var v any
		json.Unmarshal([]byte(c.value), &v)
		if errs := validate(schema, v, "v"); (len(errs) == 0) != c.ok {
			t.Errorf("%s: errors %v, want ok=%v", c.value, errs, c.ok)
		}
	}
	if bad := checkKeywords(jsonValue(map[string]any{"type": "object", "oneOf": []any{}}), "s"); len(bad) != 1 {
		t.Errorf("unknown keyword not reported: %v", bad)
	}

	// $ref to the root's $defs.
	withRef := jsonValue(map[string]any{
		"type": "object", "$defs": map[string]any{"e": map[string]any{"type": "object", "required": []string{"ai"}, "properties": map[string]any{"ai": map[string]any{"type": "string"}}}},
		"properties": map[string]any{"p": map[string]any{"$ref": "#/$defs/e", "description": "d"}, "q": map[string]any{"type": "array", "items": map[string]any{"$ref": "#/$defs/e"}}},
	})
	if bad := checkKeywords(withRef, "s"); len(bad) != 0 {
		t.Errorf("$ref and $defs refused: %v", bad)
	}
	for value, ok := range map[string]bool{`{"p":{"ai":"01"},"q":[{"ai":"10"}]}`: true, `{"p":{}}`: false, `{"q":[{"ai":1}]}`: false} {
		var v any
		json.Unmarshal([]byte(value), &v)
		if errs := validate(withRef, v, "v"); (len(errs) == 0) != ok {
			t.Errorf("%s: errors %v, want ok=%v", value, errs, ok)
		}
	}
	badRefs := jsonValue(map[string]any{"type": "object", "properties": map[string]any{
		"p": map[string]any{"$ref": "#/$defs/missing"},
		"q": map[string]any{"type": "object", "$defs": map[string]any{}},
	}})
	if bad := checkKeywords(badRefs, "s"); len(bad) != 2 {
		t.Errorf("a dangling $ref and a nested $defs: %v", bad)
	}
}

// meter records what each operation bills and refuses when told to.
type meter struct {
	mu      sync.Mutex
	charges []string
	refuse  *domain.Error
}

func (m *meter) Charge(_ context.Context, _ domain.Caller, op string, units int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.refuse != nil {
		return m.refuse
	}
	m.charges = append(m.charges, fmt.Sprintf("%s:%d", op, units))
	return nil
}

func (m *meter) take() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.charges
	m.charges = nil
	sort.Strings(out)
	return out
}

// TestBilling: a tool call bills what its REST operation bills; discover,
// tools/list, whoami and refused calls bill nothing; a refusal of the meter
// is a tool failure with the REST code.
func TestBilling(t *testing.T) {
	snap := ingesttest.Build(t, ingesttest.WriteCase(t, ingesttest.CaseFile("passport")))
	s, err := service.OpenSnapshot(snap, snapshots.OpenOptions{CacheBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	path, secrets := ingesttest.Keys(t)
	ks, err := keys.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	m := &meter{}
	svc := service.New(s, ks, m, ingesttest.Logger(t))
	t.Cleanup(svc.Close)
	e := serve(t, svc, secrets)

	e.post(t, 1, "server/discover", map[string]any{"_meta": meta()})
	e.post(t, 1, "tools/list", map[string]any{"_meta": meta()})
	if got := m.take(); len(got) != 0 {
		t.Errorf("discover and tools/list billed %v", got)
	}
	calls := []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"validate_identifier", map[string]any{"value": demo}, []string{"validate_identifier:1"}},
		{"resolve_identifiers", map[string]any{"identifiers": []any{demo, absent, "bad"}}, []string{"resolve_identifiers:3"}},
		{"get_product", map[string]any{"identifier": demo}, []string{"get_product:1"}},
		{"get_passport", map[string]any{"identifier": demo}, []string{"get_passport:1"}},
		{"get_evidence", map[string]any{"identifier": absent}, []string{"get_evidence:1"}},
		{"parse_digital_link", map[string]any{"uri": "https://id.gs1.org/01/09520123456788"}, []string{"parse_digital_link:1"}},
		{"get_source", map[string]any{"source_id": srcReg}, []string{"get_source:1"}},
		{"whoami", map[string]any{}, nil},
		{"resolve_identifiers", map[string]any{"identifiers": make([]any, 1001)}, nil},
	}
	for _, c := range calls {
		e.post(t, 1, "tools/call", callParams(c.tool, c.args))
		mcpCharges := m.take()
		method, p, b := restFor(c.tool, c.args)
		e.do(t, method, p, ingesttest.KeyFull, b, nil)
		restCharges := m.take()
		if !reflect.DeepEqual(mcpCharges, c.want) || !reflect.DeepEqual(restCharges, c.want) {
			t.Errorf("%s: MCP billed %v, REST %v, want %v", c.tool, mcpCharges, restCharges, c.want)
		}
	}

	m.refuse = &domain.Error{Code: domain.CodeRateLimited, Detail: "slow down", RetryAfter: 7}
	r := e.post(t, 1, "tools/call", callParams("get_product", map[string]any{"identifier": demo}))
	text, _ := ingesttest.Get(r.json, "result.content.0.text").(string)
	if ingesttest.Get(r.json, "result.isError") != true || !strings.Contains(text, `"code":"RATE_LIMITED"`) || !strings.Contains(text, "wait 7 seconds") {
		t.Errorf("refused call: %s", r.body)
	}
	r = e.post(t, 1, "tools/call", callParams("whoami", map[string]any{}))
	if ingesttest.Get(r.json, "result.isError") != false {
		t.Errorf("whoami is never quota- or rate-checked: %s", r.body)
	}
}
