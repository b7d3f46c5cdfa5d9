package mcp

import (
	"github.com/productdata/pds/domain"
)

// obj is a JSON Schema (2020-12) object, or a part of one.
type obj = map[string]any

// The schema builders below use a small subset of JSON Schema: type,
// properties, required, additionalProperties (false, in input schemas only),
// items, enum, pattern, minLength, maxLength, minimum, maximum, minItems,
// maxItems, anyOf, $defs and $ref (to "#/$defs/NAME" only), format and
// description. The tests check each schema with a checker for exactly that
// subset, and with the JSON Schema library the Go SDK uses.
//
// tools/list is what every agent reads first, so output schemas stay lean:
// a member is described only where its name and type do not say it all
// (the tool's description explains the answer as a whole), and a
// subschema used more than once in a tool is written once, in $defs.

// described adds desc to s, unless desc is empty.
func described(s obj, desc string) obj {
	if desc != "" {
		s["description"] = desc
	}
	return s
}

func str(desc string) obj { return described(obj{"type": "string"}, desc) }

// plain is a schema of the given JSON types and nothing else.
func plain(types ...string) obj {
	if len(types) == 1 {
		return obj{"type": types[0]}
	}
	return obj{"type": types}
}

func strEnum(desc string, values ...string) obj {
	return described(obj{"type": "string", "enum": values}, desc)
}

func nullStr(desc string) obj { return described(obj{"type": []string{"string", "null"}}, desc) }

func boolean(desc string) obj { return described(obj{"type": "boolean"}, desc) }

func integer(desc string, min int) obj {
	return described(obj{"type": "integer", "minimum": min}, desc)
}

// count is a number of things.
func count() obj { return obj{"type": "integer", "minimum": 0} }

func array(desc string, items obj) obj {
	return described(obj{"type": "array", "items": items}, desc)
}

// ref points at the subschema name of the tool's $defs (see withDefs).
func ref(name, desc string) obj { return described(obj{"$ref": "#/$defs/" + name}, desc) }

// withDefs adds defs, the subschemas ref points at, to a tool's schema.
func withDefs(schema, defs obj) obj {
	schema["$defs"] = defs
	return schema
}

// object is an output object: members besides props may be added later, so
// other members are allowed.
func object(desc string, required []string, props obj) obj {
	o := obj{"type": "object", "properties": props}
	if desc != "" {
		o["description"] = desc
	}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

// input is a tool's inputSchema: nothing but props.
func input(required []string, props obj) obj {
	o := obj{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

// nullable allows null besides s.
func nullable(desc string, s obj) obj {
	return described(obj{"anyOf": []any{s, obj{"type": "null"}}}, desc)
}

var (
	statuses = []string{domain.StatusFound, domain.StatusNotFound, domain.StatusUnknown, domain.StatusAmbiguous, domain.StatusPartial}
	reasons  = []string{domain.ReasonNoSource, domain.ReasonSourceUnavailable, domain.ReasonOutOfScope,
		domain.ReasonLicenceRestricted, domain.ReasonTimeout, domain.ReasonAmbiguousInput}
	skipReasons = []string{domain.SkipLicenceRestricted, domain.SkipCircuitOpen, domain.SkipOutOfScope, domain.SkipTimeout, domain.SkipDisabled}
	namespaces  = []string{"gtin", "gln", "sscc", "internal_sku"}
	formats     = []string{"GTIN-8", "GTIN-12", "GTIN-13", "GTIN-14", "GLN", "SSCC", "INTERNAL_SKU"}
	axisValues  = []string{"pass", "fail", "warn", "not_assessed"}
)

const requestIDPattern = `^req_[0-9A-HJKMNP-TV-Z]{26}$`

// envelope is the outputSchema of a tool: the REST envelope (spec 2.1) with
// data as given and extra adding (or replacing) envelope members: reason,
// sources, validation, or a meta with coverage and next_cursor, each only
// where the tool's operation can answer it.
func envelope(statusDesc string, data obj, extra obj) obj {
	props := obj{
		"request_id": obj{"type": "string", "pattern": requestIDPattern, "description": "Identifies this call (also the x-request-id header); quote it when reporting a problem."},
		"status":     strEnum(statusDesc, statuses...),
		"data":       data,
		"warnings":   array("Advisories about the answer (withheld claims, demo prefixes, syntax problems).", warningSchema()),
		"meta":       metaSchema(false, false),
	}
	for k, v := range extra {
		props[k] = v
	}
	return object("", []string{"request_id", "status", "meta"}, props)
}

// reasonMember is the envelope's reason, for the tools that can answer unknown.
func reasonMember() obj {
	return obj{"reason": strEnum("Present exactly when status is unknown: NO_SOURCE, no enabled source covers the identifier; "+
		"OUT_OF_SCOPE, a valid GLN or SSCC, which name no product; LICENCE_RESTRICTED, claims exist but their licences forbid showing them.", reasons...)}
}

func warningSchema() obj {
	return object("", []string{"code", "severity"}, obj{
		"code":     obj{"type": "string", "pattern": `^[A-Z][A-Z0-9_]+$`},
		"severity": obj{"type": "string", "enum": []string{domain.SeverityInfo, domain.SeverityWarn, domain.SeverityError}},
		"detail":   obj{"type": "string"},
	})
}

// metaSchema is the envelope's meta: duration_ms always, coverage and
// next_cursor for the tools whose operations answer them.
func metaSchema(coverage, cursor bool) obj {
	props := obj{
		"duration_ms": obj{"type": "integer", "minimum": 0},
		"snapshot": object("The snapshot the answer was read from; absent when the call reads none.", []string{"build_id", "created_at"}, obj{
			"build_id":   plain("string"),
			"created_at": str("RFC 3339."),
		}),
	}
	if coverage {
		props["coverage"] = object("What was consulted, so that 'does not exist' can be told from 'not covered'; present on absence and on batches.",
			[]string{"sources_consulted"}, obj{
				"sources_consulted": array("Source ids; pass one to get_source.", obj{"type": "string"}),
				"sources_skipped": array("Sources that cover the identifier but were not used.",
					object("", []string{"id", "reason"}, obj{
						"id":     obj{"type": "string"},
						"reason": obj{"type": "string", "enum": skipReasons},
					})),
			})
	}
	if cursor {
		props["next_cursor"] = str("Present when more results remain: pass it as cursor, with the same other arguments.")
	}
	return object("", []string{"duration_ms"}, props)
}

// withMeta is extra with a meta that has coverage and, if cursor, next_cursor.
func withMeta(extra obj, cursor bool) obj {
	return mergeObj(extra, obj{"meta": metaSchema(true, cursor)})
}

// productEnvelope is the outputSchema of a tool about one product: it can
// answer unknown with a reason, and meta.coverage on absence.
func productEnvelope(data obj, extra obj) obj {
	return envelope(productStatusDesc, data, withMeta(mergeObj(reasonMember(), extra), false))
}

func validationSchema() obj {
	axis := func(what string) obj { return strEnum(what, axisValues...) }
	return object("The latest verdict per axis; an absent axis was never evaluated (not_assessed is a recorded verdict). Never collapse the axes into one score.", nil, obj{
		"technical":  axis("Syntax, check digit, structure."),
		"business":   axis(""),
		"regulatory": axis(""),
		"authority":  strEnum("Whether an authority attested the data.", "none", "attested"),
	})
}

func claimSchema() obj {
	return object("One statement about the subject, with where it came from and how far to trust it.",
		[]string{"id", "subject", "predicate", "object", "claim_type", "trust_level", "retrieved_at"}, obj{
			"id":        plain("string"),
			"subject":   plain("string"),
			"predicate": str("Such as name, net_content, carbon_kg."),
			"object": object("", []string{"value"}, obj{
				"value":    obj{"description": "The claimed value, of any JSON type."},
				"unit":     plain("string", "null"),
				"language": plain("string", "null"),
			}),
			"claim_type":          strEnum("INFERENCE and ESTIMATION are derived by a method and are never facts.", domain.ClaimTypes...),
			"method":              plain("string", "null"),
			"method_version":      plain("string", "null"),
			"source_ref":          nullStr("The source's id; pass it to get_source."),
			"publisher_ref":       plain("string", "null"),
			"evidence_refs":       array("Evidence link ids (see get_evidence).", plain("string")),
			"verification_status": strEnum("", domain.VerificationStatuses...),
			"verification_method": plain("string", "null"),
			"trust_level":         strEnum("L0 (lowest) to L5.", domain.TrustLevels...),
			"confidence":          obj{"type": "number", "minimum": 0, "maximum": 1},
			"published_at":        plain("string", "null"),
			"retrieved_at":        plain("string"),
			"superseded_by":       nullStr("The replacing claim's id; null while current."),
		})
}

func sourceProps() obj {
	return obj{
		"id":                        plain("string"),
		"kind":                      strEnum("", domain.SourceKinds...),
		"origin":                    str("A URL or name."),
		"operator_party_id":         plain("string", "null"),
		"trust_tier":                obj{"type": "integer", "minimum": 0, "maximum": domain.MaxTrustTier, "description": "4 is the most trusted."},
		"robots_policy":             plain("string", "null"),
		"enabled":                   plain("boolean"),
		"licence_name":              plain("string"),
		"may_store_raw":             plain("boolean"),
		"may_redistribute_verbatim": plain("boolean"),
		"may_redistribute_derived":  plain("boolean"),
		"attribution_required":      nullStr("Text to show wherever its data is used; null when none is required."),
		"licence_determined_by":     plain("string"),
		"licence_determined_at":     plain("string"),
		"licence_review_due_at":     plain("string"),
	}
}

var sourceRequired = []string{"id", "kind", "origin", "trust_tier", "licence_name"}

func sourceSchema() obj {
	return object("A data source and its licence terms.", sourceRequired, sourceProps())
}

// linkSourceSchema is the short form of a source inside an evidence link.
func linkSourceSchema() obj {
	p := sourceProps()
	return object("The link's source in short; the full source is in the envelope's sources.",
		[]string{"id", "kind", "licence_name", "may_redistribute_verbatim", "may_redistribute_derived", "attribution_required"}, obj{
			"id": p["id"], "kind": p["kind"], "licence_name": p["licence_name"], "may_redistribute_verbatim": p["may_redistribute_verbatim"],
			"may_redistribute_derived": p["may_redistribute_derived"], "attribution_required": p["attribution_required"],
		})
}

// sourcesMember is the envelope's sources, each item as source says.
func sourcesMember(source obj) obj {
	return obj{"sources": array("Every source that contributed to the answer: show attribution_required wherever you use the data.", source)}
}

// validateCandidateSchema is a candidate of an ambiguous validate answer,
// judged on its own.
func validateCandidateSchema() obj {
	c := candidateSchema()
	props := mergeObj(c["properties"].(obj), obj{
		"format":     strEnum("The identifier format of this reading.", formats...),
		"validation": object("This reading's own verdict.", []string{"technical"}, obj{"technical": strEnum("pass, or warn when valid with advisories.", axisValues...)}),
		"warnings":   array("This reading's own advisories.", warningSchema()),
	})
	return object("One reading of an ambiguous value, with its own format, verdict and advisories.", []string{"namespace", "valid", "normalized", "subject", "format", "validation"}, props)
}

func candidateSchema() obj {
	return object("", []string{"namespace", "valid", "normalized", "subject"}, obj{
		"namespace":  strEnum("", namespaces...),
		"valid":      plain("boolean"),
		"normalized": plain("string"),
		"subject":    str("Pass it to the other tools for this reading."),
	})
}

// ambiguousData is the data of a product answer whose identifier names
// stored records in several namespaces.
func ambiguousData() obj {
	return object("With ambiguous: call again with one candidate's subject.",
		[]string{"input", "candidates"}, obj{
			"input":      plain("string"),
			"candidates": array("", candidateSchema()),
		})
}

func identitySchema() obj {
	return object("A product's identity.", []string{"subject", "identifiers", "trust_level", "status", "manufacturer", "manufacturer_gln", "brand", "updated_at", "has_passport"}, obj{
		"subject":          str("The canonical subject (namespace:value)."),
		"identifiers":      array("Every identifier linked to the product, canonical first.", plain("string")),
		"trust_level":      strEnum("L0 (lowest) to L5.", domain.TrustLevels...),
		"status":           str("Lifecycle status, such as active."),
		"manufacturer":     plain("string"),
		"manufacturer_gln": plain("string", "null"),
		"brand":            plain("string", "null"),
		"updated_at":       plain("string"),
		"has_passport":     boolean("True exactly when get_passport would answer found for this key."),
	})
}

func docSchema() obj {
	return object("The document the claim was read from.", []string{"id", "source_id", "media_type", "url", "content_hash", "size", "retrieved_at"}, obj{
		"id":           plain("string"),
		"source_id":    plain("string"),
		"media_type":   plain("string"),
		"url":          plain("string", "null"),
		"content_hash": obj{"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"},
		"size":         count(),
		"retrieved_at": plain("string"),
	})
}

func locatorSchema() obj {
	return object("Where in the document the claim is.", []string{"kind"}, obj{
		"kind":         strEnum("", domain.LocatorContentHash, domain.LocatorByteRange, domain.LocatorJSONPointer),
		"content_hash": str("With content_hash: the whole document's hash."),
		"start":        integer("With byte_range: the first byte.", 0),
		"end":          integer("With byte_range: the byte after the last.", 0),
		"pointer":      str("With json_pointer: an RFC 6901 JSON Pointer."),
	})
}

// productData is the data of an answer about one product identifier: the
// found payload, the ambiguous candidates, or what an absence looked up.
func productData(found obj) obj {
	return obj{"anyOf": []any{found, ambiguousData(), absenceData()},
		"description": "With found: the payload described here (interpreted_as: the subject looked up, when the identifier was not that subject string itself). " +
			"With ambiguous: input and candidates. With not_found and unknown: input, interpreted_as and has_product."}
}

// absenceData is the data of an absence: what was looked up.
func absenceData() obj {
	return object("What was looked up and found absent.", []string{"input", "interpreted_as", "has_product"}, obj{
		"input":          plain("string"),
		"interpreted_as": str("The subject it was read as and looked up; warnings say what was stripped or assumed."),
		"has_product": boolean("True when a product is stored under it but has no passport (or its claims are all withheld): " +
			"no passport yet, rather than no such product."),
		"subject": str("With has_product: the product's canonical subject."),
	})
}
