// Package keys holds API keys: the keys file (hashes only, never a key), key
// creation, listing, revocation and rotation, the in-memory set the server
// authenticates against, and a watcher that notices when the file changes.
//
// Every change to the keys file is made under an exclusive lock on a side
// file (FILE.lock), so that parallel 'pds keys' commands never lose one
// another's changes, and is written to a temporary file, synced and renamed
// into place, so that a reader (the server) sees the old file or the new one,
// never a part.
//
// It owns the keys file and the key set; it knows nothing of HTTP or MCP
// (the transports read the bearer token and ask Set) nor of the service's
// operations.
package keys
