package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
)

// Origin is where builds are published and pulled from. Names are
// slash-separated and relative to the origin's prefix: "latest",
// "<build_id>/manifest.json", "<build_id>/store/000123.sst".
type Origin interface {
	// Open reads name from byte offset on. A missing name is ErrNotFound.
	Open(ctx context.Context, name string, offset int64) (io.ReadCloser, error)
	// Put stores size bytes from r as name, replacing it whole.
	Put(ctx context.Context, name string, r io.Reader, size int64) error
	// String is the origin's URL, for messages.
	String() string
}

// S3Config says how to reach an S3-compatible object store. Credentials come
// from the standard environment variables (AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY, or MINIO_ACCESS_KEY and MINIO_SECRET_KEY) or the
// AWS credentials file.
type S3Config struct {
	// Endpoint is the server: "https://s3.eu-west-1.amazonaws.com",
	// "http://127.0.0.1:9000" (plain HTTP, for loopback), or a bare host
	// (HTTPS). Empty: AWS S3.
	Endpoint string
	// Region is the bucket's region; empty lets the client find it.
	Region string
}

// OpenOrigin parses an origin URL: s3://BUCKET/PREFIX, file:///PATH, or
// https://HOST/PATH (pull only; http:// too, for loopback and tests).
func OpenOrigin(raw string, s3 S3Config) (Origin, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("origin %q: %v", raw, err)
	}
	switch u.Scheme {
	case "s3":
		if u.Host == "" {
			return nil, fmt.Errorf("origin %q: name the bucket: s3://BUCKET/PREFIX", raw)
		}
		return newS3Origin(u.Host, strings.Trim(u.Path, "/"), s3)
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("origin %q: a file origin is file:///ABSOLUTE/PATH", raw)
		}
		p := fileURLPath(u)
		if p == "" || !filepath.IsAbs(p) {
			return nil, fmt.Errorf("origin %q: a file origin is file:///ABSOLUTE/PATH (on Windows file:///C:/PATH)", raw)
		}
		return &fileOrigin{root: filepath.Clean(p), url: raw}, nil
	case "https", "http":
		base := *u
		base.Path = strings.TrimSuffix(u.Path, "/") + "/"
		return &httpOrigin{base: &base, client: &http.Client{}}, nil
	}
	return nil, fmt.Errorf("origin %q: use s3://BUCKET/PREFIX, file:///PATH or https://HOST/PATH", raw)
}

// fileOrigin is a directory: removable media, a mounted share.
type fileOrigin struct {
	root, url string
}

// fileURLPath returns the path a file URL names. On Windows the URL's path
// begins with the drive (file:///C:/builds is C:\builds), and a path without
// one is not absolute.
func fileURLPath(u *url.URL) string {
	p := u.Path
	if runtime.GOOS == "windows" && len(p) >= 3 && p[0] == '/' && p[2] == ':' {
		p = p[1:]
	}
	return filepath.FromSlash(p)
}

func (o *fileOrigin) String() string { return o.url }

func (o *fileOrigin) path(name string) (string, error) {
	p := filepath.FromSlash(name)
	if !filepath.IsLocal(p) {
		return "", fmt.Errorf("origin: name %q leaves the origin", name)
	}
	return filepath.Join(o.root, p), nil
}

func (o *fileOrigin) Open(_ context.Context, name string, offset int64) (io.ReadCloser, error) {
	p, err := o.path(name)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s/%s: %w", o.url, name, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Put writes a temporary file beside name and renames it into place, so a
// reader never sees half a file (the "latest" pointer relies on it).
func (o *fileOrigin) Put(_ context.Context, name string, r io.Reader, size int64) error {
	p, err := o.path(name)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	n, err := io.Copy(f, r)
	if err == nil && n != size {
		err = fmt.Errorf("origin: %s: wrote %d bytes, expected %d", name, n, size)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(f.Name(), p)
}

// httpOrigin is any static file server; pulling only.
type httpOrigin struct {
	base   *url.URL
	client *http.Client
}

func (o *httpOrigin) String() string { return strings.TrimSuffix(o.base.String(), "/") }

func (o *httpOrigin) Open(ctx context.Context, name string, offset int64) (io.ReadCloser, error) {
	u := o.base.JoinPath(strings.Split(path.Clean(name), "/")...)
	g, ctx := newStallGuard(ctx, u.String())
	rc, err := o.open(ctx, u, offset, g)
	if err != nil {
		return nil, g.failed(err)
	}
	return g.opened(rc), nil
}

func (o *httpOrigin) open(ctx context.Context, u *url.URL, offset int64, g *stallGuard) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	if offset > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", offset))
	}
	resp, err := o.client.Do(req)
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		resp.Body.Close()
		return nil, fmt.Errorf("%s: %w", u, ErrNotFound)
	case resp.StatusCode == http.StatusPartialContent && offset > 0:
		return resp.Body, nil
	case resp.StatusCode == http.StatusOK:
		// A server that ignores Range sends the whole file: skip what we
		// have, under the same stall limit.
		if offset > 0 {
			g.rc = resp.Body
			if _, err := io.CopyN(io.Discard, g, offset); err != nil {
				resp.Body.Close()
				return nil, fmt.Errorf("%s: %w", u, err)
			}
		}
		return resp.Body, nil
	}
	resp.Body.Close()
	return nil, fmt.Errorf("%s: HTTP %s", u, resp.Status)
}

func (o *httpOrigin) Put(context.Context, string, io.Reader, int64) error {
	return fmt.Errorf("origin %s: an https:// origin is pull-only; publish to s3:// or file:// and serve that directory with any static file server", o)
}

// stallLimit is how long an https or S3 origin may take to send the
// response headers, and then each stallBytes of the body (or the rest of
// it), counting only the time a reader waits on it: a stalled or
// deliberately slow origin (TUF's slow retrieval attack) cannot hold a
// pull, and the snapshots folder's lock, for ever, and a reader busy
// elsewhere (applying a delta, writing to a slow disk) is not taken for
// one. The floor it sets, 64 KiB a minute, is far below any real link.
var stallLimit = time.Minute

const stallBytes = 64 << 10

// stallGuard cancels a request when its origin stalls: no headers, or
// less than stallBytes of the body, within stallLimit of waiting.
type stallGuard struct {
	rc      io.ReadCloser
	timer   *time.Timer
	cancel  context.CancelFunc
	stalled atomic.Bool
	got     int64         // bytes in this window
	left    time.Duration // waiting left in this window
	what    string
}

// newStallGuard starts the wait for the response headers; the request is
// made with the context it returns.
func newStallGuard(ctx context.Context, what string) (*stallGuard, context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	g := &stallGuard{cancel: cancel, what: what, left: stallLimit}
	g.timer = time.AfterFunc(stallLimit, func() {
		g.stalled.Store(true)
		cancel()
	})
	return g, ctx
}

// opened stops the wait for the headers: the body's reads wait on rc.
func (g *stallGuard) opened(rc io.ReadCloser) *stallGuard {
	g.timer.Stop()
	g.rc, g.got, g.left = rc, 0, stallLimit
	return g
}

// failed ends a request that did not open, naming a stall that caused err.
func (g *stallGuard) failed(err error) error {
	g.timer.Stop()
	g.cancel()
	return g.why(err)
}

// why names the stall when it caused err.
func (g *stallGuard) why(err error) error {
	if err == nil || !g.stalled.Load() {
		return err
	}
	return fmt.Errorf("%s: %w: less than %d bytes in %s of waiting (a stalled or deliberately slow origin); the pull is tried again", g.what, errStalled, stallBytes, stallLimit)
}

func (g *stallGuard) Read(p []byte) (int, error) {
	start := time.Now()
	g.timer.Reset(g.left)
	n, err := g.rc.Read(p)
	g.timer.Stop()
	g.left -= time.Since(start)
	g.got += int64(n)
	if g.got >= stallBytes {
		g.got, g.left = 0, stallLimit
	}
	return n, g.why(err)
}

func (g *stallGuard) Close() error {
	g.timer.Stop()
	err := g.rc.Close()
	g.cancel()
	return err
}
