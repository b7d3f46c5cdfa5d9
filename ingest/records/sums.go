package records

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/zeebo/blake3"
	"golang.org/x/sync/errgroup"
)

// A store's files are checked whole before it is opened as a base: a
// closed writable store lists every file of its folder in SumsName, with
// its size and BLAKE3, and Open hashes each file again and refuses the
// store when one differs, is missing, or is not listed. Pebble's own block
// checksums are checked only on the blocks a build happens to read, and a
// build that copies the store (Copy) links the tables it does not read into
// the next night's: without the list, a damaged block would be carried
// forward, night after night, until the night that reads it.
//
// The file: one line a file, in name order, "NAME SIZE blake3:HEX". LOCK
// (Pebble's, empty, made by every open) is not listed.
const SumsName = "CHECKSUMS"

// fileSum is one file's listing.
type fileSum struct {
	size int64
	sum  string // "blake3:" and 64 hex digits
}

// listed reports whether name is a file of the store the list covers.
func listed(name string) bool { return name != "LOCK" && name != SumsName }

// writeSums lists the files of the closed store at dir in SumsName. A file
// of known (one linked from a store Open checked) of the same size is not
// read again: tables are never written once finished.
func writeSums(dir string, known map[string]fileSum) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("records: %w", err)
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && listed(e.Name()) {
			names = append(names, e.Name())
		}
	}
	sums := make([]fileSum, len(names))
	err = each(dir, names, func(i int, size int64) error {
		if k, ok := known[names[i]]; ok && k.size == size {
			sums[i] = k
			return nil
		}
		var err error
		sums[i], err = sumFile(filepath.Join(dir, names[i]))
		return err
	})
	if err != nil {
		return fmt.Errorf("records: checksum %s: %w", dir, err)
	}
	var b bytes.Buffer
	for i, name := range names {
		fmt.Fprintf(&b, "%s %d %s\n", name, sums[i].size, sums[i].sum)
	}
	f, err := os.Create(filepath.Join(dir, SumsName))
	if err != nil {
		return fmt.Errorf("records: %w", err)
	}
	_, err = f.Write(b.Bytes())
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("records: %w", err)
	}
	return nil
}

// verifySums checks every file of the store at dir against its SumsName,
// its size and, when hash is set, its checksum, and returns the listing.
func verifySums(dir string, hash bool) (map[string]fileSum, error) {
	want, err := readSums(dir)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("records: %w", err)
	}
	for _, e := range entries {
		if listed(e.Name()) {
			if _, ok := want[e.Name()]; !ok {
				return nil, fmt.Errorf("records: %s: %w: it holds %s, which its %s does not list (added since it was kept)", dir, ErrDamaged, e.Name(), SumsName)
			}
		}
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for name := range want {
			if !yield(name) {
				return
			}
		}
	})
	err = each(dir, names, func(i int, size int64) error {
		w := want[names[i]]
		if size != w.size {
			return fmt.Errorf("%w: file %s has %d bytes, its %s says %d (cut or changed since it was kept)", ErrDamaged, names[i], size, SumsName, w.size)
		}
		if !hash {
			return nil
		}
		got, err := sumFile(filepath.Join(dir, names[i]))
		if err != nil {
			return err
		}
		if got != w {
			return fmt.Errorf("%w: file %s does not match its checksum in %s (changed or damaged since it was kept)", ErrDamaged, names[i], SumsName)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("records: %s: %w", dir, err)
	}
	return want, nil
}

// readSums reads the SumsName of the store at dir.
func readSums(dir string) (map[string]fileSum, error) {
	b, err := os.ReadFile(filepath.Join(dir, SumsName))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("records: %s: %w: it has no %s, the list of its files' checksums (kept by an earlier pds than this one, or cut short)", dir, ErrDamaged, SumsName)
	}
	if err != nil {
		return nil, fmt.Errorf("records: %w", err)
	}
	out := map[string]fileSum{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		var size int64
		if len(fields) == 3 {
			size, err = strconv.ParseInt(fields[1], 10, 64)
		}
		if len(fields) != 3 || err != nil || size < 0 || !listed(fields[0]) || !wellFormed(fields[2]) || out[fields[0]] != (fileSum{}) {
			return nil, fmt.Errorf("records: %s: %w: line %d of %s is not \"NAME SIZE blake3:HEX\" of a file listed once", dir, ErrDamaged, n, SumsName)
		}
		out[fields[0]] = fileSum{size: size, sum: fields[2]}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("records: %s: %w: its %s lists no file", dir, ErrDamaged, SumsName)
	}
	return out, nil
}

// wellFormed reports whether sum is "blake3:" and 64 lowercase hex digits.
func wellFormed(sum string) bool {
	h, ok := strings.CutPrefix(sum, "blake3:")
	if !ok || len(h) != 64 {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil && strings.ToLower(h) == h
}

// sumFile reads the file at path once.
func sumFile(path string) (fileSum, error) {
	f, err := os.Open(path)
	if err != nil {
		return fileSum{}, err
	}
	defer f.Close()
	h := blake3.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return fileSum{}, err
	}
	return fileSum{size: n, sum: "blake3:" + hex.EncodeToString(h.Sum(nil))}, nil
}

// each runs fn for each of the files names of dir (with its size now), up
// to GOMAXPROCS at once, the largest first, so that the small ones fill in
// around them; it stops at the first error.
func each(dir string, names []string, fn func(i int, size int64) error) error {
	sizes := make([]int64, len(names))
	for i, name := range names {
		st, err := os.Lstat(filepath.Join(dir, name))
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%w: file %s is missing", ErrDamaged, name)
		}
		if err != nil {
			return err
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("%w: %s is not a regular file", ErrDamaged, name)
		}
		sizes[i] = st.Size()
	}
	order := make([]int, len(names))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(sizes[b], sizes[a]) })
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, i := range order {
		g.Go(func() error { return fn(i, sizes[i]) })
	}
	return g.Wait()
}
