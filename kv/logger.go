package kv

import (
	"fmt"
	"log/slog"
	"os"
)

// pebbleLogger keeps Pebble's routine chatter out of the logs and sends its
// errors to slog.
type pebbleLogger struct{}

func (pebbleLogger) Infof(string, ...any) {}

func (pebbleLogger) Errorf(format string, args ...any) {
	slog.Error("pebble", "error", fmt.Sprintf(format, args...))
}

func (pebbleLogger) Fatalf(format string, args ...any) {
	slog.Error("pebble fatal", "error", fmt.Sprintf(format, args...))
	os.Exit(70)
}
