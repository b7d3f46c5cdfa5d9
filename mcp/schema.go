package mcp

import (
	"github.com/productdata/pds/domain"
)

// obj is a JSON Schema (2020-12) object, or a part of one.
type obj = map[string]any

// The schema builders below use a small subset of JSON Schema: type,
// properties, required, additionalProperties (false, in input schemas only),
// items, enum, pattern, minLength, maxLength, minimum, maximum, minItems,
// maxItems, anyOf, format and description. The tests check each schema with
// a checker for exactly that subset.

func str(desc string) obj { return obj{"type": "string", "description": desc} }

func strEnum(desc string, values ...string) obj {
	return obj{"type": "string", "enum": values, "description": desc}
}

func nullStr(desc string) obj { return obj{"type": []string{"string", "null"}, "description": desc} }

func boolean(desc string) obj { return obj{"type": "boolean", "description": desc} }

func integer(desc string, min int) obj {
	return obj{"type": "integer", "minimum": min, "description": desc}
}

func array(desc string, items obj) obj {
	return obj{"type": "array", "items": items, "description": desc}
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
	return obj{"anyOf": []any{s, obj{"type": "null"}}, "description": desc}
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
// data as given and extra describing the envelope members the tool fills.
func envelope(statusDesc string, data obj, extra obj) obj {
	props := obj{
		"request_id": obj{"type": "string", "pattern": requestIDPattern,
			"description": "Identifies this call; the same value is in the x-request-id response header. Quote it when reporting a problem."},
		"status": strEnum(statusDesc, statuses...),
		"reason": strEnum("Why the answer is unknown; present exactly when status is unknown. NO_SOURCE: no enabled source covers the identifier, so nothing can be said. "+
			"OUT_OF_SCOPE: the identifier is valid but names no product (a GLN or SSCC). LICENCE_RESTRICTED: claims exist but their licences forbid showing them.", reasons...),
		"data":     data,
		"warnings": array("Advisories about the answer (withheld claims, demo prefixes, syntax problems).", warningSchema()),
		"meta":     metaSchema(),
	}
	for k, v := range extra {
		props[k] = v
	}
	return object("", []string{"request_id", "status", "meta"}, props)
}

func warningSchema() obj {
	return object("", []string{"code", "severity"}, obj{
		"code":     obj{"type": "string", "pattern": `^[A-Z][A-Z0-9_]+$`, "description": "Machine-readable warning code."},
		"severity": strEnum("How much the warning matters.", domain.SeverityInfo, domain.SeverityWarn, domain.SeverityError),
		"detail":   str("What the warning means here."),
	})
}

func metaSchema() obj {
	return object("Facts about how the answer was made.", []string{"duration_ms"}, obj{
		"duration_ms": integer("Time the server spent on the call, in milliseconds.", 0),
		"coverage": object("What was consulted, so that 'does not exist' can be told from 'not covered'. Present on absence and on batches.",
			[]string{"sources_consulted"}, obj{
				"sources_consulted": array("Ids of the sources consulted (pass one to get_source to learn about it).", str("A source id (UUID).")),
				"sources_skipped": array("Sources that cover the identifier but were not used, and why.",
					object("", []string{"id", "reason"}, obj{
						"id":     str("The source id (UUID)."),
						"reason": strEnum("Why it was skipped.", skipReasons...),
					})),
			}),
		"next_cursor": str("Present when more results remain: pass it as cursor, with the same other arguments, to get the next page. Absent: the results have ended."),
	})
}

func validationSchema() obj {
	axis := func(what string) obj {
		return strEnum("The latest "+what+" verdict; absent when no rule of this class was evaluated (which differs from not_assessed, a recorded verdict).", axisValues...)
	}
	return object("Validation verdicts on up to four independent axes; never collapse them into one score.", nil, obj{
		"technical":  axis("technical (syntax, check digit, structure)"),
		"business":   axis("business-rule"),
		"regulatory": axis("regulatory"),
		"authority":  strEnum("Whether an authority attested the data.", "none", "attested"),
	})
}

func claimSchema() obj {
	return object("A claim: one statement about the subject, with where it came from and how far to trust it.",
		[]string{"id", "subject", "predicate", "object", "claim_type", "trust_level", "retrieved_at"}, obj{
			"id":        str("Claim id."),
			"subject":   str("The subject the claim is about, as namespace:value."),
			"predicate": str("What is claimed (such as name, net_content, carbon_kg)."),
			"object": object("The claimed value.", []string{"value"}, obj{
				"value":    obj{"description": "The value, of any JSON type."},
				"unit":     nullStr("Unit of the value, or null."),
				"language": nullStr("Language of a text value, or null."),
			}),
			"claim_type": strEnum("What kind of statement it is. INFERENCE and ESTIMATION are derived by a method and are never facts.",
				domain.ClaimTypes...),
			"method":              nullStr("The method that derived an INFERENCE or ESTIMATION claim."),
			"method_version":      nullStr("Version of the method."),
			"source_ref":          nullStr("Id of the source the claim came from (pass it to get_source)."),
			"publisher_ref":       nullStr("Who published the claim, if known."),
			"evidence_refs":       array("Ids of evidence links (see get_evidence).", str("Evidence id.")),
			"verification_status": strEnum("How the claim was verified.", domain.VerificationStatuses...),
			"verification_method": nullStr("How it was verified."),
			"trust_level":         strEnum("Trust level, L0 (lowest) to L5.", domain.TrustLevels...),
			"confidence":          obj{"type": "number", "minimum": 0, "maximum": 1, "description": "Confidence of a derived claim, 0 to 1."},
			"published_at":        nullStr("When the source published it (RFC 3339), or null."),
			"retrieved_at":        str("When pds retrieved it (RFC 3339)."),
			"superseded_by":       nullStr("Id of the claim that replaces this one, or null when it is current."),
		})
}

func sourceProps() obj {
	return obj{
		"id":                        str("Source id (UUID)."),
		"kind":                      strEnum("What kind of source it is.", domain.SourceKinds...),
		"origin":                    str("Where its data comes from (a URL or name)."),
		"operator_party_id":         nullStr("Id of the party that operates it."),
		"trust_tier":                obj{"type": "integer", "minimum": 0, "maximum": domain.MaxTrustTier, "description": "Trust tier, 0 to 4 (4 is the most trusted)."},
		"robots_policy":             nullStr("Its robots policy, if any."),
		"enabled":                   boolean("False when the source is disabled."),
		"licence_name":              str("Name of the licence its data is under."),
		"may_store_raw":             boolean("Whether the licence permits storing raw data."),
		"may_redistribute_verbatim": boolean("Whether the licence permits redistributing the data as it is."),
		"may_redistribute_derived":  boolean("Whether the licence permits redistributing data derived from it."),
		"attribution_required":      nullStr("Attribution text to show wherever its data is used, or null when none is required."),
		"licence_determined_by":     str("Who determined the licence terms."),
		"licence_determined_at":     str("When they were determined (RFC 3339)."),
		"licence_review_due_at":     str("When they are due for review (RFC 3339)."),
	}
}

var sourceRequired = []string{"id", "kind", "origin", "trust_tier", "licence_name"}

func sourceSchema() obj {
	return object("A data source and its licence terms.", sourceRequired, sourceProps())
}

func sourcesMember() obj {
	return obj{"sources": array("Every source that contributed to the answer, with its licence and attribution text: show attribution_required wherever you use the data.", sourceSchema())}
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
	return object("One reading of an ambiguous value.", []string{"namespace", "valid", "normalized", "subject"}, obj{
		"namespace":  strEnum("The namespace of this reading.", namespaces...),
		"valid":      boolean("Whether the value is valid in this namespace."),
		"normalized": str("The value in this namespace's canonical form."),
		"subject":    str("The subject string to pass to the other tools for this reading."),
	})
}

// ambiguousData is the data of a product answer whose identifier names
// stored records in several namespaces.
func ambiguousData() obj {
	return object("The identifier names stored records in several namespaces: call again with one candidate's subject.",
		[]string{"input", "candidates"}, obj{
			"input":      str("The identifier as given."),
			"candidates": array("The stored readings.", candidateSchema()),
		})
}

func identitySchema() obj {
	return object("A product's identity.", []string{"subject", "identifiers", "trust_level", "status", "manufacturer", "brand", "updated_at", "has_passport"}, obj{
		"subject":          str("The canonical subject (namespace:value)."),
		"identifiers":      array("Every identifier linked to the product, canonical first.", str("A subject string.")),
		"trust_level":      strEnum("Trust level of the product record, L0 (lowest) to L5.", domain.TrustLevels...),
		"status":           str("Lifecycle status of the product (such as active)."),
		"manufacturer":     str("Manufacturer name."),
		"manufacturer_gln": str("The manufacturer's GLN, when known."),
		"brand":            nullStr("Brand, or null."),
		"updated_at":       str("When the record last changed (RFC 3339)."),
		"has_passport":     boolean("True exactly when get_passport would answer found for this key."),
	})
}

func docSchema() obj {
	return object("The document a claim was read from.", []string{"id", "source_id", "media_type", "content_hash", "size", "retrieved_at"}, obj{
		"id":           str("Document id."),
		"source_id":    str("Id of the source it came from."),
		"media_type":   str("Its media type."),
		"url":          str("Where it was retrieved from."),
		"content_hash": obj{"type": "string", "pattern": "^sha256:[0-9a-f]{64}$", "description": "SHA-256 of its content."},
		"size":         integer("Its size in bytes.", 0),
		"retrieved_at": str("When it was retrieved (RFC 3339)."),
	})
}

func locatorSchema() obj {
	return object("Where in the document the claim is.", []string{"kind"}, obj{
		"kind":         strEnum("The kind of locator.", domain.LocatorContentHash, domain.LocatorByteRange, domain.LocatorJSONPointer),
		"content_hash": str("With content_hash: the hash of the whole document."),
		"start":        integer("With byte_range: the first byte.", 0),
		"end":          integer("With byte_range: the byte after the last.", 0),
		"pointer":      str("With json_pointer: an RFC 6901 JSON Pointer into the document."),
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
		"input":          str("The identifier as given."),
		"interpreted_as": str("The subject it was read as and looked up; warnings say what was stripped or assumed."),
		"has_product": boolean("True when a product is stored under it but has no passport (or its claims are all withheld): " +
			"no passport yet, rather than no such product."),
		"subject": str("With has_product: the product's canonical subject."),
	})
}
