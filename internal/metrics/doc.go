// Package metrics holds the Prometheus collectors of pds and the small API
// the transports and the serve command report through. Label values come
// from bounded sets only: route patterns (never raw paths), methods, status
// codes, tool names, outcomes, refusal reasons, and at most MaxTenants
// tenant names (the rest are counted as "other").
//
// The hot path is kept cheap: a route's counters and histogram are looked up
// once per route and status and cached, so a request costs a map read under
// a read lock and three atomic adds.
//
// It owns the collectors and their label sets; it knows no handler and no
// operation, which report through its API.
package metrics
