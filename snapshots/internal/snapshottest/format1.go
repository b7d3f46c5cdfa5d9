package snapshottest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// AsFormat1 rewrites the manifest at path as manifest format 1 has it:
// format_version 1, and every file (a path relative to the manifest's
// folder) listed with the SHA-256 of its bytes instead of its BLAKE3. A
// signature beside it no longer matches: sign it again if one is needed.
func AsFormat1(path string) error {
	dir := filepath.Dir(path)
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // sizes and the sequence stay exact
	if err := dec.Decode(&m); err != nil {
		return fmt.Errorf("snapshottest: %s: %w", path, err)
	}
	m["format_version"] = 1
	files, _ := m["files"].([]any)
	for _, f := range files {
		entry, ok := f.(map[string]any)
		if !ok {
			return fmt.Errorf("snapshottest: %s: a file entry is not an object", path)
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
