// Package pds is the Product Data Service: it answers what is known about a
// product identifier from an immutable snapshot. Data flows one way:
//
//	ingest      reads and validates the NDJSON input, precomputes every answer, writes a snapshot
//	kv, index   hold the snapshot: Pebble views per visibility, the Bleve manufacturer index
//	service     implements every operation once, reading kv and index, in domain types
//	http | mcp  the two transports, REST and MCP: thin layers over service, sharing httpwire
//	cmd/pds     the binary: pds ingest builds a snapshot, pds serve answers from it
//
// This package holds no code besides the repository-wide tests; README.md
// documents the commands, the input format and the API.
package pds
