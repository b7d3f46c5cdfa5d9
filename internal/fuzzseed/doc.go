// Package fuzzseed keeps fuzz seeds in one place: the test's code adds them, and
// PDS_WRITE_SEEDS=1 writes them to the package's testdata/fuzz corpus.
//
// It knows nothing of the fuzz targets that use it.
package fuzzseed
