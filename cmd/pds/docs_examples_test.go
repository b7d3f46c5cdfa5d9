package main

// The shell examples of README.md and docs/*.md, run as a user would run them.
// The test sits in cmd/pds because it needs what
// 'make run' wires together: it ingests the bundled sample, adds a demo key
// with the same scopes and serves it with this package's own ingest, keys and
// serve commands, and it puts this test binary on PATH as 'pds' (and
// bin/pds) for the examples that call the program.
//
// The convention, also written at the top of the README's API section:
//
//   - Every fenced block tagged sh, bash or console runs, in file order, with
//     bash in one scratch directory shared by all blocks (it holds bin/pds and
//     a link to sample-input/), with KEY (the demo key), H, J and B set as the
//     README tells the user to set them. In a console block only the lines
//     starting with "$ " run.
//   - A block that must not run has <!-- norun: the reason --> on the line
//     just before its fence, or another tag (text, json...).
//   - Every curl must answer 2xx, and every command must exit 0, unless its
//     line (the last line of a command continued with a backslash) ends
//     with a comment "# expect 404" (that HTTP status) or "# expect exit 2"
//     (that exit status).
//   - 127.0.0.1:8080 is replaced with the test server's address, and any
//     other 127.0.0.1:PORT with a free port, so that make test holds no
//     fixed port.

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// example is one runnable fenced block.
type example struct {
	file    string // path relative to the repository
	line    int    // line of the first line of code
	console bool
	lines   []string
	norun   string // the reason, when marked norun
}

func (e example) name() string { return fmt.Sprintf("%s:%d", e.file, e.line) }

var (
	fenceRe  = regexp.MustCompile("^```\\s*([A-Za-z0-9_+-]*)")
	norunRe  = regexp.MustCompile(`^<!--\s*norun\b:?\s*(.*?)\s*-->\s*$`)
	expectRe = regexp.MustCompile(`#\s*expect\s+(exit\s+)?(\d+)\s*$`)
	addrRe   = regexp.MustCompile(`127\.0\.0\.1:(\d+)`)
)

// readExamples returns the sh, bash and console blocks of one Markdown file.
func readExamples(t *testing.T, root, rel string) []example {
	t.Helper()
	f, err := os.Open(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []example
	var cur *example
	inFence, prev := false, ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		m := fenceRe.FindStringSubmatch(line)
		switch {
		case m != nil && !inFence:
			inFence = true
			if lang := m[1]; lang == "sh" || lang == "bash" || lang == "console" {
				cur = &example{file: rel, line: n + 1, console: lang == "console"}
				if nm := norunRe.FindStringSubmatch(strings.TrimSpace(prev)); nm != nil {
					cur.norun = nm[1]
					if cur.norun == "" {
						t.Errorf("%s:%d: a norun marker must give its reason: <!-- norun: why -->", rel, n-1)
					}
				}
			}
		case m != nil && inFence && m[1] == "":
			inFence = false
			if cur != nil {
				out = append(out, *cur)
				cur = nil
			}
		case cur != nil:
			cur.lines = append(cur.lines, line)
		}
		prev = line
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// script turns an example into a bash script after the prelude, replacing
// addresses, and returns the script line of each example line (for the
// failures' file:line) and the expectations by script line.
func (e example) script(prelude string, addr func(port string) string) (string, map[int]int, map[int]string) {
	var b strings.Builder
	b.WriteString(prelude)
	at := strings.Count(prelude, "\n") + 1
	fileLine := map[int]int{}
	expect := map[int]string{}
	first := -1 // script line of the command a continued line belongs to
	for i, line := range e.lines {
		if e.console {
			cmd, ok := strings.CutPrefix(line, "$ ")
			if !ok {
				cmd = ""
			}
			line = cmd
		}
		line = addrRe.ReplaceAllStringFunc(line, func(s string) string { return addr(s[len("127.0.0.1:"):]) })
		if first < 0 {
			first = at
		}
		fileLine[at] = e.line + i
		if m := expectRe.FindStringSubmatch(line); m != nil {
			if m[1] != "" {
				expect[first] = "exit " + m[2]
			} else {
				expect[first] = m[2]
			}
		}
		b.WriteString(line)
		b.WriteString("\n")
		at++
		if !strings.HasSuffix(line, "\\") {
			first = -1
		}
	}
	// A syntax error stops bash before this line, with status 2.
	b.WriteString("exit 0\n")
	return b.String(), fileLine, expect
}

// prelude is put before every example: an ERR trap that records a command
// exiting non-zero, and a curl that records an answer outside 2xx (or other
// than the expected status). Both write "LINE what" lines to $PDS_FAILURES.
const prelude = `set -o pipefail
__pds_note() { printf '%s %s\n' "$1" "$2" >> "$PDS_FAILURES"; }
__pds_err() {
  local st=$1 line=$2 want=${__pds_expect[$2]:-}
  if [ "$want" != "exit $st" ]; then __pds_note "$line" "exited with status $st"; fi
}
trap '__pds_err $? $LINENO' ERR
curl() {
  # The body streams to stdout untouched (it may be compressed); the status
  # goes to curl's stderr after a marker line, and is read back from there.
  local line=${BASH_LINENO[0]} st code want errf
  errf=$(mktemp)
  command curl "$@" -w '%{stderr}\n__pds_status %{http_code}\n' 2>"$errf"; st=$?
  code=$(sed -n 's/^__pds_status //p' "$errf" | tail -n 1)
  grep -v '^__pds_status ' "$errf" | sed '/^$/d' >&2; rm -f "$errf"
  [ $st -ne 0 ] && return $st
  want=${__pds_expect[$line]:-2xx}
  if [ "$want" = 2xx ]; then
    case $code in 2??) ;; *) __pds_note "$line" "answered HTTP $code (add '# expect $code' if the example means it)" ;; esac
  elif [ "$code" != "$want" ]; then
    __pds_note "$line" "answered HTTP $code, not the expected $want"
  fi
  return 0
}
`

// freeAddr returns a loopback address with a port nobody listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestDocsExamplesRun runs every shell example of README.md and docs/*.md
// against a server started as 'make run' starts it (see the top of this
// file for the convention), and fails naming the file:line of any example
// that answers outside 2xx or exits non-zero unexpectedly.
func TestDocsExamplesRun(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatal("the docs examples run with bash, which is not installed")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatal("the docs examples call curl, which is not installed (apt-get install -y curl)")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"README.md"}
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	sort.Strings(docs)
	for _, d := range docs {
		rel, _ := filepath.Rel(root, d)
		files = append(files, rel)
	}
	var examples []example
	for _, f := range files {
		examples = append(examples, readExamples(t, root, f)...)
	}

	// What 'make run' does: ingest the sample, add the demo key, serve.
	tmp := t.TempDir()
	snap := filepath.Join(tmp, "sample-snapshot")
	if code, _, errOut := runCmd("ingest", "--in", filepath.Join(root, "sample-input"), "--out", snap, "--quiet"); code != 0 {
		t.Fatalf("ingest of the sample: exit %d: %s", code, errOut)
	}
	keysFile := filepath.Join(tmp, "demo.keys")
	code, out, errOut := runCmd("keys", "add", "--keys", keysFile, "--tenant", "demo", "--scopes",
		"identifiers:validate,digital-links:parse,products:read,products:resolve,products:search,sources:read,mcp")
	if code != 0 {
		t.Fatalf("keys add: exit %d: %s", code, errOut)
	}
	key := strings.TrimSpace(out)
	base, _ := startServe(t, "--snapshot", snap, "--keys", keysFile)
	serverAddr := strings.TrimPrefix(base, "http://")

	// The scratch directory the examples run in: bin/pds and pds on PATH
	// are this test binary running pds's main (TestMain), sample-input/ is the
	// repository's.
	work := filepath.Join(tmp, "work")
	if err := os.MkdirAll(filepath.Join(work, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	wrapper := fmt.Sprintf("#!/bin/sh\nPDS_TEST_MAIN_ARGS=\"$(printf '%%s\\n' \"$@\")\" exec %q -test.run='^$'\n", self)
	if err := os.WriteFile(filepath.Join(work, "bin", "pds"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "sample-input"), filepath.Join(work, "sample-input")); err != nil {
		t.Fatal(err)
	}
	// var/ as 'make run' leaves it: the sample snapshot, the demo key and
	// its keys file.
	if err := os.MkdirAll(filepath.Join(work, "var"), 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"sample-snapshot": snap, "demo.keys": keysFile} {
		if err := os.Symlink(target, filepath.Join(work, "var", link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(work, "var", "demo.key"), []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ports := map[string]string{}
	addr := func(port string) string {
		if port == "8080" {
			return serverAddr
		}
		if ports[port] == "" {
			ports[port] = freeAddr(t)
		}
		return ports[port]
	}

	ran := 0
	for _, e := range examples {
		if e.norun != "" {
			t.Logf("%s: not run: %s", e.name(), e.norun)
			continue
		}
		ran++
		t.Run(e.name(), func(t *testing.T) {
			runExample(t, e, work, addr, []string{
				"KEY=" + key, "H=Authorization: Bearer " + key, "J=Content-Type: application/json", "B=" + base,
				"PATH=" + filepath.Join(work, "bin") + string(os.PathListSeparator) + os.Getenv("PATH"),
			})
		})
	}
	if ran == 0 {
		t.Fatal("no runnable example found in README.md and docs/*.md")
	}
}

// runExample runs one example with bash and reports its failures by
// file:line.
func runExample(t *testing.T, e example, work string, addr func(string) string, env []string) {
	text, fileLine, expect := e.script(prelude, addr)
	var decl strings.Builder
	decl.WriteString("declare -A __pds_expect=(")
	for line, want := range expect {
		fmt.Fprintf(&decl, "[%d]=%q ", line, want)
	}
	decl.WriteString(")\n")
	// The declaration goes on the prelude's first line so that script line
	// numbers stay as script() counted them.
	text = strings.Replace(text, "set -o pipefail\n", "set -o pipefail; "+decl.String(), 1)
	dir := t.TempDir()
	scriptPath := filepath.Join(dir, "example.sh")
	failures := filepath.Join(dir, "failures")
	if err := os.WriteFile(scriptPath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", scriptPath)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), append(env, "PDS_FAILURES="+failures)...)
	// Kill the whole group: an example may leave a background server.
	ownGroup(cmd)
	output, err := cmd.CombinedOutput()
	if cmd.Process != nil {
		killGroup(cmd)
	}
	if ctx.Err() != nil {
		t.Errorf("%s: did not finish in 2 minutes", e.name())
	}
	var failed []string
	if b, _ := os.ReadFile(failures); len(b) > 0 {
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			num, what, _ := strings.Cut(l, " ")
			n, _ := strconv.Atoi(num)
			where := e.name()
			if fl, ok := fileLine[n]; ok {
				where = fmt.Sprintf("%s:%d", e.file, fl)
				what += ": " + strings.TrimSpace(e.lines[fl-e.line])
			}
			failed = append(failed, where+": "+what)
		}
	}
	if err != nil && len(failed) == 0 {
		failed = append(failed, fmt.Sprintf("%s: bash: %v", e.name(), err))
	}
	if len(failed) > 0 {
		t.Errorf("%s\noutput (its end):\n%s", strings.Join(failed, "\n"), tail(string(output), 40))
	}
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"..."}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
