package http

import (
	"net/http"

	"github.com/julienschmidt/httprouter"
	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/service"
)

func (s *Server) whoami(r *http.Request, _ httprouter.Params, c service.Caller) (*service.Result, error) {
	return s.svc.Whoami(r.Context(), c)
}

func (s *Server) validate(r *http.Request, _ httprouter.Params, c service.Caller) (*service.Result, error) {
	var a service.ValidateArgs
	if err := decodeBody(nil, r, &a); err != nil {
		return nil, err
	}
	return s.svc.Validate(r.Context(), c, a)
}

func (s *Server) parseLink(r *http.Request, _ httprouter.Params, c service.Caller) (*service.Result, error) {
	var a service.ParseArgs
	if err := decodeBody(nil, r, &a); err != nil {
		return nil, err
	}
	return s.svc.ParseDigitalLink(r.Context(), c, a)
}

// getProduct serves GET /v1/products/{identifier}; "search" is the search
// route and "resolve" only takes POST (httprouter cannot hold a static
// segment beside a parameter).
func (s *Server) getProduct(r *http.Request, ps httprouter.Params, c service.Caller) (*service.Result, error) {
	switch id := ps.ByName("identifier"); id {
	case "search":
		return s.search(r, c)
	case "resolve":
		return nil, &domain.Error{Code: domain.CodeMethodNotAllowed, Detail: "resolve takes POST with a JSON body {\"identifiers\": [...]}", Allow: "POST"}
	default:
		return s.svc.Product(r.Context(), c, service.ViewIdentity, id)
	}
}

func (s *Server) postProduct(r *http.Request, ps httprouter.Params, c service.Caller) (*service.Result, error) {
	switch ps.ByName("identifier") {
	case "resolve":
		var a service.ResolveArgs
		if err := decodeBody(nil, r, &a); err != nil {
			return nil, err
		}
		return s.svc.Resolve(r.Context(), c, a)
	case "search":
		return nil, &domain.Error{Code: domain.CodeMethodNotAllowed, Detail: "search takes GET with query parameters", Allow: "GET"}
	default:
		return nil, &domain.Error{Code: domain.CodeMethodNotAllowed, Detail: "a product is read with GET", Allow: "GET"}
	}
}

func (s *Server) view(v service.View) handler {
	return func(r *http.Request, ps httprouter.Params, c service.Caller) (*service.Result, error) {
		return s.svc.Product(r.Context(), c, v, ps.ByName("identifier"))
	}
}

func (s *Server) source(r *http.Request, ps httprouter.Params, c service.Caller) (*service.Result, error) {
	return s.svc.Source(r.Context(), c, ps.ByName("source_id"))
}

func (s *Server) search(r *http.Request, c service.Caller) (*service.Result, error) {
	return s.svc.Search(r.Context(), c, r.URL.Query())
}
