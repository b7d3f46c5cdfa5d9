// Package jsonutf8 finds and mends what in a line of JSON is not Unicode
// text: bytes that are not UTF-8, and \u escapes of one half of a UTF-16
// surrogate pair without the other half. It names the member each one is in
// (object.value, identifiers[0]), so that a message about an input line can
// say where to look.
//
// # Why it is written here
//
// RFC 8259 asks for UTF-8, but encoding/json (and segmentio/encoding, which
// ingest decodes with first) do not check it: a string member is decoded
// with every bad byte silently turned into U+FFFD, and a json.RawMessage
// member (a claim's object.value, of any JSON type) keeps the bytes as they
// were, so that they would be served raw. Neither says where a bad byte was.
// golang.org/x/text has transformers that replace bad bytes, but none that
// knows JSON (a \ud800 escape is ASCII to it) or names a member. What is
// needed is small: one pass over the line that keeps the path of members,
// which is what this package is (about 200 lines).
//
// # Basics
//
// Valid is the fast test every line gets: utf8.Valid plus a look at each
// backslash. Only a line that fails it is walked by Check, which returns the
// first problems with their member paths, and mended by Fix, which returns
// a copy with each bad byte replaced by U+FFFD (EF BF BD) and each unpaired
// surrogate escape by \ufffd, as encoding/json replaces them when it decodes
// a string. The line's structure is untouched, so a line that was valid JSON
// stays valid JSON, and one that was not stays not.
//
// # Caveats
//
// The walk does not validate JSON: on a line that is not JSON the paths may
// be wrong, but every bad byte is still found and replaced. Paths are kept to
// a depth of maxDepth; deeper members are named by their first maxDepth
// steps.
//
// It owns only the walk over a line's bytes: it knows nothing of ingest's
// records or its rejects, which say what to do with what it finds.
package jsonutf8
