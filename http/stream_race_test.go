//go:build race

package http_test

// heapFlatLines is how many lines TestResolveStreamHeapFlat streams: fewer
// under the race detector, which runs it about ten times slower.
const heapFlatLines = 250_000
