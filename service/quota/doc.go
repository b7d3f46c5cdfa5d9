// Package quota is the service's Meter: per-key rate limits (a token bucket
// of --rate requests a second, --burst deep, kept by golang.org/x/time/rate)
// and per-tenant quotas (--quota billing units a day or a month, UTC), with
// usage kept in a file so that it survives a restart.
//
// The clock is read under the Meter's lock and never goes back for a key:
// rate.Limiter.Allow reads time.Now before taking its own lock, and a
// limiter handed an earlier time than its last one moves its clock back, so
// the same interval would be refilled twice under concurrency. Every call
// therefore passes the time explicitly (AllowN, TokensAt).
//
// It owns the counting and the usage file; it knows no transport (the
// transports turn its refusals into their headers) and nothing of the
// operations it meters.
package quota
