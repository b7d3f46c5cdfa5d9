// Command pds builds and serves product data snapshots.
//
// Subcommands: ingest, serve, keys, gen, version, import, snapshot, resolve,
// mcp and export. Each has its own flags and -h.
//
// It owns the flags, the wiring of the packages and the process (signals,
// logs, exit status); no operation and no rule of the data is implemented
// here, so that the commands and the transports cannot disagree.
package main
