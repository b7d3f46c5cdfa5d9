package service

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/index"
	"github.com/productdata/pds/service/keys"
)

// parseSince reads updated_since: an RFC 3339 date-time, or an RFC 3339
// full-date (2026-01-01), which is its midnight UTC. A date has no zone, and
// updated_at is written in UTC, so UTC is the reading that gives the same
// day boundaries as the values it is compared with.
func parseSince(v string) (time.Time, error) {
	if len(v) == len(time.DateOnly) {
		return time.Parse(time.DateOnly, v)
	}
	return time.Parse(time.RFC3339Nano, v)
}

// Search limits.
const (
	DefaultSearchLimit = 20
	MaxSearchLimit     = 100
	maxManufacturer    = 200
)

// SearchArgs are the arguments of Search: the REST query parameters, or the
// search_products members, of the same names. A nil member was not given.
type SearchArgs struct {
	Manufacturer  *string `json:"manufacturer"`
	TrustLevelMin *string `json:"trust_level_min"`
	HasPassport   *bool   `json:"has_passport"`
	UpdatedSince  *string `json:"updated_since"`
	Sort          *string `json:"sort"`
	Cursor        *string `json:"cursor"`
	Limit         *int    `json:"limit"`
	// Other names the parameters given that search does not know, so that
	// Search refuses them: UNSUPPORTED_FILTER for brand, category and
	// market, INVALID_FILTER for the rest.
	Other []string `json:"-"`
}

// SearchParams are the names of the parameters search knows.
var SearchParams = []string{"manufacturer", "trust_level_min", "has_passport", "updated_since", "sort", "cursor", "limit"}

// UnmarshalJSON reads the members of a JSON object: the strings as strings,
// has_passport a boolean, limit an integer. A member given as null counts
// as left out. A member search does not know goes into Other when it is a
// string, number or boolean, so that Search answers it as REST does.
func (a *SearchArgs) UnmarshalJSON(raw []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return domain.Errorf(domain.CodeInvalidRequest, "the arguments are not a JSON object")
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	*a = SearchArgs{}
	for _, k := range names {
		raw := bytes.TrimSpace(m[k])
		if string(raw) == "null" {
			continue
		}
		if err := a.setMember(k, raw); err != nil {
			return err
		}
	}
	return nil
}

// setMember decodes one member of the JSON arguments.
func (a *SearchArgs) setMember(k string, raw json.RawMessage) error {
	str := func(dst **string) error {
		var v string
		if json.Unmarshal(raw, &v) != nil {
			return domain.Errorf(domain.CodeInvalidRequest, "member '%s' must be a string", k)
		}
		*dst = &v
		return nil
	}
	switch k {
	case "manufacturer":
		return str(&a.Manufacturer)
	case "trust_level_min":
		return str(&a.TrustLevelMin)
	case "updated_since":
		return str(&a.UpdatedSince)
	case "sort":
		return str(&a.Sort)
	case "cursor":
		return str(&a.Cursor)
	case "has_passport":
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return domain.Errorf(domain.CodeInvalidRequest, "member 'has_passport' must be a boolean (true or false)")
		}
		a.HasPassport = &b
	case "limit":
		// A JSON Schema integer may be written 20.0 or 2e1.
		var f float64
		if json.Unmarshal(raw, &f) != nil || f != float64(int64(f)) {
			return domain.Errorf(domain.CodeInvalidRequest, "member 'limit' must be an integer from 1 to %d", MaxSearchLimit)
		}
		n := int(int64(f))
		a.Limit = &n
	default:
		if len(raw) == 0 || raw[0] == '{' || raw[0] == '[' {
			return domain.Errorf(domain.CodeInvalidRequest, "member '%s' must be a string", clipAt(k, 100))
		}
		a.Other = append(a.Other, k)
	}
	return nil
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
	// Score is the relevance of the manufacturer's name to the query, or
	// null when the query has no manufacturer (nothing was scored).
	Score *float64 `json:"score"`
}

// cursorBody is what a cursor carries, authenticated with the snapshot's key.
type cursorBody struct {
	Query string          `json:"q"` // hash of the query it belongs to
	After *index.Position `json:"a"`
}

// Search finds products by manufacturer.
func (s *Service) Search(ctx context.Context, c domain.Caller, a SearchArgs) (*Result, error) {
	if err := s.authorize(ctx, c, "search_products", keys.ScopeSearch, 0); err != nil {
		return nil, err
	}
	q, cursor, err := parseSearch(a, c.Tenant)
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
	binding := queryBinding(q, c.Tenant, snap.Manifest.BuildID)
	if cursor != "" {
		if q.After, err = snap.openCursor(cursor, binding); err != nil {
			return nil, err
		}
	}
	page, err := snap.Search(ctx, q)
	if err != nil {
		return nil, domain.Internal(err)
	}
	items := make([]searchItem, 0, len(page.Hits))
	for _, h := range page.Hits {
		it := searchItem{Subject: h.Subject, Manufacturer: h.Manufacturer, TrustLevel: trustName(h.TrustLevel),
			HasPassport: h.HasPassport, UpdatedAt: h.UpdatedAt.UTC().Format(time.RFC3339)}
		if q.Manufacturer != "" {
			score := roundScore(h.Score)
			it.Score = &score
		}
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
	return snap.stamped(res, nil)
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

// parseSearch checks every argument and returns the index query and the
// cursor, if one was given.
func parseSearch(a SearchArgs, tenant string) (index.Query, string, error) {
	q := index.Query{Tenant: tenant, TrustLevelMin: -1, Limit: DefaultSearchLimit}
	if err := checkOther(a.Other); err != nil {
		return q, "", err
	}
	if v := a.Manufacturer; v != nil {
		m := strings.TrimSpace(*v)
		if m == "" || !utf8.ValidString(m) || utf8.RuneCountInString(m) > maxManufacturer {
			return q, "", domain.Errorf(domain.CodeInvalidFilter, "manufacturer must be 1 to %d characters of text", maxManufacturer)
		}
		q.Manufacturer = m
	}
	if v := a.TrustLevelMin; v != nil {
		r := domain.TrustRank(*v)
		if r < 0 {
			return q, "", domain.Errorf(domain.CodeInvalidFilter, "trust_level_min must be one of L0, L1, L2, L3, L4, L5 (got %q)", clip(*v))
		}
		q.TrustLevelMin = r
	}
	q.HasPassport = a.HasPassport
	if v := a.UpdatedSince; v != nil {
		t, err := parseSince(*v)
		if err != nil {
			return q, "", domain.Errorf(domain.CodeInvalidFilter, "updated_since must be an RFC 3339 date-time such as 2025-01-31T00:00:00Z, "+
				"or a date such as 2025-01-31 (its midnight UTC) (got %q)", clip(*v))
		}
		q.UpdatedSince = t
	}
	if v := a.Limit; v != nil {
		if *v < 1 || *v > MaxSearchLimit {
			return q, "", SearchTextError("limit", strconv.Itoa(*v))
		}
		q.Limit = *v
	}
	var err error
	if q.Sort, err = searchSort(a.Sort, q.Manufacturer != ""); err != nil {
		return q, "", err
	}
	if a.Cursor != nil && *a.Cursor == "" {
		return q, "", domain.Errorf(domain.CodeInvalidCursor, "the cursor is empty; pass meta.next_cursor from the previous page, or leave cursor out for the first page")
	}
	cursor := ""
	if a.Cursor != nil {
		cursor = *a.Cursor
	}
	return q, cursor, nil
}

// checkOther refuses parameters search does not know: a filter the data
// does not back first, then the first other name.
func checkOther(other []string) error {
	names := slices.Sorted(slices.Values(other))
	for _, name := range names {
		if unsupportedParams[name] {
			return domain.Errorf(domain.CodeUnsupportedFilter, "the %s filter is not backed by data in this revision; only manufacturer (with trust_level_min, has_passport, updated_since) can be searched", name)
		}
	}
	if len(names) > 0 {
		return domain.Errorf(domain.CodeInvalidFilter, "unknown parameter %q; search takes manufacturer, trust_level_min, has_passport, updated_since, sort, cursor and limit (paging is by cursor only)", clip(names[0]))
	}
	return nil
}

// searchSort is the sort asked for, or the default: relevance with a
// manufacturer, updated_at without one.
func searchSort(v *string, hasManufacturer bool) (string, error) {
	if v == nil {
		if hasManufacturer {
			return index.SortRelevance, nil
		}
		return index.SortUpdatedAt, nil
	}
	switch *v {
	case index.SortRelevance:
		if !hasManufacturer {
			return "", domain.Errorf(domain.CodeInvalidSort, "sort=relevance needs a manufacturer to be relevant to; use sort=updated_at")
		}
		return *v, nil
	case index.SortUpdatedAt:
		return *v, nil
	}
	return "", domain.Errorf(domain.CodeInvalidSort, "sort must be relevance or updated_at (got %q)", clip(*v))
}

// SearchTextError refuses the value of has_passport or limit, given as
// text, that is not true or false, or not a whole number from 1 to
// MaxSearchLimit.
func SearchTextError(param, given string) error {
	if param == "has_passport" {
		return domain.Errorf(domain.CodeInvalidFilter, "has_passport must be true or false (got %q)", clip(given))
	}
	return domain.Errorf(domain.CodeInvalidFilter, "limit must be a whole number from 1 to %d (got %q)", MaxSearchLimit, clip(given))
}

// clip shortens what a caller sent before it is echoed in a detail.
func clip(s string) string { return clipAt(s, 64) }

func clipAt(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
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
	m := hmac.New(sha256.New, snap.CursorKey)
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
