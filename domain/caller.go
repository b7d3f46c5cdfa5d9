package domain

import (
	"context"
	"slices"
)

// Caller is who makes a call: the tenant and scopes its API key resolves
// to, the key's public id, and the key's limits. A Caller with no KeyID
// presented no key: it has no scopes and no limits.
type Caller struct {
	Tenant string // "" sees public data only
	Scopes []string
	KeyID  string
	// The key's limits; zero is none. Quota is the tenant's units a
	// QuotaPeriod ("day" or "month"), Rate the key's calls a second with
	// Burst calls at once.
	Quota       int64
	QuotaPeriod string
	Rate        float64
	Burst       int
}

// HasScope reports whether the caller's key carries scope.
func (c Caller) HasScope(scope string) bool { return slices.Contains(c.Scopes, scope) }

// Limited reports whether the caller's key has a quota or a rate limit.
func (c Caller) Limited() bool { return c.KeyID != "" && (c.Quota > 0 || c.Rate > 0) }

// Meter is the seam for quotas, rate limits and billing: Charge is called
// once per operation with the units it bills, before the operation runs, and
// refuses the whole call (TENANT_QUOTA_EXCEEDED, RATE_LIMITED) or lets it
// through.
type Meter interface {
	Charge(ctx context.Context, c Caller, op string, units int) error
}

// Limits is what the RateLimit-* response headers say to one caller.
type Limits struct {
	Limit, Remaining int64
	Reset            int64 // seconds
}

// KeyUsage is where a caller stands against both of its key's limits, as
// whoami shows it: a member is nil when the key has no such limit.
type KeyUsage struct {
	Quota *QuotaUsage `json:"quota"`
	Rate  *RateUsage  `json:"rate"`
}

// QuotaUsage is the tenant's quota in the current period (every key of the
// tenant draws on it).
type QuotaUsage struct {
	Limit     int64  `json:"limit"`
	Period    string `json:"period"` // day or month (UTC)
	Used      int64  `json:"used"`
	Remaining int64  `json:"remaining"`
	ResetsAt  string `json:"resets_at"` // RFC 3339, when the next period starts
}

// RateUsage is the key's rate bucket now.
type RateUsage struct {
	PerSecond float64 `json:"per_second"`
	Burst     int64   `json:"burst"`
	// Used is how many of the burst's calls are spent and not yet refilled;
	// Used + Remaining = Burst.
	Used      int64 `json:"used"`
	Remaining int64 `json:"remaining"`
	// FullInSeconds is how long until the bucket is full again.
	FullInSeconds int64 `json:"full_in_seconds"`
}
