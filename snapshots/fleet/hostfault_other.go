//go:build !unix && !windows

package fleet

var hostErrnos, noSpaceErrnos []error
