package snapshots

import "context"

// SelfTest opens the build in dir as pds serve would (verifying signature
// and checksums with o) and reads it as serving does (Snapshot.SelfTest).
func SelfTest(ctx context.Context, dir string, o OpenOptions) error {
	snap, err := Open(dir, o)
	if err != nil {
		return err
	}
	defer snap.Close()
	return snap.SelfTest(ctx)
}
