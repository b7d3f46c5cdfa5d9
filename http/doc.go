// Package http is the REST transport of pds: routes, authentication, request
// ids, access logs and the one place that turns an error into problem+json.
// Handlers decode the request, call the service operation and write its
// envelope; no operation is implemented here. The listener that serves it
// (connections, their limits, and the lane for plain GETs) is httpfront's.
//
// It knows no storage and no build: it reads only through service. It owns
// no listener either, and httpwire holds what it shares with mcp.
package http
