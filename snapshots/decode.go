package snapshots

import (
	"encoding/json"
	"fmt"
)

// DecodeManifest parses manifest bytes fetched from elsewhere (an origin, a
// bundle) with the checks ReadManifest makes: a format this pds reads, a
// build id, safe paths and well-formed checksums. from names where the
// bytes came from, for messages. Every failure wraps ErrInvalid.
func DecodeManifest(b []byte, from string) (Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%w: %s is not valid JSON: %w", ErrInvalid, from, err)
	}
	if !knownFormat(m.FormatVersion) {
		return m, formatError(from, m.FormatVersion)
	}
	if len(m.Files) == 0 || m.BuildID == "" {
		return m, fmt.Errorf("%w: %s lists no files or no build id", ErrInvalid, from)
	}
	if err := checkPaths(m.Files); err != nil {
		return m, fmt.Errorf("%w: %s: %w", ErrInvalid, from, err)
	}
	if err := checkSums(from, m); err != nil {
		return m, err
	}
	return m, nil
}
