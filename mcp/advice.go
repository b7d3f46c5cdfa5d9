package mcp

import (
	"strconv"

	"github.com/productdata/pds/domain"
)

// advice is the sentence that follows the Problem of a failed tool call: what
// the model should do instead.
func advice(toolName string, e *domain.Error) string {
	wait := strconv.Itoa(max(e.RetryAfter, 1))
	switch e.Code {
	case domain.CodeInvalidRequest:
		return "The arguments do not fit this tool's inputSchema (see detail): correct them and call " + toolName + " again."
	case domain.CodeInvalidIdentifier:
		if toolName == "get_source" {
			return "source_id must be a UUID: take it from a claim's source_ref, a document's source_id or meta.coverage, and call get_source again."
		}
		return "The identifier is not valid in any namespace it could be in: when detail names the subject a product is stored under " +
			"(such as internal_sku:off-2000000001273), call again with that subject; otherwise call validate_identifier with it to see what is wrong " +
			"(check digit, length, characters), then call again with the corrected value or a subject string such as gtin:09520123456788. Do not retry it unchanged."
	case domain.CodeUnsupportedNamespace:
		return "Use namespace auto, gtin, gln, sscc or internal_sku (or leave namespace out) and call validate_identifier again."
	case domain.CodeBatchTooLarge:
		return "Split the identifiers into batches of at most 1000 and call resolve_identifiers once per batch."
	case domain.CodeMalformedURI, domain.CodeUnsupportedURIForm, domain.CodeNoPrimaryIdentifier:
		return "Pass a GS1 Digital Link URI such as https://id.gs1.org/01/09520123456788/10/ABC123; if you only have a GTIN or another identifier, call get_product with it instead."
	case domain.CodeUnsupportedFilter:
		return "Leave out brand, category and market: only manufacturer, trust_level_min, has_passport and updated_since can be searched. Call search_products again without them."
	case domain.CodeInvalidFilter:
		return "Correct the argument named in detail (search_products takes manufacturer, trust_level_min L0 to L5, has_passport, updated_since as an RFC 3339 date-time or date, sort, cursor and limit 1 to 100) and call again."
	case domain.CodeInvalidSort:
		return "Use sort updated_at, or give a manufacturer to sort by relevance, and call search_products again."
	case domain.CodeInvalidCursor:
		return "The cursor does not belong to these arguments: call search_products again with exactly the arguments of the page it came from, or without cursor to start over."
	case domain.CodeForbidden:
		return "The API key lacks the scope this tool needs (whoami lists the key's scopes); retrying will not help: ask the key's owner for a key with that scope, or use another tool."
	case domain.CodeUnauthenticated:
		return "The API key is not valid; retrying will not help."
	case domain.CodeTenantQuotaExceeded:
		return "The tenant's quota is used up; do not retry until the quota period resets, and tell the user."
	case domain.CodeRateLimited:
		return "Too many calls: wait " + wait + " seconds, then make the same call again."
	case domain.CodeServiceUnavailable:
		return "The service is starting, switching data or shutting down: wait " + wait + " seconds, then make the same call again."
	case domain.CodeInternal:
		return "The server failed unexpectedly: make the same call once more; if it fails again, report the request_id."
	}
	return "Read the detail, correct the call, and call " + toolName + " again."
}
