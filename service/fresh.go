package service

import (
	"time"

	"github.com/productdata/pds/domain"
)

// Freshness is what a replica's root of trust says of how fresh the data
// it serves is: when the newest timestamp statement it keeps stops
// holding (an origin that renews it is not frozen), and the versions of
// that statement and of the trusted root.
type Freshness struct {
	// Expires is when the kept timestamp statement stops holding; zero
	// when the replica keeps none.
	Expires          time.Time
	TimestampVersion int64
	RootVersion      int64
	// Refuse answers every operation that reads the snapshot with
	// SERVICE_UNAVAILABLE once the timestamp has expired, as for a
	// damaged snapshot; without it a stale replica keeps answering.
	Refuse bool
}

// Stale reports whether the timestamp no longer holds at now.
func (f *Freshness) Stale(now time.Time) bool { return !now.Before(f.Expires) }

// staleRetry is the Retry-After of an answer refused for a stale
// timestamp: the follower renews it at its next poll, every 30 s by
// default.
const staleRetry = 30

// SetFreshness records the freshness of the data served; the server
// reads it from the replica's trust at start and at every watch tick.
func (s *Service) SetFreshness(f Freshness) { s.fresh.Store(&f) }

// Freshness returns the recorded freshness; nil when the server trusts no
// root.
func (s *Service) Freshness() *Freshness { return s.fresh.Load() }

// Withheld returns why the snapshot being served is withheld although it
// is sound: its timestamp expired and the server refuses stale data (see
// Freshness.Refuse). Every operation that reads the snapshot answers this
// error meanwhile; nil when answers go out.
func (s *Service) Withheld() error {
	f := s.fresh.Load()
	if f == nil || !f.Refuse || !f.Stale(time.Now()) {
		return nil
	}
	return staleError(f)
}

func staleError(f *Freshness) *domain.Error {
	detail := "the replica keeps no timestamp statement from its origin; answers resume once the replica has one"
	if !f.Expires.IsZero() {
		detail = "the data's timestamp statement expired at " + f.Expires.UTC().Format(time.RFC3339) +
			" (the replica has not heard from its origin since); answers resume once it is renewed"
	}
	return &domain.Error{Code: domain.CodeServiceUnavailable, RetryAfter: staleRetry, Detail: detail}
}
