package resolver

import (
	"bytes"
	"encoding/json"
	"errors"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/http/httpwire"
	"github.com/productdata/pds/service"
)

// resolve answers a Digital Link path: a redirect to the passport page (or
// to the link type asked for), the linkset, or the absence.
func (h *Handler) resolve(w http.ResponseWriter, r *http.Request, path string) {
	root := h.root(r)
	req, err := parseRequest(root, path, r.URL.RawQuery)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Add("Vary", "Accept")
	linkType := ""
	if v, ok := r.URL.Query()["linkType"]; ok && len(v) > 0 {
		linkType = normalizeLinkType(v[0])
	}
	wantLinkset := linkType == "linkset" || (linkType == "" && negotiate(r, typeHTML, typeLinkset, typeJSON) != typeHTML)
	p, err := h.find(r, req, wantLinkset || linkType != "")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if p == nil || !p.found() {
		h.absent(w, r, req, p)
		return
	}
	anchor := root + req.keyPath
	w.Header().Add("Link", "<"+anchor+"?linkType=linkset>; rel=\"linkset\"; type=\""+typeLinkset+"\"")
	switch {
	case wantLinkset:
		h.writeLinkset(w, r, http.StatusOK, h.links(r, req, p))
	case linkType != "":
		ls := h.links(r, req, p)
		ts := ls.targets(linkType)
		if len(ts) == 0 {
			h.noSuchLink(w, r, linkType, ls)
			return
		}
		h.redirect(w, r, pick(r, ts).Href, req.rawQuery)
	default:
		h.redirect(w, r, root+"/passport"+req.keyPath, req.rawQuery)
	}
}

// page answers a passport page.
func (h *Handler) page(w http.ResponseWriter, r *http.Request, path string) {
	root := h.root(r)
	req, err := parseRequest(root, path, r.URL.RawQuery)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	p, err := h.find(r, req, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if p == nil || !p.found() {
		h.absent(w, r, req, p)
		return
	}
	w.Header().Add("Link", "<"+root+req.keyPath+"?linkType=linkset>; rel=\"linkset\"; type=\""+typeLinkset+"\"")
	h.render(w, r, http.StatusOK, "passport", h.passportView(r, req, p))
}

// find looks the request's primary key up; nil when pds has no namespace
// for it (nothing to ask).
func (h *Handler) find(r *http.Request, req request, full bool) (*product, error) {
	if req.link.Primary.Subject == "" {
		return nil, nil
	}
	return h.lookup(r.Context(), req.link.Primary.Subject, full)
}

// links builds the linkset of a product found: its passport page (the
// default link, also typed pip and productPassport), the /v1 answers when
// linked, and every document URL the public evidence holds.
func (h *Handler) links(r *http.Request, req request, p *product) *linkset {
	root := h.root(r)
	page := root + "/passport" + req.keyPath
	name, _ := productName(p)
	ls := &linkset{anchor: root + req.keyPath}
	ls.add(relDefault, target{Href: page, Title: "Product passport: " + name})
	html := target{Href: page, Title: "Product passport: " + name, Type: "text/html", Hreflang: []string{"en"}}
	ls.add(relPIP, html)
	ls.add(relPassport, html)
	if api := h.apiRoot(r); api != "" {
		id := url.PathEscape(p.subject)
		ls.add(relPassport, target{Href: api + "/v1/products/" + id + "/dpp", Title: "Passport as JSON (pds API, needs a key)", Type: typeJSON})
		ls.add(relMasterData, target{Href: api + "/v1/products/" + id, Title: "Identity as JSON (pds API, needs a key)", Type: typeJSON})
		ls.add(relDescribedBy, target{Href: api + "/v1/products/" + id + "/evidence", Title: "Evidence chains as JSON (pds API, needs a key)", Type: typeJSON})
	}
	for _, ch := range p.evidence.Chains {
		for _, l := range ch.Links {
			u := domain.Str(l.Document.URL)
			if !domain.IsWebURL(u) {
				continue
			}
			title := "Evidence document " + l.Document.ID
			if d, ok := p.sources[l.Source.ID]; ok {
				title += " from " + who(d) + " (" + d.LicenceName + ")"
			}
			ls.add(relDescribedBy, target{Href: u, Title: title, Type: l.Document.MediaType})
		}
	}
	return ls
}

// pick chooses among the targets of one link type the one whose media type
// the request's Accept prefers; the first when none matches.
func pick(r *http.Request, ts []target) target {
	if accept := r.Header.Get("Accept"); accept != "" {
		var offers []string
		for _, t := range ts {
			if t.Type != "" {
				offers = append(offers, t.Type)
			}
		}
		if len(offers) > 0 {
			want := negotiate(r, offers...)
			for _, t := range ts {
				if t.Type == want {
					return t
				}
			}
		}
	}
	return ts[0]
}

// redirect answers 307 to href with the request's query passed on.
func (h *Handler) redirect(w http.ResponseWriter, r *http.Request, href, rawQuery string) {
	loc := href
	if rawQuery != "" {
		sep := "?"
		if strings.Contains(loc, "?") {
			sep = "&"
		}
		loc += sep + rawQuery
	}
	hd := w.Header()
	hd.Set("Location", loc)
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusTemporaryRedirect)
	if r.Method != http.MethodHead {
		w.Write([]byte(`<!doctype html><html lang="en"><title>Redirect</title><p><a href="` + html.EscapeString(loc) + `">` + html.EscapeString(loc) + "</a></p></html>\n"))
	}
}

// writeLinkset answers a linkset: application/linkset+json, or
// application/json to a client that prefers it.
func (h *Handler) writeLinkset(w http.ResponseWriter, r *http.Request, status int, ls *linkset) {
	b, err := ls.MarshalJSON()
	if err != nil {
		h.fail(w, r, domain.Internal(err))
		return
	}
	hd := w.Header()
	ct := typeLinkset
	if negotiate(r, typeLinkset, typeJSON) == typeJSON {
		ct = typeJSON
	}
	hd.Set("Content-Type", ct)
	hd.Add("Link", `<https://ref.gs1.org/standards/resolver/linkset-context>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"`)
	hd.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}

// noSuchLink answers a link type the product has no link of: 404, with the
// links it has (as a page, or as the linkset).
func (h *Handler) noSuchLink(w http.ResponseWriter, r *http.Request, linkType string, ls *linkset) {
	if negotiate(r, typeHTML, typeLinkset, typeJSON) != typeHTML {
		h.writeLinkset(w, r, http.StatusNotFound, ls)
		return
	}
	pg := noLinkPage{pageBase: h.base(r, "No "+curie(linkType)+" link"), LinkType: curie(linkType), Anchor: ls.anchor}
	for _, rel := range ls.relations {
		for _, t := range rel.targets {
			pg.Links = append(pg.Links, row{Label: curie(rel.rel), Value: t.Title, Href: t.Href})
		}
	}
	h.render(w, r, http.StatusNotFound, "nolink", pg)
}

// noLinkPage lists the links a product has, for a link type it lacks.
type noLinkPage struct {
	pageBase
	LinkType, Anchor string
	Links            []row
}

// absentPage says what was looked up and what was consulted, in the words
// of the API's not_found and unknown rules.
type absentPage struct {
	pageBase
	Looked     string // the subject looked up, or the primary key as read
	Status     string // not_found, unknown
	Reason     string // NO_SOURCE, OUT_OF_SCOPE, …
	Verdict    string // the answer in one sentence
	Meaning    string // what it means and what it does not
	Scanned    []row
	Consulted  []row
	Skipped    []row
	SourceNote string
}

// absent answers an identifier pds holds no product for, or one it has no
// namespace for: 404, as a page that says what was looked up and what was
// consulted, or as the identity API's answer for a program.
func (h *Handler) absent(w http.ResponseWriter, r *http.Request, req request, p *product) {
	l := req.link
	pg := absentPage{pageBase: h.base(r, "")}
	pg.Scanned, _ = scannedRows(req)
	if p == nil {
		pg.Looked = l.Primary.Name + " " + l.Primary.Value + " (AI " + l.Primary.AI + ")"
		pg.Status, pg.Reason = domain.StatusUnknown, domain.ReasonOutOfScope
	} else {
		pg.Looked = p.subject
		pg.Status, pg.Reason = p.identity.Status, p.identity.Reason
		pg.Build, pg.Created = p.identity.build, when(p.identity.created)
		for _, id := range p.identity.coverage.SourcesConsulted {
			pg.Consulted = append(pg.Consulted, sourceRow(p, id, ""))
		}
		for _, s := range p.identity.coverage.SourcesSkipped {
			pg.Skipped = append(pg.Skipped, sourceRow(p, s.ID, s.Reason))
		}
	}
	pg.Verdict, pg.Meaning = absenceWords(pg.Status, pg.Reason, pg.Looked, len(pg.Consulted), p == nil, l.Primary.AI)
	pg.Title = "Nothing found for " + pg.Looked
	if negotiate(r, typeHTML, typeJSON, typeLinkset) != typeHTML {
		h.absentJSON(w, r, req, p, pg)
		return
	}
	h.render(w, r, http.StatusNotFound, "absent", pg)
}

// sourceRow names a covering source for the absence page.
func sourceRow(p *product, id, reason string) row {
	rw := row{Label: id}
	if d, ok := p.sources[id]; ok {
		rw.Label = who(d)
		rw.Value = strings.ReplaceAll(d.Kind, "_", " ") + ", " + d.Origin
	}
	switch reason {
	case domain.SkipDisabled:
		rw.Value += ": disabled, so not consulted"
	case domain.SkipLicenceRestricted:
		rw.Value += ": its licence permits no redistribution"
	case "":
	default:
		rw.Value += ": " + reason
	}
	return rw
}

// absenceWords says the API's absence rules in words.
func absenceWords(status, reason, looked string, consulted int, noNamespace bool, ai string) (string, string) {
	switch {
	case noNamespace:
		return "pds holds no data for this kind of identifier (unknown, OUT_OF_SCOPE).",
			"The link's primary key is AI " + ai + ". pds holds products identified by GTIN (AI 01), and reads GLNs and SSCCs only to say they are not products. Nothing was looked up."
	case status == domain.StatusNotFound:
		return "pds holds no product " + looked + " (not_found).",
			"The sources that cover this identifier were consulted and nothing has been ingested from them about it. This does not mean that the product, or a passport for it, exists nowhere: only that this copy of pds holds none."
	case reason == domain.ReasonNoSource:
		return "No source pds reads covers " + looked + " (unknown, NO_SOURCE).",
			"pds cannot tell whether this product exists: none of its enabled sources speaks for identifiers like this one."
	case reason == domain.ReasonOutOfScope:
		return looked + " is not a product identifier (unknown, OUT_OF_SCOPE).",
			"It names a location or a logistic unit. pds holds products identified by GTIN."
	}
	return "pds has no answer for " + looked + " (" + status + ").", ""
}

// absentJSON answers an absence to a program: 404 with the envelope the
// identity API gives the same caller.
func (h *Handler) absentJSON(w http.ResponseWriter, r *http.Request, req request, p *product, pg absentPage) {
	type meta struct {
		Coverage *domain.Coverage `json:"coverage,omitempty"`
		Snapshot *struct {
			BuildID   string `json:"build_id"`
			CreatedAt string `json:"created_at"`
		} `json:"snapshot,omitempty"`
	}
	body := struct {
		RequestID string          `json:"request_id,omitempty"`
		Status    string          `json:"status"`
		Reason    string          `json:"reason,omitempty"`
		Data      json.RawMessage `json:"data"`
		Detail    string          `json:"detail"`
		Meta      meta            `json:"meta"`
	}{RequestID: service.RequestID(r.Context()), Status: pg.Status, Reason: pg.Reason, Detail: pg.Verdict + " " + pg.Meaning}
	if p != nil {
		body.Data = p.identity.Data
		cov := p.identity.coverage
		body.Meta.Coverage = &cov
		body.Meta.Snapshot = &struct {
			BuildID   string `json:"build_id"`
			CreatedAt string `json:"created_at"`
		}{p.identity.build, p.identity.created}
	} else {
		body.Data, _ = json.Marshal(map[string]string{"input": req.link.URI})
		body.Meta.Coverage = &domain.Coverage{SourcesConsulted: []string{}}
	}
	b, err := json.Marshal(body)
	if err != nil {
		h.fail(w, r, domain.Internal(err))
		return
	}
	w.Header().Set("Content-Type", typeJSON)
	w.WriteHeader(http.StatusNotFound)
	w.Write(b)
}

// description answers /.well-known/gs1resolver.
func (h *Handler) description(w http.ResponseWriter, r *http.Request) {
	d := map[string]any{
		"name":                           "pds product passport resolver",
		"resolverRoot":                   h.root(r),
		"supportedPrimaryKeys":           []string{"01"},
		"supportedLinkType":              []map[string]string{{"namespace": voc, "prefix": "gs1:"}},
		"linkTypeDefaultCanBeLinkset":    false,
		"linkTypeDefaultCanBeAll":        false,
		"supportsLanguageVariants":       false,
		"supportsSemanticInterpretation": false,
		"validatesAIcombinations":        true,
	}
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		h.fail(w, r, domain.Internal(err))
		return
	}
	w.Header().Set("Content-Type", typeJSON)
	w.Write(append(b, '\n'))
}

// render executes a page template and writes it whole, with the headers
// that keep the page to itself: no script, no resource from another host.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	var buf bytes.Buffer
	if err := h.pages.ExecuteTemplate(&buf, name, data); err != nil {
		h.o.Log.Error("page not rendered", "request_id", service.RequestID(r.Context()), "page", name, "error", err.Error())
		de := domain.Internal(errors.New("page " + name + " not rendered"))
		p := httpwire.NewProblem(de, service.RequestID(r.Context()))
		httpwire.SetProblemHeaders(w.Header(), de)
		w.Header().Set("Content-Type", typeProblem)
		w.WriteHeader(p.Status)
		b, _ := domain.Marshal(p)
		w.Write(b)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}
