package main

import (
	"time"

	"github.com/productdata/pds/service"
	"github.com/productdata/pds/snapshots/trust"
)

// freshness is what the server last read of its trust's timestamp
// statement, and what it last said of it.
type freshness struct {
	read    bool   // a reading is recorded
	stale   bool   // the last reading said stale (logged once)
	lastErr string // the last error reading it (logged once)
}

// readFreshness reads the timestamp statement the replica keeps
// (trust.Replica.Freshness) and records it for /readyz, the metrics and,
// with --stale refuse, the answers; it logs once when the data turns
// stale and once when it is fresh again. A statement that cannot be read,
// or none (a follower between removing an old one and writing the new),
// keeps the last reading, whose expiry still holds. The server reads it at
// start and at every watch tick, never per request.
func (s *serve) readFreshness() {
	r, ok := s.trust.(*trust.Replica)
	if !ok {
		return
	}
	f, err := r.Freshness()
	switch {
	case err != nil:
		if err.Error() != s.fresh.lastErr {
			s.fresh.lastErr = err.Error()
			s.log.Error("kept trust timestamp unreadable; the last one read stands (with none, the data counts as stale)", "trust", snapsOf(s.snapDir)+"/"+trust.StateDir, "error", err.Error())
		}
		if s.fresh.read {
			s.logStale()
			return
		}
	case f.Expires.IsZero() && s.fresh.read:
		s.logStale()
		return
	default:
		s.fresh.lastErr = ""
	}
	s.svc.SetFreshness(service.Freshness{Expires: f.Expires, TimestampVersion: f.Version, RootVersion: f.RootVersion, Refuse: s.stale == "refuse"})
	s.metrics.Trust(f.Expires, f.Version, f.RootVersion)
	s.fresh.read = true
	s.logStale()
}

// logStale says once when the recorded freshness turns stale, and once
// when it is fresh again.
func (s *serve) logStale() {
	f := s.svc.Freshness()
	stale := f.Stale(time.Now())
	if stale == s.fresh.stale {
		return
	}
	s.fresh.stale = stale
	if !stale {
		s.log.Info("trust timestamp renewed; the data is fresh again", "timestamp_expires", f.Expires.UTC().Format(time.RFC3339), "timestamp_version", f.TimestampVersion)
		return
	}
	answers := "still answering (--stale serve)"
	if f.Refuse {
		answers = "answering 503 until it is renewed (--stale refuse)"
	}
	expires := "none kept"
	if !f.Expires.IsZero() {
		expires = f.Expires.UTC().Format(time.RFC3339)
	}
	s.log.Warn("trust timestamp expired: the replica has not heard from its origin; "+answers, "timestamp_expires", expires, "timestamp_version", f.TimestampVersion, "root_version", f.RootVersion)
}
