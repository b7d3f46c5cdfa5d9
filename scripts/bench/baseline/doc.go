// Command baseline is the yardstick of the HTTP benchmarks: the least a Go
// server can do to answer an identity lookup. It holds one precomputed
// identity document per identifier in a map and copies it into the response;
// no authentication, no envelope building, no logging, no storage.
package main
