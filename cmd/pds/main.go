package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

	"github.com/productdata/pds/internal/buildinfo"
	"github.com/productdata/pds/snapshots"
)

// errUsage marks a command-line mistake; main exits 2 on it.
var errUsage = errors.New("usage")

type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"ingest", "build a snapshot from an input directory", runIngest},
		{"serve", "serve a snapshot over HTTP", runServe},
		{"keys", "manage API keys (add, list, revoke, rotate)", runKeys},
		{"gen", "write a synthetic input directory", runGen},
		{"version", "print the version and commit of this build, and the snapshot format it writes", runVersion},
		{"import", "turn an Open Food Facts dump into an input directory", runImport},
		{"snapshot", "sign, verify, publish, pull, follow and roll back snapshots", runSnapshot},
		{"trust", "make the keys and roots of trust that replicas check builds against", runTrust},
		{"resolve", "resolve a file of identifiers against a snapshot, with no server (NDJSON or CSV out)", runResolve},
		{"mcp", "serve the MCP tools on stdin/stdout (for hosts that start a subprocess)", runMCP},
		{"export", "write a snapshot's public products to a Parquet file", runExport},
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: pds <command> [flags]")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'pds <command> -h' for a command's flags.")
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run dispatches to a subcommand and returns the process exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return 0
	case "-version", "--version":
		args = []string{"version"}
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, args[1:], stdout, stderr)
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.Is(err, errUsage):
			if msg := usageMessage(err); msg != "" {
				fmt.Fprintf(stderr, "pds %s: %s\n", c.name, msg)
			}
			return 2
		default:
			fmt.Fprintf(stderr, "pds %s: %v\n", c.name, err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "pds: unknown command %q (run 'pds -h')\n", args[0])
	return 2
}

// usageMessage returns what a usage error adds to errUsage, if anything.
func usageMessage(err error) string {
	if err == errUsage {
		return ""
	}
	msg := err.Error()
	prefix := errUsage.Error() + ": "
	if len(msg) > len(prefix) && msg[:len(prefix)] == prefix {
		return msg[len(prefix):]
	}
	return msg
}

// newFlags makes a FlagSet whose parse errors print one line to stderr.
func newFlags(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: pds %s\n\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args, mapping every error but -h to errUsage. On a parse
// error the flag package has already printed its one-line message; the full
// usage is printed only for -h. A missing required flag is said in one line.
func parseFlags(fs *flag.FlagSet, args []string, required ...string) error {
	_, err := parseFlagsArgs(fs, args, 0, required...)
	return err
}

// parseFlagsArgs is parseFlags for a command that also takes up to n
// arguments, before, between or after its flags; it returns them.
func parseFlagsArgs(fs *flag.FlagSet, args []string, n int, required ...string) ([]string, error) {
	pos, err := parseInterleaved(fs, args, required...)
	if err == nil && len(pos) > n {
		return nil, fmt.Errorf("%w: unexpected argument %q", errUsage, pos[n])
	}
	return pos, err
}

// parseInterleaved parses flags placed before, between or after positional
// arguments, returns every positional argument, and checks the required
// flags; errors are mapped as parseFlags says.
func parseInterleaved(fs *flag.FlagSet, args []string, required ...string) ([]string, error) {
	full := fs.Usage
	fs.Usage = func() {}
	defer func() { fs.Usage = full }()
	var pos []string
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			full()
			return nil, err
		}
		if err != nil {
			return nil, errUsage
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	for _, name := range required {
		if f := fs.Lookup(name); f != nil && f.Value.String() == "" {
			return nil, fmt.Errorf("%w: --%s is required", errUsage, name)
		}
	}
	return pos, nil
}

// runVersion prints the module version and commit (debug.ReadBuildInfo).
func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("version", "version", stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "pds", buildinfo.Version())
	fmt.Fprintf(stdout, "snapshot format %d (reads formats %d to %d)\n", snapshots.FormatVersion, snapshots.FormatSHA256, snapshots.FormatVersion)
	return nil
}

// startCPUProfile writes a CPU profile to path (for go tool pprof) until the
// returned stop is called; with no path it does nothing.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
