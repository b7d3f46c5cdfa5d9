//go:build !unix && !windows

package snapshots

var hostErrnos, noSpaceErrnos []error
