// Package jsonshape stores small documents that one program renders, such
// as the identity views of a snapshot, as the shape they share and the
// values that fill it, and gives them back byte for byte.
//
// A document is cut at every '"' into pieces. A piece that most documents
// hold (a member name, punctuation, "null", a status) is constant; any other
// piece is a hole. A document's shape is its constant text with the holes
// left open; a hole is filled with the caller's context (the subject the
// document is stored under), an entry of a table of frequent values (a
// manufacturer's name), or its own bytes. The constants, the values and the
// shapes are trained once from a sample of the documents (Train) and stored
// beside them (Table.Bytes); a document whose shape is not in the table is
// stored piece by piece, still exactly.
//
// Decoding a document is then a copy of each of its shape's segments and
// each of its values, with no matches to follow, where klauspost/compress
// decodes an s2 block made with a dictionary in Go, without its assembly;
// and the documents take fewer bytes (see docs/design.md).
//
// Why not a library: the general-purpose codecs (s2, LZ4, zstd, with or
// without a dictionary) find the repeated text again in every document, at
// a cost per match; pierrec/lz4, whose decoder is assembly, cannot compress
// with a dictionary. Schema formats (protobuf, Avro) would render the JSON
// again on every read and need a schema kept in step with the renderer;
// this package needs neither and gives back the stored bytes as they were.
package jsonshape
