package service

import "errors"

// The errors of reading stored views for EachPublicProduct, all wrapped in
// domain.Internal before a caller sees them (a stored view is what ingest
// wrote, not what a caller sent).
var (
	errStoredJSON = errors.New("stored view is not the JSON object ingest writes")
	// errClaimsEnd: a passport's members did not run to its end from where
	// its claims were taken to end (walkMembers); they are then stepped over.
	errClaimsEnd = errors.New("the passport's claims do not end where its sources begin")
	// errNotPlain: a view is not of the plain shape read by hand
	// (export_decode.go); the JSON decoder reads it instead.
	errNotPlain = errors.New("not a plain view")
)
