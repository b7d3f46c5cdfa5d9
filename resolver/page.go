package resolver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/service"
)

// pageBase is what every page shows around its content.
type pageBase struct {
	Title      string
	Version    string
	Build      string // the snapshot build the answer came from, or ""
	Created    string
	LinksetURL string // the product's linkset, or ""
	RequestID  string
}

func (h *Handler) base(r *http.Request, title string) pageBase {
	return pageBase{Title: title, Version: h.o.Version, RequestID: service.RequestID(r.Context())}
}

// row is one labelled value of a table.
type row struct {
	Label, Value, Lang, Href string
}

// passportPage is the passport of a product pds holds.
type passportPage struct {
	pageBase
	Name, NameLang string
	Subtitle       string
	Identity       []row
	Scanned        []row
	Notes          []string // what reading the scanned link involved
	Verdicts       []verdictView
	NoPassport     string   // why there are no claims to show, or ""
	Withheld       []string // the API's warnings about withheld claims
	Groups         []groupView
	Sources        []sourceView
	API            []row
}

type verdictView struct {
	Axis, Meaning, Value, Word, Class string
}

type groupView struct {
	ID, Name string
	Claims   []claimView
}

type claimView struct {
	ID, Label, Predicate, Value, Lang string
	Type, Method, Trust, Verification string
	Confidence, Published, Retrieved  string
	Source                            *sourceRef
	Evidence                          []evidenceView
}

type sourceRef struct {
	Anchor, Who, Licence, Attribution string
}

type evidenceView struct {
	Document, MediaType, URL, Size, Retrieved, Locator, Hash string
	Source                                                   *sourceRef // when not the claim's own source
}

type sourceView struct {
	Anchor, Who, Origin, Kind, Licence, Permits, Attribution string
	Tier                                                     int
}

// passportView builds the passport page of a product found.
func (h *Handler) passportView(r *http.Request, req request, p *product) passportPage {
	root := h.root(r)
	pg := passportPage{pageBase: h.base(r, "")}
	pg.Build, pg.Created = p.identity.build, when(p.identity.created)
	pg.LinksetURL = root + req.keyPath + "?linkType=linkset"
	pg.Name, pg.NameLang = productName(p)
	pg.Title = pg.Name + " — product passport"
	pg.Subtitle = p.id.Manufacturer
	if p.id.Brand != "" {
		pg.Subtitle += " · brand " + p.id.Brand
	}
	pg.Identity = identityRows(p.id)
	pg.Scanned, pg.Notes = scannedRows(req)
	pg.Verdicts = verdicts(p.passport.Validation)
	pg.Withheld = withheldNotes(p.passport.Warnings)
	switch {
	case p.passport.Status == domain.StatusUnknown && p.passport.Reason == domain.ReasonLicenceRestricted:
		pg.NoPassport = "Every current claim about this product comes from sources whose licence permits neither verbatim nor derived redistribution, so none is shown here (the API answers unknown, LICENCE_RESTRICTED)."
	case p.passport.Status != domain.StatusFound:
		pg.NoPassport = "pds holds no passport for this product: nothing has been ingested about it beyond its identity. That does not mean no passport exists anywhere."
	}
	refs := map[string]*sourceRef{}
	ref := func(id string) *sourceRef {
		if sr, ok := refs[id]; ok {
			return sr
		}
		d, ok := p.sources[id]
		if !ok {
			return nil
		}
		sr := &sourceRef{Anchor: "src-" + id, Who: who(d), Licence: d.LicenceName, Attribution: domain.Str(d.AttributionRequired)}
		refs[id] = sr
		return sr
	}
	chains := map[string]domain.Chain{}
	for _, ch := range p.evidence.Chains {
		chains[ch.Claim.ID] = ch
	}
	for _, c := range p.passport.Claims {
		cv := claimViewOf(c)
		cv.Source = ref(domain.Str(c.SourceRef))
		for _, l := range chains[c.ID].Links {
			ev := evidenceViewOf(l)
			if l.Source.ID != domain.Str(c.SourceRef) {
				ev.Source = ref(l.Source.ID)
			}
			cv.Evidence = append(cv.Evidence, ev)
		}
		pg.Groups = addToGroup(pg.Groups, c.Predicate, cv)
	}
	sortGroups(pg.Groups)
	for _, s := range p.passport.Sources {
		if d, ok := p.sources[s.ID]; ok {
			pg.Sources = append(pg.Sources, sourceViewOf(d))
		}
	}
	if api := h.apiRoot(r); api != "" {
		id := url.PathEscape(p.subject)
		pg.API = []row{
			{Label: "Identity", Href: api + "/v1/products/" + id},
			{Label: "Passport", Href: api + "/v1/products/" + id + "/dpp"},
			{Label: "Evidence chains", Href: api + "/v1/products/" + id + "/evidence"},
		}
	}
	return pg
}

// productName is the product's current name claim (and its language), or
// its subject when it has none.
func productName(p *product) (string, string) {
	for _, c := range p.passport.Claims {
		if c.Predicate == "name" {
			var s string
			if json.Unmarshal(c.Object.Value, &s) == nil && s != "" {
				return s, domain.Str(c.Object.Language)
			}
		}
	}
	if p.id.Brand != "" {
		return p.id.Brand + " product " + p.subject, ""
	}
	return "Product " + p.subject, ""
}

func identityRows(id identityData) []row {
	rows := []row{{Label: "Identifier", Value: id.Subject}}
	if len(id.Identifiers) > 1 {
		rows = append(rows, row{Label: "Also identified as", Value: strings.Join(id.Identifiers[1:], ", ")})
	}
	rows = append(rows, row{Label: "Manufacturer", Value: id.Manufacturer})
	if id.ManufacturerGLN != "" {
		rows = append(rows, row{Label: "Manufacturer GLN", Value: id.ManufacturerGLN})
	}
	if id.Brand != "" {
		rows = append(rows, row{Label: "Brand", Value: id.Brand})
	}
	rows = append(rows, row{Label: "Status", Value: id.Status}, row{Label: "Trust level", Value: id.TrustLevel},
		row{Label: "Updated", Value: when(id.UpdatedAt)})
	return rows
}

// scannedRows says what was looked up: the link as read, and its
// qualifiers and attributes, which pds holds no data for (its data is per
// product).
func scannedRows(req request) ([]row, []string) {
	l := req.link
	rows := []row{{Label: "GS1 element string", Value: l.ElementString}}
	for _, q := range l.Qualifiers {
		rows = append(rows, row{Label: q.Name + " (AI " + q.AI + ")", Value: q.Value})
	}
	for _, a := range l.Attributes {
		rows = append(rows, row{Label: a.Name + " (AI " + a.AI + ")", Value: a.Value})
	}
	var notes []string
	if len(l.Qualifiers)+len(l.Attributes) > 0 {
		notes = append(notes, "pds holds data per product: the passport below is the product's, whatever its lot, serial or other attributes.")
	}
	if req.alphas {
		notes = append(notes, "The link was written with the old convenience names (such as /gtin/); it was read with their numeric AIs.")
	}
	for _, w := range l.Warnings {
		notes = append(notes, w.Detail)
	}
	return rows, notes
}

// The four verdict axes, in the order of the specification.
var axes = []struct{ class, name, meaning string }{
	{domain.ClassTechnical, "Technical", "identifier syntax and data checks"},
	{domain.ClassBusiness, "Business", "business rules, such as brand owner and company prefix"},
	{domain.ClassRegulatory, "Regulatory", "regulatory declarations"},
	{domain.ClassAuthority, "Authority", "attestation by an authority"},
}

var verdictWords = map[string]string{
	"pass": "Pass", "fail": "Fail", "warn": "Warning", "not_assessed": "Not assessed", "none": "None", "attested": "Attested",
}

// verdicts shows the four axes as four, never one score; an axis no rule
// was evaluated for says so.
func verdicts(v *domain.Validation) []verdictView {
	var val domain.Validation
	if v != nil {
		val = *v
	}
	values := map[string]string{domain.ClassTechnical: val.Technical, domain.ClassBusiness: val.Business,
		domain.ClassRegulatory: val.Regulatory, domain.ClassAuthority: val.Authority}
	var out []verdictView
	for _, a := range axes {
		vv := verdictView{Axis: a.name, Meaning: a.meaning, Value: values[a.class]}
		switch {
		case vv.Value == "":
			vv.Word, vv.Class = "No rule evaluated", "v-none"
		case vv.Value == "pass" || vv.Value == "attested":
			vv.Word, vv.Class = verdictWords[vv.Value], "v-pass"
		case vv.Value == "fail":
			vv.Word, vv.Class = verdictWords[vv.Value], "v-fail"
		case vv.Value == "warn":
			vv.Word, vv.Class = verdictWords[vv.Value], "v-warn"
		default:
			vv.Word, vv.Class = verdictWords[vv.Value], "v-none"
		}
		out = append(out, vv)
	}
	return out
}

// withheldNotes are the API's warnings about claims its licence rules
// withheld, in its words.
func withheldNotes(ws []domain.Warning) []string {
	var out []string
	for _, w := range ws {
		if strings.Contains(w.Code, "WITHHELD") && w.Detail != "" {
			out = append(out, strings.ToUpper(w.Detail[:1])+w.Detail[1:])
		}
	}
	return out
}

func claimViewOf(c domain.Claim) claimView {
	cv := claimView{ID: c.ID, Predicate: c.Predicate, Label: predicateLabel(c.Predicate), Value: valueText(c.Object),
		Lang: domain.Str(c.Object.Language), Type: c.ClaimType, Trust: c.TrustLevel,
		Verification: strings.ReplaceAll(c.VerificationStatus, "_", " "), Retrieved: when(c.RetrievedAt)}
	if m := domain.Str(c.Method); m != "" {
		cv.Method = m
		if v := domain.Str(c.MethodVersion); v != "" {
			cv.Method += " " + v
		}
	}
	if c.Confidence != nil {
		cv.Confidence = strconv.FormatFloat(*c.Confidence, 'f', -1, 64)
	}
	cv.Published = when(domain.Str(c.PublishedAt))
	return cv
}

// valueText writes a claim's value as a person reads it, with its unit:
// strings as they are, lists joined, booleans as yes or no, null as
// unknown.
func valueText(o domain.ClaimObject) string {
	v := jsonText(o.Value)
	if v == "" || string(o.Value) == "null" {
		return "unknown"
	}
	if u := domain.Str(o.Unit); u != "" {
		v += " " + u
	}
	return v
}

func jsonText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	case '[':
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) == nil {
			parts := make([]string, 0, len(items))
			for _, it := range items {
				parts = append(parts, jsonText(it))
			}
			return strings.Join(parts, ", ")
		}
	case 't':
		return "yes"
	case 'f':
		return "no"
	}
	return string(raw)
}

func evidenceViewOf(l domain.EvidenceLink) evidenceView {
	d := l.Document
	ev := evidenceView{Document: d.ID, MediaType: d.MediaType, Size: bytesText(d.Size),
		Retrieved: when(d.RetrievedAt), Hash: d.ContentHash}
	if u := domain.Str(d.URL); domain.IsWebURL(u) {
		ev.URL = u // linked; a snapshot built with another scheme shows none
	}
	switch l.Locator.Kind {
	case domain.LocatorByteRange:
		if l.Locator.Start != nil && l.Locator.End != nil {
			ev.Locator = "bytes " + strconv.FormatInt(*l.Locator.Start, 10) + " to " + strconv.FormatInt(*l.Locator.End, 10)
		}
	case domain.LocatorJSONPointer:
		ev.Locator = "JSON pointer " + l.Locator.Pointer
	case domain.LocatorContentHash:
		ev.Locator = "the whole document (content hash " + l.Locator.ContentHash + ")"
	}
	return ev
}

func sourceViewOf(d domain.SourceDescriptor) sourceView {
	sv := sourceView{Anchor: "src-" + d.ID, Who: who(d), Origin: d.Origin, Kind: strings.ReplaceAll(d.Kind, "_", " "),
		Licence: d.LicenceName, Attribution: domain.Str(d.AttributionRequired), Tier: d.TrustTier}
	switch {
	case d.MayRedistributeVerbatim && d.MayRedistributeDerived:
		sv.Permits = "verbatim and derived redistribution"
	case d.MayRedistributeVerbatim:
		sv.Permits = "verbatim redistribution only"
	case d.MayRedistributeDerived:
		sv.Permits = "derived redistribution only"
	default:
		sv.Permits = "no redistribution"
	}
	return sv
}

// who names a source's operator, or its origin when it has none.
func who(d domain.SourceDescriptor) string {
	if d.Operator != nil && d.Operator.Name != "" {
		return d.Operator.Name
	}
	if u, err := url.Parse(d.Origin); err == nil && u.Host != "" {
		return u.Host
	}
	return d.Origin
}

// when writes an RFC 3339 time as a person reads it; anything else as it is.
func when(s string) string {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return s
	}
	t = t.UTC()
	if t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 {
		return t.Format("2 January 2006")
	}
	return t.Format("2 January 2006, 15:04 UTC")
}

func bytesText(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	b.WriteString(" bytes")
	return b.String()
}
