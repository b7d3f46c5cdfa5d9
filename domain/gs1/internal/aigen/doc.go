// Command aigen writes gs1/aitable.go, the table of GS1 Application
// Identifiers that package gs1 checks values against, from the GS1 Barcode
// Syntax Dictionary (GS1 AISBL, Apache-2.0).
//
// Usage (from gs1/, as go generate runs it):
//
//	go run ./internal/aigen -dict ../../../shared/gs1/gs1-syntax-dictionary-2026-01-27.txt -out aitable.go
//
// The output depends only on the dictionary's content, so regenerating from
// the same release gives the same bytes; main_test.go checks that the
// committed table is current.
package main
