// Package pds is the Product Data Service: it answers what is known about a
// product identifier from an immutable snapshot. Data flows one way:
//
//	ingest → snapshots (kv, index) → service → http | mcp
//
//	ingest      reads and validates the NDJSON input (scratch sorts it) and precomputes every answer
//	snapshots   owns the snapshot: its layout and manifest, the Writer ingest writes through,
//	            Open-and-verify that service reads through, and shipping (publish, pull, follow)
//	kv, index   the snapshot's two stores: Pebble views per visibility, the Bleve manufacturer index
//	service     implements every operation once, in domain types
//	http | mcp  the two transports, REST and MCP: thin layers over service, sharing httpwire
//	cmd/pds     the binary: wires the packages together and owns the flags
//
// domain holds the vocabulary every layer shares and imports only the
// standard library. This package holds no code besides the repository-wide
// tests (deps_test.go holds the layering); README.md documents the commands,
// the input format and the API.
package pds
