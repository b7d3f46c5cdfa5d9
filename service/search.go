package service

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/index"
	"github.com/productdata/pds/keys"
)

// Search limits.
const (
	DefaultSearchLimit = 20
	MaxSearchLimit     = 100
	maxManufacturer    = 200
)

// searchParams are the query parameters search knows.
var searchParams = map[string]bool{
	"manufacturer": true, "trust_level_min": true, "has_passport": true, "updated_since": true,
	"sort": true, "cursor": true, "limit": true,
}

// unsupportedParams are filters the data does not back: refused, never ignored.
var unsupportedParams = map[string]bool{"brand": true, "category": true, "market": true}

// searchItem is one product in a search answer.
type searchItem struct {
	Subject      string  `json:"subject"`
	Manufacturer string  `json:"manufacturer"`
	Brand        *string `json:"brand"`
	TrustLevel   string  `json:"trust_level"`
	HasPassport  bool    `json:"has_passport"`
	UpdatedAt    string  `json:"updated_at"`
	Score        float64 `json:"score"`
}

// cursorBody is what a cursor carries, authenticated with the snapshot's key.
type cursorBody struct {
	Query string          `json:"q"` // hash of the query it belongs to
	After *index.Position `json:"a"`
}

// Search finds products by manufacturer. params are the query parameters of
// the REST call (MCP passes its arguments the same way, as strings).
func (s *Service) Search(ctx context.Context, c Caller, params url.Values) (*Result, error) {
	if err := s.authorize(ctx, c, "search_products", keys.ScopeSearch, 0); err != nil {
		return nil, err
	}
	q, cursor, err := parseSearch(params, c.Tenant)
	if err != nil {
		return nil, err
	}
	if err := s.authorize(ctx, c, "search_products", "", 1); err != nil {
		return nil, err
	}
	snap, err := s.snapshot()
	if err != nil {
		return nil, err
	}
	defer snap.release()
	if snap.searcher == nil {
		return nil, domain.Internal(fmt.Errorf("snapshot %s has no search index", snap.Dir))
	}
	binding := queryBinding(q, c.Tenant, snap.Manifest.BuildID)
	if cursor != "" {
		if q.After, err = snap.openCursor(cursor, binding); err != nil {
			return nil, err
		}
	}
	page, err := snap.searcher.Search(ctx, q)
	if err != nil {
		return nil, domain.Internal(err)
	}
	items := make([]searchItem, 0, len(page.Hits))
	for _, h := range page.Hits {
		it := searchItem{Subject: h.Subject, Manufacturer: h.Manufacturer, TrustLevel: trustName(h.TrustLevel),
			HasPassport: h.HasPassport, UpdatedAt: h.UpdatedAt.UTC().Format(time.RFC3339), Score: roundScore(h.Score)}
		if h.Brand != "" {
			b := h.Brand
			it.Brand = &b
		}
		items = append(items, it)
	}
	status := domain.StatusFound
	var cov *domain.Coverage
	if len(items) == 0 {
		status = domain.StatusNotFound
		cov = snap.coverageAll(c.Tenant)
	}
	res, err := bodyResult(domain.Body{Status: status, Data: map[string]any{"items": items}}, cov)
	if err != nil {
		return nil, err
	}
	if page.Next != nil && len(items) > 0 {
		res.NextCursor = snap.sealCursor(binding, page.Next)
	}
	return res, nil
}

func trustName(rank int) string {
	if rank >= 0 && rank < len(domain.TrustLevels) {
		return domain.TrustLevels[rank]
	}
	return ""
}

func roundScore(f float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'f', 4, 64), 64)
	return v
}

// parseSearch checks every parameter and returns the index query and the
// cursor, if one was given.
func parseSearch(params url.Values, tenant string) (index.Query, string, error) {
	q := index.Query{Tenant: tenant, TrustLevelMin: -1, Limit: DefaultSearchLimit}
	names := make([]string, 0, len(params))
	for name := range params {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if unsupportedParams[name] {
			return q, "", domain.Errorf(domain.CodeUnsupportedFilter, "the %s filter is not backed by data in this revision; only manufacturer (with trust_level_min, has_passport, updated_since) can be searched", name)
		}
	}
	for _, name := range names {
		if !searchParams[name] {
			return q, "", domain.Errorf(domain.CodeInvalidFilter, "unknown parameter %q; search takes manufacturer, trust_level_min, has_passport, updated_since, sort, cursor and limit (paging is by cursor only)", clip(name))
		}
		if len(params[name]) != 1 {
			return q, "", domain.Errorf(domain.CodeInvalidFilter, "parameter %s is given %d times; give it once", name, len(params[name]))
		}
	}
	one := func(name string) (string, bool) {
		v, ok := params[name]
		if !ok {
			return "", false
		}
		return v[0], true
	}
	if v, ok := one("manufacturer"); ok {
		v = strings.TrimSpace(v)
		if v == "" || !utf8.ValidString(v) || utf8.RuneCountInString(v) > maxManufacturer {
			return q, "", domain.Errorf(domain.CodeInvalidFilter, "manufacturer must be 1 to %d characters of text", maxManufacturer)
		}
		q.Manufacturer = v
	}
	if v, ok := one("trust_level_min"); ok {
		r := domain.TrustRank(v)
		if r < 0 {
			return q, "", domain.Errorf(domain.CodeInvalidFilter, "trust_level_min must be one of L0, L1, L2, L3, L4, L5 (got %q)", clip(v))
		}
		q.TrustLevelMin = r
	}
	if v, ok := one("has_passport"); ok {
		switch v {
		case "true", "false":
			b := v == "true"
			q.HasPassport = &b
		default:
			return q, "", domain.Errorf(domain.CodeInvalidFilter, "has_passport must be true or false (got %q)", clip(v))
		}
	}
	if v, ok := one("updated_since"); ok {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return q, "", domain.Errorf(domain.CodeInvalidFilter, "updated_since must be an RFC 3339 date-time such as 2025-01-31T00:00:00Z (got %q)", clip(v))
		}
		q.UpdatedSince = t
	}
	if v, ok := one("limit"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxSearchLimit {
			return q, "", domain.Errorf(domain.CodeInvalidFilter, "limit must be a whole number from 1 to %d (got %q)", MaxSearchLimit, clip(v))
		}
		q.Limit = n
	}
	q.Sort = index.SortUpdatedAt
	if q.Manufacturer != "" {
		q.Sort = index.SortRelevance
	}
	if v, ok := one("sort"); ok {
		switch v {
		case index.SortRelevance:
			if q.Manufacturer == "" {
				return q, "", domain.Errorf(domain.CodeInvalidSort, "sort=relevance needs a manufacturer to be relevant to; use sort=updated_at")
			}
			q.Sort = v
		case index.SortUpdatedAt:
			q.Sort = v
		default:
			return q, "", domain.Errorf(domain.CodeInvalidSort, "sort must be relevance or updated_at (got %q)", clip(v))
		}
	}
	cursor, _ := one("cursor")
	if _, ok := params["cursor"]; ok && cursor == "" {
		return q, "", domain.Errorf(domain.CodeInvalidCursor, "the cursor is empty; pass meta.next_cursor from the previous page, or leave cursor out for the first page")
	}
	return q, cursor, nil
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// queryBinding identifies a query for one tenant on one snapshot: a cursor
// is valid only for the binding it was made for. The limit may change
// between pages.
func queryBinding(q index.Query, tenant, build string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "v1\x00%s\x00%s\x00%s\x00%d\x00", build, tenant, q.Manufacturer, q.TrustLevelMin)
	if q.HasPassport != nil {
		fmt.Fprintf(&b, "%t", *q.HasPassport)
	}
	fmt.Fprintf(&b, "\x00%d\x00%s", q.UpdatedSince.UnixNano(), q.Sort)
	sum := sha256.Sum256([]byte(b.String()))
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}

const macLen = 16

func (snap *Snapshot) mac(payload []byte) []byte {
	m := hmac.New(sha256.New, snap.cursorKey)
	m.Write(payload)
	return m.Sum(nil)[:macLen]
}

// sealCursor makes the opaque, tamper-evident cursor for the next page.
func (snap *Snapshot) sealCursor(binding string, after *index.Position) string {
	payload, _ := json.Marshal(cursorBody{Query: binding, After: after})
	return base64.RawURLEncoding.EncodeToString(append(payload, snap.mac(payload)...))
}

// openCursor checks a cursor's seal and binding and returns its position.
func (snap *Snapshot) openCursor(cursor, binding string) (*index.Position, error) {
	bad := domain.Errorf(domain.CodeInvalidCursor, "the cursor is not valid for this query (altered, from another query, tenant or snapshot); start again without a cursor")
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(raw) <= macLen {
		return nil, bad
	}
	payload, mac := raw[:len(raw)-macLen], raw[len(raw)-macLen:]
	if !hmac.Equal(mac, snap.mac(payload)) {
		return nil, bad
	}
	var cb cursorBody
	if err := json.Unmarshal(payload, &cb); err != nil || cb.Query != binding || cb.After == nil {
		return nil, bad
	}
	return cb.After, nil
}

// coverageAll is what a search consulted: every source the caller may see.
func (snap *Snapshot) coverageAll(tenant string) *domain.Coverage {
	cov := &domain.Coverage{SourcesConsulted: []string{}}
	for _, src := range snap.sources {
		if !src.VisibleTo(tenant) {
			continue
		}
		if src.IsEnabled() {
			cov.SourcesConsulted = append(cov.SourcesConsulted, src.ID)
		} else {
			cov.SourcesSkipped = append(cov.SourcesSkipped, domain.Skipped{ID: src.ID, Reason: domain.SkipDisabled})
		}
	}
	return cov
}
