// Package pds is the Product Data Service: it answers what is known about a
// product identifier from an immutable snapshot. Data flows one way:
//
//	ingest → snapshots (kv, index) → service → http | mcp | resolver
//	              └→ snapshots/fleet (ship to replicas)
//
//	ingest           reads and checks the NDJSON input and precomputes every answer (ingest/input makes input)
//	snapshots        owns the snapshot format: layout, manifest, signatures, the Writer ingest writes through
//	                 and the Open service reads through; snapshots/fleet ships snapshots to replicas
//	kv, index        the snapshot's two stores: Pebble views per visibility, the Bleve manufacturer index
//	service          implements every operation once, in domain types
//	http | mcp | resolver  the transports: thin layers over service, sharing http/httpwire
//	cmd/pds          the binary: wires the packages together and owns the flags
//
// domain holds the vocabulary every layer shares and imports only the
// standard library; internal holds small tools no layer owns. This package
// holds no code besides the repository-wide tests: deps_test.go holds the
// layer order and the import rules, docs_test.go the documents' links.
// README.md documents the commands, the input format and the API.
package pds
