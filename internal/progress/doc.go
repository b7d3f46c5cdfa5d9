// Package progress calls a report function about once a period while long
// work runs (ingest, the Open Food Facts import), so that each long command
// prints its own progress line without keeping its own ticker goroutine.
//
// It owns the ticking only; what a line says is its caller's.
package progress
