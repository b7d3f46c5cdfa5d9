package snapshots

import (
	"encoding/json"
	"fmt"
)

// Decode parses manifest bytes fetched from elsewhere (an origin) with the
// checks Read makes; from names where they came from, for messages.
func DecodeManifest(b []byte, from string) (Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%w: %s is not valid JSON: %v", ErrInvalid, from, err)
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
