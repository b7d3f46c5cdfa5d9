package service

import (
	"context"
	"net/url"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/keys"
)

// Search finds products by manufacturer. params are the query parameters of
// the REST call (MCP passes its arguments the same way, as strings).
func (s *Service) Search(ctx context.Context, c Caller, params url.Values) (*Result, error) {
	if err := s.authorize(ctx, c, "search_products", keys.ScopeSearch, 1); err != nil {
		return nil, err
	}
	return nil, domain.Errorf(domain.CodeServiceUnavailable, "search is being built")
}
