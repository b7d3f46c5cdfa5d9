package quota

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/productdata/pds/domain"
)

// Meter implements domain.Meter, and the service's LimitReporter and UsageReporter.
type Meter struct {
	mu      sync.Mutex
	now     func() time.Time
	path    string
	buckets map[string]*bucket // by key id
	usage   map[string]*usage  // by tenant
	dirty   bool
	// pruneAt is how many buckets the map may hold before the full ones
	// are dropped (see bucket).
	pruneAt int
}

// minPruneAt is the fewest buckets kept before any is dropped.
const minPruneAt = 4096

// bucket is one key's rate limiter and the latest time it was asked at.
type bucket struct {
	lim *rate.Limiter
	at  time.Time
}

// usage is a tenant's billed units in one period.
type usage struct {
	Period string `json:"period"` // "2026-11-22" or "2026-11"
	Used   int64  `json:"used"`
}

// Open loads the usage file at path (absent is empty). now is the clock
// (time.Now when nil).
func Open(path string, now func() time.Time) (*Meter, error) {
	if now == nil {
		now = time.Now
	}
	m := &Meter{now: now, path: path, buckets: map[string]*bucket{}, usage: map[string]*usage{}, pruneAt: minPruneAt}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("usage file: %w", err)
	default:
		if err := json.Unmarshal(b, &m.usage); err != nil {
			return nil, fmt.Errorf("usage file %s: not valid JSON: %w", path, err)
		}
	}
	return m, nil
}

// period names the quota period t falls in and says when it ends.
func period(kind string, t time.Time) (string, time.Time) {
	t = t.UTC()
	if kind == "day" {
		start := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
		return start.Format("2006-01-02"), start.AddDate(0, 0, 1)
	}
	start := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	return start.Format("2006-01"), start.AddDate(0, 1, 0)
}

func ceilSeconds(d time.Duration) int {
	s := int(math.Ceil(d.Seconds()))
	if s < 1 {
		s = 1
	}
	return s
}

// burst is a key's bucket depth: --burst, or the rate rounded up.
func burst(rate float64, b int) float64 {
	if b > 0 {
		return float64(b)
	}
	return math.Max(1, math.Ceil(rate))
}

// Charge refuses a call that the key's rate limit or the tenant's quota does
// not allow, and otherwise bills units to the tenant. A refused call bills
// nothing and takes no token.
func (m *Meter) Charge(_ context.Context, c domain.Caller, op string, units int) error {
	if !c.Limited() {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	var u *usage
	var name string
	var end time.Time
	if c.Quota > 0 {
		name, end = period(c.QuotaPeriod, now)
		u = m.usage[c.Tenant]
		if u == nil || u.Period != name {
			u = &usage{Period: name}
		}
		if u.Used+int64(units) > c.Quota {
			left := c.Quota - u.Used
			if left < 0 {
				left = 0
			}
			return &domain.Error{Code: domain.CodeTenantQuotaExceeded, RetryAfter: ceilSeconds(end.Sub(now)),
				Detail: fmt.Sprintf("%s needs %d unit(s) but tenant %s has %d of its %d-unit %s quota left; it renews at %s", op, units, c.Tenant, left, c.Quota, periodWord(c.QuotaPeriod), end.Format(time.RFC3339))}
		}
	}
	if c.Rate > 0 {
		b, at := m.bucket(c.KeyID, c.Rate, c.Burst, now)
		if !b.lim.AllowN(at, 1) { // a refused call takes no token
			wait := time.Duration((1 - b.lim.TokensAt(at)) / c.Rate * float64(time.Second))
			return &domain.Error{Code: domain.CodeRateLimited, RetryAfter: ceilSeconds(wait),
				Detail: fmt.Sprintf("this key may make %g request(s) a second (burst %g); retry after the Retry-After delay", c.Rate, burst(c.Rate, c.Burst))}
		}
	}
	if u != nil && units > 0 {
		u.Used += int64(units)
		m.usage[c.Tenant] = u
		m.dirty = true
	}
	return nil
}

func periodWord(kind string) string {
	if kind == "day" {
		return "daily"
	}
	return "monthly"
}

// bucket returns the key's limiter (made full on first use, and remade when
// the key's rate or burst changed) and the time to ask it at: now, or the
// latest time it was asked at when the clock has gone back. Call with m.mu
// held.
func (m *Meter) bucket(id string, r float64, b int, now time.Time) (*bucket, time.Time) {
	depth := int(burst(r, b))
	bk := m.buckets[id]
	if bk == nil && len(m.buckets) >= m.pruneAt {
		m.prune(now)
	}
	if bk == nil || bk.lim.Limit() != rate.Limit(r) || bk.lim.Burst() != depth {
		bk = &bucket{lim: rate.NewLimiter(rate.Limit(r), depth), at: now}
		m.buckets[id] = bk
	}
	if now.After(bk.at) {
		bk.at = now
	}
	return bk, bk.at
}

// prune drops the buckets that have refilled (a full bucket is the same as
// one made anew), so that callers who come and go, such as the resolver's
// client addresses, do not grow the map without bound. It runs when the map
// reaches pruneAt, which then becomes twice what is left (at least
// minPruneAt), so its cost is spread over the buckets added. Call with m.mu
// held.
func (m *Meter) prune(now time.Time) {
	for id, bk := range m.buckets {
		at := bk.at
		if now.After(at) {
			at = now
		}
		if bk.lim.TokensAt(at) >= float64(bk.lim.Burst()) {
			delete(m.buckets, id)
		}
	}
	m.pruneAt = max(minPruneAt, 2*len(m.buckets))
}

// Limits says where a caller stands: against the tenant's quota when the key
// has one, else against its rate limit.
func (m *Meter) Limits(c domain.Caller) (domain.Limits, bool) {
	if c.KeyID == "" {
		return domain.Limits{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	switch {
	case c.Quota > 0:
		name, end := period(c.QuotaPeriod, now)
		used := int64(0)
		if u := m.usage[c.Tenant]; u != nil && u.Period == name {
			used = u.Used
		}
		return domain.Limits{Limit: c.Quota, Remaining: max(0, c.Quota-used), Reset: int64(ceilSeconds(end.Sub(now)))}, true
	case c.Rate > 0:
		b, at := m.bucket(c.KeyID, c.Rate, c.Burst, now)
		depth := burst(c.Rate, c.Burst)
		tokens := b.lim.TokensAt(at)
		return domain.Limits{Limit: int64(depth), Remaining: int64(math.Floor(tokens)),
			Reset: int64(math.Ceil((depth - tokens) / c.Rate))}, true
	}
	return domain.Limits{}, false
}

// Usage says where a caller stands against its tenant's quota and its key's
// rate bucket, without billing or taking a token.
func (m *Meter) Usage(c domain.Caller) domain.KeyUsage {
	var out domain.KeyUsage
	if c.KeyID == "" {
		return out
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if c.Quota > 0 {
		name, end := period(c.QuotaPeriod, now)
		used := int64(0)
		if u := m.usage[c.Tenant]; u != nil && u.Period == name {
			used = u.Used
		}
		out.Quota = &domain.QuotaUsage{Limit: c.Quota, Period: c.QuotaPeriod, Used: used,
			Remaining: max(0, c.Quota-used), ResetsAt: end.Format(time.RFC3339)}
	}
	if c.Rate > 0 {
		b, at := m.bucket(c.KeyID, c.Rate, c.Burst, now)
		depth := burst(c.Rate, c.Burst)
		tokens := b.lim.TokensAt(at)
		left := int64(math.Floor(tokens))
		out.Rate = &domain.RateUsage{PerSecond: c.Rate, Burst: int64(depth), Used: int64(depth) - left, Remaining: left,
			FullInSeconds: int64(math.Ceil((depth - tokens) / c.Rate))}
	}
	return out
}

// Flush writes the usage file when something was billed since the last
// flush. It writes a new file and renames it into place.
func (m *Meter) Flush() error {
	m.mu.Lock()
	if !m.dirty {
		m.mu.Unlock()
		return nil
	}
	b, err := json.Marshal(m.usage)
	m.dirty = false
	m.mu.Unlock()
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(m.path), ".usage-*")
	if err != nil {
		return fmt.Errorf("usage file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("usage file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("usage file: %w", err)
	}
	return os.Rename(tmp.Name(), m.path)
}

// TenantUse is one tenant's billed units in its latest quota period.
type TenantUse struct {
	Tenant string
	Used   int64
}

// Tenants lists the billed units of every tenant in its latest period (for
// the metrics).
func (m *Meter) Tenants() []TenantUse {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]TenantUse, 0, len(m.usage))
	for t, u := range m.usage {
		out = append(out, TenantUse{Tenant: t, Used: u.Used})
	}
	return out
}
