package pebbleutil

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/cockroachdb/pebble/v2"
)

// Logger keeps Pebble's routine chatter out of the logs and sends its
// errors to slog.
type Logger struct{}

// Infof drops Pebble's informational messages.
func (Logger) Infof(string, ...any) {}

// Errorf logs a Pebble error.
func (Logger) Errorf(format string, args ...any) {
	slog.Error("pebble", "error", fmt.Sprintf(format, args...))
}

// Fatalf logs a fatal Pebble error and exits with status 70 (internal
// software error).
func (Logger) Fatalf(format string, args ...any) {
	slog.Error("pebble fatal", "error", fmt.Sprintf(format, args...))
	os.Exit(70)
}

// Listener is the event listener of pds's Pebble stores: it leaves a
// corruption that a read finds to the error that read returns, where
// Pebble's default hands it to the Logger's Fatalf, which ends the process
// before the caller can say which file and key it was reading, or remove
// what it was writing.
func Listener() *pebble.EventListener {
	return &pebble.EventListener{DataCorruption: func(pebble.DataCorruptionInfo) {}}
}

// Corruption returns err in one line that names the damaged file, when it
// is a corruption that a read of Pebble's found (Pebble's own message adds a
// line of its own, a marker); any other err as it is. The result is still a
// corruption (pebble.IsCorruptionError).
func Corruption(err error) error {
	info := pebble.ExtractDataCorruptionInfo(err)
	if info == nil {
		return err
	}
	return fmt.Errorf("%s is damaged: %w", info.Path, info.Details)
}

// PrefixEnd returns the smallest key greater than every key with prefix p
// (nil when there is none: p is all 0xff).
func PrefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// CopyValue runs a Pebble point read and copies the value into dst[:0]
// before closing it; an absent key is (dst[:0], false, nil).
func CopyValue(get func([]byte) ([]byte, io.Closer, error), key, dst []byte) ([]byte, bool, error) {
	v, closer, err := get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return dst[:0], false, nil
	}
	if err != nil {
		return dst[:0], false, err
	}
	dst = append(dst[:0], v...)
	closer.Close()
	return dst, true, nil
}

// LinkTable makes to a hard link of from when from is a table of a closed
// Pebble store (an .sst file), and reports whether it did. Pebble never
// writes a table it has finished, so two stores may share one; where the
// link cannot be made (to is on another file system), the caller copies
// the file. A variable so that a test can make every link fail, as across
// file systems.
var LinkTable = func(from, to string) bool {
	return strings.HasSuffix(from, ".sst") && os.Link(from, to) == nil
}
