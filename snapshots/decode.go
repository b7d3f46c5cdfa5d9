package snapshots

import (
	"encoding/json"
	"fmt"
)

// DecodeManifest parses manifest bytes read from elsewhere than a snapshot
// folder (an origin, a bundle, a manifest about to be signed) with the
// checks ReadManifest makes but the paths': a format this pds reads, a
// build id and well-formed checksums. A caller about to write the files it
// lists checks their paths as well (Manifest.CheckPaths). from names where
// the bytes came from, for messages. Every failure wraps ErrInvalid.
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
	if err := checkSums(from, m); err != nil {
		return m, err
	}
	return m, nil
}
