package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/http/httpwire"
	"github.com/productdata/pds/internal/buildinfo"
	"github.com/productdata/pds/service"
)

// sincePattern is search_products' updated_since: an RFC 3339 date-time or
// full-date (the service reads a date as its midnight UTC). A pattern rather
// than JSON Schema's format, which has no single name for "either".
const sincePattern = `^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2}))?$`

// listTTL is how long a client may cache server/discover and tools/list: the
// tools change only with the binary.
const listTTL = time.Hour

// tool is one MCP tool: its wire description and the operation it runs.
type tool struct {
	Name         string      `json:"name"`
	Title        string      `json:"title"`
	Description  string      `json:"description"`
	InputSchema  obj         `json:"inputSchema"`
	OutputSchema obj         `json:"outputSchema"`
	Annotations  annotations `json:"annotations"`
	run          runFunc
}

// runFunc runs a tool's operation on the call's arguments.
type runFunc func(ctx context.Context, c domain.Caller, args json.RawMessage) (*service.Result, error)

type annotations struct {
	ReadOnlyHint  bool `json:"readOnlyHint"`
	OpenWorldHint bool `json:"openWorldHint"`
}

const identifierDesc = "The product identifier: a subject string namespace:value (gtin:09520123456788, internal_sku:SKU-1) or a bare value " +
	"(09520123456788, 9520123456788, SKU-1), read like validate_identifier with namespace auto. GTIN-8/12/13 are zero-padded to 14 digits; " +
	"internal SKUs are case-sensitive and at most 64 characters. Forms people hold are read too: digits with spaces or hyphens (952-0123-456788), " +
	"a UPC-A that lost its leading zero (12345678905), a GS1 element string or scanner data ((01)09520123456788(10)AB12, 0109520123456788, ]C1…) " +
	"and a GS1 Digital Link URI (https://id.gs1.org/01/09520123456788) are looked up by their GS1 primary key; data.interpreted_as echoes " +
	"the subject looked up and warnings say what was stripped or assumed."

func identifierInput() obj {
	return input([]string{"identifier"}, obj{
		"identifier": obj{"type": "string", "minLength": 1, "maxLength": 256, "description": identifierDesc},
	})
}

const productStatusDesc = "found: the product is stored. not_found: a source covers the identifier but nothing is stored for it (absence is an answer, not an error; " +
	"data.interpreted_as says what was looked up, data.has_product whether the product exists without a passport). " +
	"unknown: nothing can be said, see reason. ambiguous: the bare value names stored records in several namespaces; data.candidates lists them."

// call makes a tool's run of an operation: it decodes the arguments into
// the operation's Args type, refusing members the type does not name, and
// calls it.
func call[A any](op func(context.Context, domain.Caller, A) (*service.Result, error)) runFunc {
	return func(ctx context.Context, c domain.Caller, args json.RawMessage) (*service.Result, error) {
		var a A
		if err := service.DecodeArgs(args, &a); err != nil {
			return nil, err
		}
		return op(ctx, c, a)
	}
}

// newTools returns the tools in their fixed order, each running one
// operation of svc.
func newTools(svc *service.Service) []*tool {
	tools := []*tool{
		{
			Name:  "validate_identifier",
			Title: "Validate an identifier's syntax",
			Description: "Checks the syntax of an identifier (GTIN-8/12/13/14, GLN, SSCC or internal SKU): check digit, length, characters, namespace. " +
				"With namespace auto it also reads a GS1 element string ((01)09520123456788(17)261231(10)AB12, or scanner data): its primary key is judged " +
				"as the identifier, the other AIs are in data.elements, with data.element_string and data.digital_link. " +
				"Pure syntax: it never reads stored data and never says whether a product exists (use get_product for that). " +
				"Answers status found with data.valid true or false, data.subject (the canonical namespace:value, when valid), data.format, " +
				"data.expected_check_digit when the check digit is wrong, validation.technical (pass, warn, fail) and the syntax problems in warnings. " +
				"Answers status ambiguous when several namespaces fit (13 digits can be a GTIN-13 or a GLN): each of data.candidates carries its own format, validation and warnings, " +
				"and data.likely names the likely reading and why; use its subject unless you know the other is meant.",
			InputSchema: input([]string{"value"}, obj{
				"value": obj{"type": "string", "maxLength": service.MaxValueLength,
					"description": "The identifier to judge, as written (digits, or an internal SKU), at most 256 characters."},
				"namespace": obj{"type": "string", "enum": []string{"auto", "gtin", "gln", "sscc", "internal_sku"}, "default": "auto",
					"description": "The namespace to judge it in; auto (the default) infers it and answers ambiguous when several fit."},
			}),
			OutputSchema: envelope("found: one verdict (valid or not, see data.valid). ambiguous: several namespaces fit, see data.candidates.",
				object("The verdict.", []string{"input", "namespace", "valid", "normalized"}, obj{
					"input":                plain("string"),
					"namespace":            nullStr("The namespace judged, or null when ambiguous."),
					"valid":                plain("boolean"),
					"normalized":           str("The canonical form (GTINs zero-padded to 14 digits)."),
					"subject":              str("namespace:value, to pass to the other tools; present when valid."),
					"format":               strEnum("", formats...),
					"expected_check_digit": str("The right check digit, when the given one is wrong."),
					"candidates":           array("With ambiguous: one entry per namespace that fits.", validateCandidateSchema()),
					"likely": object("With ambiguous: the likely reading, and why.", []string{"namespace", "subject", "reason"}, obj{
						"namespace": strEnum("Its namespace.", namespaces...),
						"subject":   str("Its subject."),
						"reason":    str("Why it is the likely one."),
					}),
				}),
				obj{"validation": validationSchema()}),
			run: call(svc.Validate),
		},
		{
			Name:  "resolve_identifiers",
			Title: "Resolve identifiers in bulk",
			Description: "Looks up 1 to 1000 identifiers in one call and says, for each input in input order, what is stored. " +
				"data.items[i].status is found (the product's identity is under product), not_found (a source covers it but nothing is stored), " +
				"unknown (see reason: NO_SOURCE, no source covers it; OUT_OF_SCOPE, a valid GLN or SSCC, which name no product), " +
				"ambiguous (see candidates) or invalid (see error.code and error.detail). data.counts counts the items by status. " +
				"The envelope status is found when every item is found, not_found when every item is not_found, and partial otherwise; a partial batch is a success. " +
				"Prefer it to many get_product calls. Billed one unit per identifier.",
			InputSchema: input([]string{"identifiers"}, obj{
				"identifiers": obj{"type": "array", "minItems": 1, "maxItems": service.MaxBatch,
					"items":       obj{"type": "string", "maxLength": service.MaxValueLength, "description": identifierDesc},
					"description": "The identifiers to look up, 1 to 1000; each is a subject string or a bare value. More than 1000 is BATCH_TOO_LARGE: split the batch."},
			}),
			OutputSchema: envelope("found: every item found. not_found: every item not_found. partial: anything else (still a success).",
				object("One result per input, and counts.", []string{"items", "counts"}, obj{
					"items": array("One item per input, in input order.", object("", []string{"input", "status"}, obj{
						"input":          plain("string"),
						"status":         strEnum("", domain.StatusFound, domain.StatusNotFound, domain.StatusUnknown, domain.StatusAmbiguous, "invalid"),
						"subject":        plain("string"),
						"interpreted_as": str("The subject the input was read as and looked up; present on an absence and whenever the input was not that subject string itself."),
						"warnings":       array("What was stripped from the input or assumed about it to read it.", warningSchema()),
						"reason":         strEnum("With unknown: why.", reasons...),
						"candidates":     array("With ambiguous: the stored readings.", candidateSchema()),
						"product":        identitySchema(),
						"error": object("With invalid: what is wrong.", []string{"code", "detail"}, obj{
							"code":   plain("string"),
							"detail": plain("string"),
						}),
					})),
					"counts": object("Items per status.", []string{"found", "not_found", "unknown", "ambiguous", "invalid", "total"}, obj{
						"found":     count(),
						"not_found": count(),
						"unknown":   count(),
						"ambiguous": count(),
						"invalid":   count(),
						"total":     count(),
					}),
				}), withMeta(nil, false)),
			run: call(svc.Resolve),
		},
		{
			Name:  "get_product",
			Title: "Get a product's identity",
			Description: "Returns a product's identity: canonical subject, linked identifiers, trust level, lifecycle status, manufacturer, brand, " +
				"updated_at and has_passport. Use it to find out whether a product exists. Absence is an answer, not an error: " +
				"not_found means a source covers the identifier but nothing is stored for it; unknown with reason NO_SOURCE means no source covers it, " +
				"so nothing can be said; OUT_OF_SCOPE means it is a valid GLN or SSCC, which name no product; meta.coverage lists what was consulted. " +
				"ambiguous means a bare value names stored records in several namespaces: call again with one of data.candidates[].subject. " +
				"For the product's attributes call get_passport; for where a value came from, get_evidence.",
			InputSchema:  identifierInput(),
			OutputSchema: productEnvelope(productData(identitySchema()), nil),
			run:          call(svc.Identity),
		},
		{
			Name:  "get_passport",
			Title: "Get a product's passport",
			Description: "Returns the product's digital product passport as persisted: the latest non-superseded claim per predicate in claims " +
				"(value, unit, claim_type, trust_level, source_ref), data.attributes (predicate to value, a convenience projection of claims), " +
				"the latest verdict per validation axis in validation (technical, business, regulatory, authority; an absent axis was never evaluated), " +
				"and sources with the attribution text to show wherever you use their data. Nothing is fetched live: not_found means nothing has been " +
				"ingested for the identifier, not that no passport exists anywhere; data.has_product true says the product is known but has no passport yet, " +
				"false that no such product is stored. unknown with LICENCE_RESTRICTED means claims exist but their licences " +
				"forbid showing them. warnings say when claims were withheld. ambiguous works as in get_product.",
			InputSchema: identifierInput(),
			OutputSchema: productEnvelope(productData(object("The passport.", []string{"subject", "attributes", "updated_at"}, obj{
				"subject":    plain("string"),
				"attributes": obj{"type": "object", "description": "Predicate to value, derived from claims only."},
				"units":      obj{"type": "object", "description": "Predicate to unit (a string), for each attribute whose claim has one; left out when none has."},
				"updated_at": str("When the newest claim was retrieved (RFC 3339)."),
			})), mergeObj(obj{
				"claims":     array("The current claims, one per predicate: the evidence-bearing truth behind data.attributes.", claimSchema()),
				"validation": validationSchema(),
			}, sourcesMember(sourceSchema()))),
			run: call(svc.Passport),
		},
		{
			Name:  "get_evidence",
			Title: "Get the evidence behind a product's claims",
			Description: "Returns the evidence chain behind each current passport claim: data.chains[] holds the claim and its links, each with a locator " +
				"(content_hash, byte_range or json_pointer), the document it points into (url, media type, content hash, retrieval time) and the document's source in short " +
				"(id, kind, licence terms; the full source is in sources). " +
				"Use it to cite where a passport value came from or to judge how far to trust it. A claim with no links has no recorded evidence. " +
				"Absence and ambiguity work as in get_product.",
			InputSchema: identifierInput(),
			OutputSchema: withDefs(productEnvelope(productData(object("The evidence chains.", []string{"subject", "chains"}, obj{
				"subject": plain("string"),
				"chains": array("One chain per current claim.", object("", []string{"claim", "links"}, obj{
					"claim": claimSchema(),
					"links": array("Evidence links of the claim; empty when none is recorded.", object("", []string{"id", "locator", "document", "source"}, obj{
						"id":       plain("string"),
						"locator":  locatorSchema(),
						"document": docSchema(),
						"source":   linkSourceSchema(),
					})),
				})),
			})), sourcesMember(ref("source", ""))), obj{"source": sourceSchema()}),
			run: call(svc.Evidence),
		},
		{
			Name:  "search_products",
			Title: "Search products by manufacturer",
			Description: "Finds products by manufacturer name (fuzzy and trigram-ranked, so typos are tolerated), optionally filtered by trust_level_min, " +
				"has_passport and updated_since. Returns data.items[] (subject, manufacturer, brand, trust_level, has_passport, updated_at, score), one page at a time: " +
				"when meta.next_cursor is present, call again with the same arguments plus cursor for the next page; when it is absent the results have ended. " +
				"No match is an answer (status not_found, empty items), not an error. Only these filters exist: brand, category and market are refused " +
				"(UNSUPPORTED_FILTER). sort is relevance (the default with a manufacturer) or updated_at (newest first, the default without one). " +
				"To look up known identifiers use get_product or resolve_identifiers instead.",
			InputSchema: input(nil, obj{
				"manufacturer":    obj{"type": "string", "minLength": 1, "maxLength": 200, "description": "Manufacturer name to match, fuzzily (1 to 200 characters)."},
				"trust_level_min": obj{"type": "string", "enum": domain.TrustLevels, "description": "Lowest acceptable trust level, L0 (lowest) to L5."},
				"has_passport":    boolean("true: only products with a persisted passport; false: only products without one."),
				"updated_since": obj{"type": "string", "pattern": sincePattern,
					"description": "Only products updated at or after this RFC 3339 date-time, such as 2025-01-31T00:00:00Z, or date, such as 2025-01-31 (its midnight UTC)."},
				"sort":   obj{"type": "string", "enum": []string{"relevance", "updated_at"}, "description": "relevance (needs manufacturer; its default) or updated_at (newest first; the default without manufacturer)."},
				"cursor": obj{"type": "string", "minLength": 1, "description": "meta.next_cursor from the previous page, with the same other arguments; leave it out for the first page."},
				"limit":  obj{"type": "integer", "minimum": 1, "maximum": service.MaxSearchLimit, "default": service.DefaultSearchLimit, "description": "Page size, 1 to 100 (default 20)."},
			}),
			OutputSchema: envelope("found: at least one match. not_found: nothing matched.",
				object("One page of matches.", []string{"items"}, obj{
					"items": array("The matches of this page, best first (or newest first with sort updated_at).", object("", []string{"subject", "manufacturer", "trust_level", "has_passport", "updated_at"}, obj{
						"subject":      str("Pass it to get_product, get_passport or get_evidence."),
						"manufacturer": plain("string"),
						"brand":        plain("string", "null"),
						"trust_level":  strEnum("", domain.TrustLevels...),
						"has_passport": boolean("Whether get_passport would answer found."),
						"updated_at":   str("RFC 3339."),
						"score":        obj{"type": []string{"number", "null"}, "description": "Relevance of the name to the query, 0 to 1; null without a manufacturer."},
					})),
				}), withMeta(nil, true)),
			run: call(svc.Search),
		},
		{
			Name:  "parse_digital_link",
			Title: "Parse a GS1 Digital Link URI",
			Description: "Parses a GS1 Digital Link URI (syntax 1.7.0), such as https://id.gs1.org/01/09520123456788/10/ABC123, into its primary identifier " +
				"(data.primary: ai, name, value and subject), its qualifiers (batch/lot, serial, ...) and data attributes in URI order, the GS1 element string " +
				"((01)09520123456788(10)ABC123) and the canonical URI on id.gs1.org. Syntax only: nothing is fetched and nothing is looked up; to learn about " +
				"the product, pass data.primary.subject to get_product or get_passport.",
			InputSchema: input([]string{"uri"}, obj{
				"uri": obj{"type": "string", "minLength": 1, "maxLength": 4096, "description": "The Digital Link URI, http or https, at most 4096 characters."},
			}),
			OutputSchema: withDefs(envelope("found: the URI parsed.", object("The parsed URI.", []string{"uri", "stem", "primary", "qualifiers", "attributes", "ignored_query_params", "element_string", "canonical_uri"}, obj{
				"uri":                  str("The URI as given."),
				"stem":                 str("Scheme, host and any path before the identifier."),
				"primary":              ref("element", "The primary identifier; subject is present when pds has a namespace for it."),
				"qualifiers":           array("Key qualifiers, in URI order.", ref("element", "")),
				"attributes":           array("Data attributes from the query, in URI order.", ref("element", "")),
				"ignored_query_params": array("Query parameters that are not GS1 application identifiers.", plain("string")),
				"element_string":       str("Such as (01)09520123456788(10)ABC123."),
				"canonical_uri":        str("The canonical URI on https://id.gs1.org."),
			}), nil), obj{"element": elementSchema()}),
			run: call(svc.ParseDigitalLink),
		},
		{
			Name:  "get_source",
			Title: "Get a data source and its licence",
			Description: "Describes a data source by its id (a UUID, as found in a claim's source_ref, a document's source_id or meta.coverage): its kind, origin, " +
				"trust tier, who operates it (operator) and its licence terms: licence_name, may_store_raw, may_redistribute_verbatim, may_redistribute_derived " +
				"and attribution_required (text to show wherever its data is used). status not_found: no source with that id is visible to this key.",
			InputSchema: input([]string{"source_id"}, obj{
				"source_id": obj{"type": "string", "pattern": "^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$",
					"description": "The source id, a UUID such as 11111111-0000-4000-8000-000000000001."},
			}),
			OutputSchema: envelope("found: the source. not_found: no such source is visible to this key.",
				nullable("The source (null when not found).", object("The source and its licence.", append(append([]string{}, sourceRequired...), "operator"),
					mergeObj(sourceProps(), obj{"operator": nullable("Who operates it, or null.", object("", []string{"id", "name"}, obj{
						"id":   plain("string"),
						"name": plain("string"),
					}))}))), withMeta(nil, false)),
			run: call(svc.Source),
		},
		{
			Name:  "whoami",
			Title: "Identify the calling key",
			Description: "Tells which tenant and scopes the API key in use resolves to (data.tenant, data.scopes, and data.key_id, a public id of the key, never the key), " +
				"and where it stands against its limits (data.limits.quota: the tenant's quota used and remaining this period; data.limits.rate: the key's rate bucket; null when the key has no such limit). " +
				"Use it to confirm that the connection works, to find out why a tool answers FORBIDDEN (each tool also needs its operation's scope: " +
				"identifiers:validate, products:resolve, products:read, products:search, digital-links:parse, sources:read), or how much quota is left before TENANT_QUOTA_EXCEEDED. " +
				"Takes no arguments; not billed, and takes no rate-limit token.",
			InputSchema: input(nil, obj{}),
			OutputSchema: envelope("found: always.", object("The key's tenant, scopes and limits.", []string{"tenant", "scopes", "key_id", "limits"}, obj{
				"tenant": plain("string"),
				"scopes": array("", plain("string")),
				"key_id": str("A public identifier of the key (never the key)."),
				"limits": object("Where the key stands against its quota and rate limit.", []string{"quota", "rate"}, obj{
					"quota": nullable("The tenant's quota in the current period (shared by every key of the tenant), or null when the key has none.",
						object("", []string{"limit", "period", "used", "remaining", "resets_at"}, obj{
							"limit":     integer("Billing units per period.", 1),
							"period":    strEnum("A UTC day or month.", "day", "month"),
							"used":      count(),
							"remaining": count(),
							"resets_at": str("When the next period starts (RFC 3339)."),
						})),
					"rate": nullable("The key's rate bucket now, or null when the key has no rate limit.",
						object("", []string{"per_second", "burst", "used", "remaining", "full_in_seconds"}, obj{
							"per_second":      obj{"type": "number", "minimum": 0, "description": "Calls a second the bucket refills."},
							"burst":           integer("Calls the full bucket allows at once.", 1),
							"used":            integer("used + remaining = burst.", 0),
							"remaining":       integer("Calls that may be made at once now.", 0),
							"full_in_seconds": integer("Seconds until the bucket is full again.", 0),
						})),
				}),
			}), nil),
			run: call(svc.Whoami),
		},
	}
	for _, t := range tools {
		t.Annotations = annotations{ReadOnlyHint: true, OpenWorldHint: false}
	}
	return tools
}

func elementSchema() obj {
	return object("", []string{"ai", "name", "value"}, obj{
		"ai":      str("The GS1 application identifier, such as 01 or 10."),
		"name":    str("Such as GTIN or BATCH/LOT."),
		"value":   plain("string"),
		"subject": str("The subject string, where pds has a namespace for it."),
	})
}

func mergeObj(a, b obj) obj {
	out := obj{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// callTool runs a tools/call: the protocol errors (unknown tool, arguments
// not an object) are JSON-RPC errors; whatever the operation answers is a
// result.
func (h *handler) callTool(ctx context.Context, c domain.Caller, params json.RawMessage, requestID string, start time.Time) (json.RawMessage, error) {
	var p struct {
		Name      json.RawMessage `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, rpcErr(codeInvalidParams, "params must be an object with name and arguments")
	}
	var name string
	if p.Name == nil || json.Unmarshal(p.Name, &name) != nil {
		return nil, rpcErr(codeInvalidParams, "params.name must be the name of a tool (a string); tools/list lists them")
	}
	t := h.byName[name]
	if t == nil {
		h.count("unknown", "unknown_tool", c, nil)
		return nil, rpcErr(codeInvalidParams, "unknown tool "+quote(name)+"; tools/list lists the tools this server has")
	}
	args := p.Arguments
	if args == nil {
		args = json.RawMessage("{}")
	}
	if !isObject(args) {
		return nil, rpcErr(codeInvalidParams, "params.arguments must be an object")
	}
	res, err := runTool(ctx, h.log, t, c, args, requestID, start)
	if err != nil {
		h.count(t.Name, "error", c, err)
	} else {
		h.count(t.Name, "ok", c, nil)
	}
	return encode(res)
}

// runTool runs t's operation and makes the call's result: the envelope as
// text and structuredContent, or, when the operation fails, the failure
// (also returned as err, for counting). Both entry points, /v1/mcp and the
// SDK server of pds mcp, answer with it.
func runTool(ctx context.Context, log *slog.Logger, t *tool, c domain.Caller, args json.RawMessage, requestID string, start time.Time) (callResult, error) {
	res, err := t.run(ctx, c, args)
	if err != nil {
		return toolFailure(log, t, err, requestID), err
	}
	env := res.AppendEnvelope(nil, requestID, time.Since(start))
	res.Release() // env is a copy of everything res held
	return callResult{ResultType: "complete", Content: []content{{Type: "text", Text: string(env)}},
		StructuredContent: env, IsError: false}, nil
}

// count reports a tool call to the metrics, if any: its outcome, and a
// refusal by a rate limit or quota under the caller's tenant.
func (h *handler) count(tool, outcome string, c domain.Caller, err error) {
	if h.metrics == nil {
		return
	}
	h.metrics.ToolCall(tool, outcome)
	var de *domain.Error
	if errors.As(err, &de) && (de.Code == domain.CodeRateLimited || de.Code == domain.CodeTenantQuotaExceeded) {
		h.metrics.Refused(c.Tenant, de.Code)
	}
}

// callResult is a tools/call result.
type callResult struct {
	ResultType        string          `json:"resultType"`
	Content           []content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError"`
}

type content struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// toolFailure is the result of an operation that failed: isError, and a
// text block with the Problem and what to do instead.
func toolFailure(log *slog.Logger, t *tool, err error, requestID string) callResult {
	de := domain.AsError(err)
	if de.Code == domain.CodeInternal {
		log.Error("internal error", "request_id", requestID, "tool", t.Name, "error", err.Error())
	}
	p, _ := encode(httpwire.NewProblem(de, requestID))
	text := string(p) + "\n\n" + advice(t.Name, de)
	return callResult{ResultType: "complete", Content: []content{{Type: "text", Text: text}}, IsError: true}
}

// instructions is the paragraph for the model that both entry points send.
const instructions = "pds answers questions about products from a persisted snapshot of product data: identity, digital product passport " +
	"(claims and validation verdicts), the evidence behind each claim, and the sources with their licences. Identifiers are subject strings " +
	"such as gtin:09520123456788 or bare values. Absence is an answer, not an error: not_found and unknown (with a reason) are results. " +
	"Show a source's attribution_required text wherever you use its data."

// discoverResult is the server/discover result.
func discoverResult() any {
	version := buildinfo.Version()
	return map[string]any{
		"resultType":        "complete",
		"supportedVersions": []string{ProtocolVersion},
		"capabilities":      map[string]any{"tools": map[string]any{}},
		"instructions":      instructions,
		"ttlMs":             listTTL.Milliseconds(),
		"cacheScope":        "public",
		"_meta": map[string]any{metaServerInfo: map[string]any{
			"name": "pds", "title": "Product Data Service", "version": version,
		}},
	}
}

// listResult is the tools/list result: every tool, one page, fixed order.
func listResult(tools []*tool) any {
	return map[string]any{
		"resultType": "complete",
		"tools":      tools,
		"ttlMs":      listTTL.Milliseconds(),
		"cacheScope": "public",
	}
}
