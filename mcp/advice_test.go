package mcp

import (
	"strings"
	"testing"

	"github.com/productdata/pds/domain"
)

// Every code an operation can answer gets its own sentence, not the
// fallback; transport-only codes never reach a tool result.
func TestAdvice(t *testing.T) {
	transportOnly := map[string]bool{
		domain.CodeMethodNotAllowed: true, domain.CodeRouteNotFound: true, domain.CodeUnsupportedMediaType: true,
		domain.CodePayloadTooLarge: true, domain.CodeUnsupportedProtocolVersion: true, domain.CodeRequestHeadersTooLarge: true,
	}
	fallback := advice("get_product", &domain.Error{Code: "SOMETHING_NEW"})
	for _, code := range domain.Codes() {
		got := advice("get_product", &domain.Error{Code: code, RetryAfter: 3})
		if !strings.HasSuffix(got, ".") || len(got) < 30 {
			t.Errorf("%s: %q", code, got)
		}
		if !transportOnly[code] && got == fallback {
			t.Errorf("%s has no sentence of its own", code)
		}
	}
	if got := advice("search_products", &domain.Error{Code: domain.CodeRateLimited, RetryAfter: 3}); !strings.Contains(got, "wait 3 seconds") {
		t.Errorf("rate limited: %q", got)
	}
}
