package main

import (
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/productdata/pds/ingest/ingesttest"
)

// mainArgsEnv, when set in the environment of this test binary, makes it run
// pds itself with these arguments (separated by newlines) instead of the
// tests, so a test can send a real signal to a real pds process.
const mainArgsEnv = "PDS_TEST_MAIN_ARGS"

func TestMain(m *testing.M) {
	if args := os.Getenv(mainArgsEnv); args != "" {
		os.Args = append([]string{"pds"}, strings.Split(args, "\n")...)
		main()
		return
	}
	os.Exit(m.Run())
}

// TestSIGTERMUnderLoad sends SIGTERM to a serving process while clients keep
// it busy: /readyz turns 503 during the drain, every request the server
// accepted is answered 200, the only errors clients see are refused
// connections after the listener closed, and the process exits 0.
func TestSIGTERMUnderLoad(t *testing.T) {
	snap := ingesttest.Build(t, ingesttest.WriteCase(t, ingesttest.CaseFile("passport")))
	keysPath, secrets := ingesttest.Keys(t)
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), mainArgsEnv+"="+strings.Join([]string{"serve",
		"--addr", "127.0.0.1:0", "--snapshot", snap, "--keys", keysPath,
		"--drain", "400ms", "--shutdown-timeout", "20s"}, "\n"))
	stderr := &syncBuffer{}
	child.Stderr = stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	t.Cleanup(func() { child.Process.Kill() })

	re := regexp.MustCompile(`"msg":"serving","addr":"([^"]+)"`)
	var base string
	for i := 0; i < 800 && base == ""; i++ {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			base = "http://" + m[1]
		}
		time.Sleep(25 * time.Millisecond)
	}
	if base == "" {
		t.Fatalf("serve did not start: %s", stderr.String())
	}

	var ok, refused atomic.Int64
	var mu sync.Mutex
	var failures []string
	fail := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		if len(failures) < 10 {
			failures = append(failures, s)
		}
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			defer client.CloseIdleConnections()
			for !stop.Load() {
				req, _ := http.NewRequest("GET", base+"/v1/products/gtin:09520123456788", nil)
				req.Header.Set("Authorization", "Bearer "+secrets[ingesttest.KeyFull])
				res, err := client.Do(req)
				if err != nil {
					if errors.Is(err, syscall.ECONNREFUSED) {
						refused.Add(1) // the listener is closed: not accepted
						time.Sleep(5 * time.Millisecond)
						continue
					}
					fail(err.Error())
					continue
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != 200 {
					fail(res.Status)
					continue
				}
				ok.Add(1)
			}
		}()
	}

	// Let the load run, then send SIGTERM and watch readiness during the drain.
	for i := 0; i < 400 && ok.Load() < 200; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	before := ok.Load()
	if err := child.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Poll until /readyz says 503 or the listener is gone: a fixed number of
	// tries could all come before the child, slow under load, has begun to
	// drain.
	sawDraining := false
	for deadline := time.Now().Add(20 * time.Second); !sawDraining && time.Now().Before(deadline); {
		res, err := http.Get(base + "/readyz")
		if err != nil {
			if errors.Is(err, syscall.ECONNREFUSED) {
				break // the drain is over: the listener is closed
			}
		} else {
			sawDraining = res.StatusCode == http.StatusServiceUnavailable
			res.Body.Close()
		}
		time.Sleep(5 * time.Millisecond)
	}
	var exitErr error
	select {
	case exitErr = <-exited:
	case <-time.After(60 * time.Second):
		t.Fatalf("serve did not exit after SIGTERM: %s", stderr.String())
	}
	stop.Store(true)
	wg.Wait()

	if exitErr != nil {
		t.Errorf("exit after a clean drain: %v\n%s", exitErr, stderr.String())
	}
	if !sawDraining {
		t.Errorf("/readyz never answered 503 during the drain")
	}
	if before == 0 || ok.Load() <= before {
		t.Errorf("no requests answered during the drain: %d before SIGTERM, %d in all", before, ok.Load())
	}
	if len(failures) > 0 {
		t.Errorf("requests failed (answered %d, refused at connect %d): %q", ok.Load(), refused.Load(), failures)
	}
	if !strings.Contains(stderr.String(), `"msg":"draining"`) {
		t.Errorf("no draining log line:\n%s", stderr.String())
	}
}
