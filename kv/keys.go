package kv

// Table tags.
const (
	TagAlias    = 'a'
	TagIdentity = 'i'
	TagPassport = 'p'
	TagEvidence = 'e'
	TagSource   = 's'
	TagMeta     = 'm'
)

// Names of the store's metadata, the keys of table TagMeta.
const (
	// MetaCursorKey names the secret that authenticates search cursors.
	MetaCursorKey = "cursor_key"
)

// ViewTags are the per-subject views, in the order a builder emits them.
var ViewTags = []byte{TagEvidence, TagIdentity, TagPassport}

// AppendKey appends the key of table tag with the given parts to dst.
func AppendKey(dst []byte, tag byte, parts ...string) []byte {
	dst = append(dst, tag, 0)
	for i, p := range parts {
		if i > 0 {
			dst = append(dst, 0)
		}
		dst = append(dst, p...)
	}
	return dst
}

// Key returns the key of table tag with the given parts.
func Key(tag byte, parts ...string) []byte { return AppendKey(nil, tag, parts...) }

// AppendViewKey appends the key of a view of subject for tenant ("" = public).
func AppendViewKey(dst []byte, tag byte, subject, tenant string) []byte {
	dst = append(dst, tag, 0)
	dst = append(dst, subject...)
	dst = append(dst, 0)
	return append(dst, tenant...)
}
