package http

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/julienschmidt/httprouter"
	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/http/httpwire"
	"github.com/productdata/pds/service"
)

func (s *Server) whoami(r *http.Request, _ httprouter.Params, c domain.Caller) (*service.Result, error) {
	return s.svc.Whoami(r.Context(), c, service.WhoamiArgs{})
}

func (s *Server) validate(r *http.Request, _ httprouter.Params, c domain.Caller) (*service.Result, error) {
	var a service.ValidateArgs
	if err := decodeBody(nil, r, &a); err != nil {
		return nil, err
	}
	return s.svc.Validate(r.Context(), c, a)
}

func (s *Server) parseLink(r *http.Request, _ httprouter.Params, c domain.Caller) (*service.Result, error) {
	var a service.ParseArgs
	if err := decodeBody(nil, r, &a); err != nil {
		return nil, err
	}
	return s.svc.ParseDigitalLink(r.Context(), c, a)
}

// getProduct serves GET /v1/products/{identifier}; "search" is the search
// route and "resolve" only takes POST (httprouter cannot hold a static
// segment beside a parameter).
func (s *Server) getProduct(r *http.Request, ps httprouter.Params, c domain.Caller) (*service.Result, error) {
	switch id := ps.ByName("identifier"); id {
	case "search":
		return s.search(r, c)
	case "resolve":
		return nil, httpwire.MethodNotAllowed("POST, OPTIONS", "resolve takes POST with a JSON body {\"identifiers\": [...]}")
	default:
		res, err := s.svc.Identity(r.Context(), c, service.ProductArgs{Identifier: &id})
		return res, plusHint(id, err)
	}
}

// plusHint adds to the INVALID_IDENTIFIER of a path identifier holding '+'
// that the '+' was read as itself. In a path a '+' is a plus sign (RFC 3986:
// a sub-delimiter with no special meaning); reading it as a space is the
// form encoding of query strings, so a value encoded that way
// (09520+12345+6788) fails, and the detail says how to send a space.
func plusHint(id string, err error) error {
	var de *domain.Error
	if err == nil || !strings.Contains(id, "+") || !errors.As(err, &de) || de.Code != domain.CodeInvalidIdentifier {
		return err
	}
	hinted := *de
	hinted.Detail += "; a '+' in a URL path is a plus sign, not a space: write a space as %20"
	return &hinted
}

func (s *Server) postProduct(r *http.Request, ps httprouter.Params, c domain.Caller) (*service.Result, error) {
	switch ps.ByName("identifier") {
	case "resolve":
		var a service.ResolveArgs
		if err := decodeBody(nil, r, &a); err != nil {
			return nil, err
		}
		return s.svc.Resolve(r.Context(), c, a)
	case "search":
		return nil, httpwire.MethodNotAllowed("GET, HEAD, OPTIONS", "search takes GET with query parameters")
	default:
		return nil, httpwire.MethodNotAllowed("GET, HEAD, OPTIONS", "a product is read with GET")
	}
}

// product serves a product operation on the identifier of the path.
func product(op func(context.Context, domain.Caller, service.ProductArgs) (*service.Result, error)) handler {
	return func(r *http.Request, ps httprouter.Params, c domain.Caller) (*service.Result, error) {
		id := ps.ByName("identifier")
		res, err := op(r.Context(), c, service.ProductArgs{Identifier: &id})
		return res, plusHint(id, err)
	}
}

func (s *Server) source(r *http.Request, ps httprouter.Params, c domain.Caller) (*service.Result, error) {
	id := ps.ByName("source_id")
	return s.svc.Source(r.Context(), c, service.SourceArgs{SourceID: &id})
}

func (s *Server) search(r *http.Request, c domain.Caller) (*service.Result, error) {
	a, err := searchArgs(r.URL.Query())
	if err != nil {
		return nil, err
	}
	return s.svc.Search(r.Context(), c, a)
}

// searchArgs decodes the query string of a search. Parameters search does
// not know go into Other, for the service to refuse; a known one given
// twice, or whose text is not its type (has_passport true or false, limit a
// whole number), is INVALID_FILTER.
func searchArgs(q url.Values) (service.SearchArgs, error) {
	var a service.SearchArgs
	for name := range q {
		if !slices.Contains(service.SearchParams, name) {
			a.Other = append(a.Other, name)
		}
	}
	if len(a.Other) > 0 {
		return a, nil
	}
	for _, name := range slices.Sorted(maps.Keys(q)) {
		if n := len(q[name]); n != 1 {
			return a, domain.Errorf(domain.CodeInvalidFilter, "parameter %s is given %d times; give it once", name, n)
		}
	}
	str := func(name string) *string {
		if v, ok := q[name]; ok {
			return &v[0]
		}
		return nil
	}
	a.Manufacturer, a.TrustLevelMin, a.UpdatedSince = str("manufacturer"), str("trust_level_min"), str("updated_since")
	a.Sort, a.Cursor = str("sort"), str("cursor")
	if v := str("has_passport"); v != nil {
		if *v != "true" && *v != "false" {
			return a, service.SearchTextError("has_passport", *v)
		}
		b := *v == "true"
		a.HasPassport = &b
	}
	if v := str("limit"); v != nil {
		n, err := strconv.Atoi(*v)
		if err != nil {
			return a, service.SearchTextError("limit", *v)
		}
		a.Limit = &n
	}
	return a, nil
}
