package snapshots

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// asFormat1 rewrites the manifest of the snapshot at dir (manifest.json) as
// a pds before manifest format 2 wrote it: format_version 1, and every
// file listed with the SHA-256 of its bytes instead of its BLAKE3. A
// signature beside it no longer matches: sign it again if one is needed.
func asFormat1(dir string) error {
	path := filepath.Join(dir, ManifestName)
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // sizes and the sequence stay exact
	if err := dec.Decode(&m); err != nil {
		return fmt.Errorf("snapshots test: %s: %w", path, err)
	}
	m["format_version"] = 1
	files, _ := m["files"].([]any)
	for _, f := range files {
		entry, ok := f.(map[string]any)
		if !ok {
			return fmt.Errorf("snapshots test: %s: a file entry is not an object", path)
		}
		name, _ := entry["path"].(string)
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		delete(entry, "blake3")
		entry["sha256"] = "sha256:" + hex.EncodeToString(sum[:])
	}
	out, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o644)
}
