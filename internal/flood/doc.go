// Package flood floods an HTTP server with connections from one address
// and, while the flood goes on, sends requests as a new client from
// another: whether and how soon the new client is served, and how many of
// its requests are refused. httpfront's tests and make load (bench/flood)
// run it.
//
// It knows nothing of pds's handlers: it speaks plain HTTP/1.1 to any
// server.
package flood
