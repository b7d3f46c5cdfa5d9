package trust

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/theupdateframework/go-tuf/v2/metadata"
	"github.com/theupdateframework/go-tuf/v2/metadata/trustedmetadata"
)

// maxRootSteps bounds how many new roots one update walks (the
// specification's default), so an origin cannot keep a replica walking.
const maxRootSteps = 32

// Size limits of what is read of each statement: an origin that serves
// endless bytes is cut off there.
const (
	maxRootBytes      = 512 << 10
	maxTimestampBytes = 64 << 10
	maxSnapshotBytes  = 64 << 10
	maxTargetsBytes   = 4 << 20
)

// checker walks statements in the specification's order with go-tuf's
// trustedmetadata, which makes each of its checks (signatures and
// thresholds, versions that never go back, expiry, hashes and lengths).
type checker struct {
	tm *trustedmetadata.TrustedMetadata
}

func newChecker(anchor []byte, now time.Time) (*checker, error) {
	tm, err := trustedmetadata.New(anchor)
	if err != nil {
		return nil, fmt.Errorf("%w: the trusted root: %w", ErrUntrusted, err)
	}
	tm.RefTime = now.UTC()
	return &checker{tm: tm}, nil
}

func (c *checker) root() *metadata.Metadata[metadata.RootType] { return c.tm.Root }

func (c *checker) stepRoot(b []byte) error {
	prev := c.tm.Root
	if _, err := c.tm.UpdateRoot(b); err != nil {
		return fmt.Errorf("%w: root version %d: %w", ErrUntrusted, prev.Signed.Version+1, err)
	}
	if d, p := deployment(c.tm.Root), deployment(prev); d != p {
		c.tm.Root = prev
		return fmt.Errorf("%w: root version %d is deployment %q's, not %q's", ErrUntrusted, prev.Signed.Version+1, d, p)
	}
	return nil
}

// keysChanged reports whether role's keys differ between two roots: then
// statements kept from the older one are not used for rollback checks
// (the specification's recovery from a fast-forward attack).
func keysChanged(a, b *metadata.Metadata[metadata.RootType], role string) bool {
	ra, rb := a.Signed.Roles[role], b.Signed.Roles[role]
	if ra == nil || rb == nil || ra.Threshold != rb.Threshold || len(ra.KeyIDs) != len(rb.KeyIDs) {
		return true
	}
	for i := range ra.KeyIDs {
		if ra.KeyIDs[i] != rb.KeyIDs[i] {
			return true
		}
	}
	return false
}

// buildCustom is the manifest target's custom field: what binds the
// statement to one build of one deployment.
type buildCustom struct {
	BuildID    string `json:"build_id"`
	Sequence   int64  `json:"sequence"`
	Deployment string `json:"deployment"`
}

// deltaCustom is a delta target's custom field.
type deltaCustom struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// File is a target's length and SHA-256, as a statement names it.
type File struct {
	Length int64
	SHA256 []byte
}

// Release is the build the newest statements name.
type Release struct {
	BuildID    string
	Sequence   int64
	Deployment string
	Manifest   File
	// Deltas are the deltas to the build, by the build id they start from.
	Deltas map[string]File
	// Statement is the targets statement's bytes; the build keeps it
	// beside its manifest (StatementName), so that a server checks it.
	Statement []byte
	// Expires is when the timestamp statement stops holding.
	Expires     time.Time
	RootVersion int64
}

// ManifestPath and DeltaPath are the target paths a targets statement uses.
func ManifestPath(id string) string    { return id + "/manifest.json" }
func DeltaPath(id, base string) string { return id + "/deltas/" + base }

// release reads the build a targets statement names, and checks that it
// is deployment's.
func release(t *metadata.Metadata[metadata.TargetsType], deploymentName string) (Release, error) {
	var rel Release
	rel.Deltas = map[string]File{}
	for p, tf := range t.Signed.Targets {
		if !strings.HasSuffix(p, "/manifest.json") {
			continue
		}
		if rel.BuildID != "" {
			return rel, fmt.Errorf("%w: targets version %d names two builds", ErrUntrusted, t.Signed.Version)
		}
		var c buildCustom
		if tf.Custom == nil || json.Unmarshal(*tf.Custom, &c) != nil || c.BuildID == "" || ManifestPath(c.BuildID) != p {
			return rel, fmt.Errorf("%w: targets version %d: %s lacks its build's id, sequence and deployment", ErrUntrusted, t.Signed.Version, p)
		}
		if c.Deployment != deploymentName {
			return rel, fmt.Errorf("%w: build %s is for deployment %q, and this replica serves %q", ErrUntrusted, c.BuildID, c.Deployment, deploymentName)
		}
		rel.BuildID, rel.Sequence, rel.Deployment = c.BuildID, c.Sequence, c.Deployment
		rel.Manifest = File{Length: tf.Length, SHA256: tf.Hashes["sha256"]}
	}
	if rel.BuildID == "" {
		return rel, fmt.Errorf("%w: targets version %d names no build", ErrUntrusted, t.Signed.Version)
	}
	for p, tf := range t.Signed.Targets {
		if strings.HasSuffix(p, "/manifest.json") {
			continue
		}
		var c deltaCustom
		if tf.Custom == nil || json.Unmarshal(*tf.Custom, &c) != nil || c.To != rel.BuildID || DeltaPath(c.To, c.From) != p {
			return rel, fmt.Errorf("%w: targets version %d: %s is not a delta to build %s", ErrUntrusted, t.Signed.Version, p, rel.BuildID)
		}
		rel.Deltas[c.From] = File{Length: tf.Length, SHA256: tf.Hashes["sha256"]}
	}
	if len(rel.Manifest.SHA256) == 0 {
		return rel, fmt.Errorf("%w: targets version %d names the manifest of build %s without its SHA-256", ErrUntrusted, t.Signed.Version, rel.BuildID)
	}
	return rel, nil
}
