package ingest

import (
	"fmt"
	"path/filepath"
	"strings"
)

// checkOut refuses an Out that lies in (or is) a folder the build reads
// from: the base snapshot, the base's kept records, or the snapshot whose
// dictionaries it uses. A build written there would change the folder it
// reads while it reads it, and leave that folder holding a file it does not
// list. Paths are compared absolute, with symbolic links resolved.
func checkOut(opts Options) error {
	type read struct{ what, path string }
	var reads []read
	if opts.Base != "" {
		reads = append(reads, read{"--base", opts.Base}, read{"the records of --base", recordsDir(opts.Base)})
	}
	if opts.DictionariesFrom != "" {
		reads = append(reads, read{"--dictionaries-from", opts.DictionariesFrom})
	}
	out := resolved(opts.Out)
	for _, r := range reads {
		if within(out, resolved(r.path)) {
			return fmt.Errorf("output: --out %s is inside %s (%s), which the build reads; build into a folder of its own, such as one beside it", opts.Out, r.path, r.what)
		}
	}
	return nil
}

// within reports whether path is dir or lies under it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// resolved returns p absolute, with the symbolic links of the part of it
// that exists resolved (the rest, such as an --out not made yet, is joined
// as it is).
func resolved(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	rest := ""
	for dir := abs; ; {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return abs
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}
