// Package gs1 checks the syntax of GS1 identifiers and parses GS1 Digital
// Link URIs. It imports only the standard library and never touches stored
// data: it says whether a value is well formed, not whether a product exists.
//
// Validation (Validate, ValidGTIN, ParseSubject, Identify) knows four
// namespaces: gtin (GTIN-8, -12, -13, -14, canonical as 14 digits), gln (13
// digits), sscc (18 digits) and internal_sku (pds's own rule: 1 to 64 ASCII
// letters and digits with single '-', '_' or '.' separators, starting and
// ending with a letter or digit). With auto the namespace is inferred from
// the shape of the value; a valid 13-digit value is ambiguous between GTIN
// and GLN.
//
// ParseDigitalLink reads an uncompressed GS1 Digital Link URI (syntax 1.7.0
// as pds reads it: release 1.6.0 of the standard plus the 2026-01 GS1
// Barcode Syntax Dictionary) into its primary key, key qualifiers and data
// attributes, checks every value against its AI's format and check-digit
// and content rules, and gives the GS1 element string and a canonical URI.
//
// The AI table (aitable.go) is generated from the GS1 Barcode Syntax
// Dictionary (GS1 AISBL, Apache-2.0) by ./internal/aigen; run go generate in
// this folder with the dictionary in ../../../shared/gs1 to refresh it.
//
// See docs/gs1.md for the rules as users see them.
//
// It owns the GS1 syntax rules only: it knows nothing of pds's products,
// storage or transports, which call it.
package gs1

//go:generate go run ./internal/aigen -dict ../../../shared/gs1/gs1-syntax-dictionary-2026-01-27.txt -out aitable.go
