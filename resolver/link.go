package resolver

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/domain/gs1"
)

// request is a Digital Link request as the resolver reads it.
type request struct {
	link *gs1.Link
	// keyPath is the canonical key path: /01/09520123456788/10/ABC (the
	// primary key and its qualifiers, numeric AIs, 14-digit GTIN).
	keyPath string
	// rawQuery is the request's query as sent, passed on when redirecting.
	rawQuery string
	// alphas is set when the path used the old convenience names.
	alphas bool
}

// parseRequest reads the escaped path and query of a request on the
// resolver at root as a Digital Link URI. Convenience names (/gtin/…,
// /lot/…) are rewritten to their AIs first. Errors are *domain.Error with
// the gs1 package's codes (all 400).
func parseRequest(root, escapedPath, rawQuery string) (request, error) {
	path, alphas := rewriteAlphas(escapedPath)
	uri := root + path
	if rawQuery != "" {
		uri += "?" + rawQuery
	}
	l, err := gs1.ParseDigitalLink(uri)
	if err != nil {
		var ge *gs1.Error
		if errors.As(err, &ge) {
			return request{}, &domain.Error{Code: ge.Code, Detail: ge.Detail}
		}
		return request{}, &domain.Error{Code: domain.CodeMalformedURI, Detail: err.Error()}
	}
	if l.Stem != root {
		// The key path starts further in: /something/01/… is not a path of
		// this resolver, whose key paths start at its root.
		return request{}, domain.Errorf(domain.CodeNoPrimaryIdentifier,
			"the path %s does not start with a GS1 primary key (such as /01/ for a GTIN); this resolver reads key paths from its root", strings.TrimPrefix(l.Stem, root))
	}
	keyPath := strings.TrimPrefix(l.CanonicalURI, gs1.CanonicalHost)
	if i := strings.IndexByte(keyPath, '?'); i >= 0 {
		keyPath = keyPath[:i]
	}
	return request{link: l, keyPath: keyPath, rawQuery: rawQuery, alphas: alphas}, nil
}

// rewriteAlphas replaces convenience names in key positions (the first
// segment and every second one after it) with their AIs; ok is whether any
// was replaced.
func rewriteAlphas(path string) (string, bool) {
	segs := strings.Split(path, "/")
	changed := false
	for i := 1; i < len(segs); i += 2 {
		ai, primary, ok := gs1.ConvenienceAI(segs[i])
		if !ok || (i == 1) != primary {
			continue // an AI, or a name that does not fit here: the parser judges it
		}
		segs[i] = ai
		changed = true
	}
	if !changed {
		return path, false
	}
	return strings.Join(segs, "/"), true
}

// The GS1 Web Vocabulary, whose link types the linksets use.
const voc = "https://ref.gs1.org/voc/"

// Link relation types of a pds linkset.
const (
	relDefault     = voc + "defaultLink"
	relPIP         = voc + "pip"
	relPassport    = voc + "productPassport"
	relMasterData  = voc + "masterData"
	relDescribedBy = "describedby" // IANA: a document that describes the product (evidence)
)

// target is a link target of a linkset (RFC 9264 section 4.2.3).
type target struct {
	Href     string   `json:"href"`
	Title    string   `json:"title"`
	Type     string   `json:"type,omitempty"`
	Hreflang []string `json:"hreflang,omitempty"`
}

// relation is one link relation type and its targets.
type relation struct {
	rel     string
	targets []target
}

// linkset is one link context: an anchor and its links, in a fixed order.
type linkset struct {
	anchor    string
	relations []relation
}

func (ls *linkset) add(rel string, t target) {
	for i := range ls.relations {
		if ls.relations[i].rel == rel {
			for _, have := range ls.relations[i].targets {
				if have.Href == t.Href && have.Type == t.Type {
					return
				}
			}
			ls.relations[i].targets = append(ls.relations[i].targets, t)
			return
		}
	}
	ls.relations = append(ls.relations, relation{rel: rel, targets: []target{t}})
}

// targets returns the links of relation rel, or nil.
func (ls *linkset) targets(rel string) []target {
	for _, r := range ls.relations {
		if r.rel == rel {
			return r.targets
		}
	}
	return nil
}

// MarshalJSON writes the linkset document of RFC 9264 section 4.2: an
// object whose one member "linkset" holds one link context object, its
// anchor first and then each relation type with its array of targets.
func (ls *linkset) MarshalJSON() ([]byte, error) {
	b := []byte(`{"linkset":[{"anchor":`)
	a, err := json.Marshal(ls.anchor)
	if err != nil {
		return nil, err
	}
	b = append(b, a...)
	for _, r := range ls.relations {
		k, err := json.Marshal(r.rel)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(r.targets)
		if err != nil {
			return nil, err
		}
		b = append(append(append(append(b, ','), k...), ':'), v...)
	}
	return append(b, "}]}"...), nil
}

// normalizeLinkType reads a linkType query value: all or linkset ask for
// the linkset ("linkset"); gs1:x and the GS1 vocabulary's URIs (old and new
// hosts) name voc+x; anything else (a registered type such as describedby)
// is itself.
func normalizeLinkType(v string) string {
	switch v {
	case "all", "linkset":
		return "linkset"
	}
	for _, p := range []string{"gs1:", "https://ref.gs1.org/voc/", "http://ref.gs1.org/voc/", "https://gs1.org/voc/", "http://gs1.org/voc/"} {
		if rest, ok := strings.CutPrefix(v, p); ok && rest != "" {
			return voc + rest
		}
	}
	return v
}

// curie writes a link type as people write it: gs1:pip for the GS1
// vocabulary.
func curie(rel string) string {
	if rest, ok := strings.CutPrefix(rel, voc); ok {
		return "gs1:" + rest
	}
	return rel
}
