//go:build !race

package http_test

// heapFlatLines is how many lines TestResolveStreamHeapFlat streams.
const heapFlatLines = 1_000_000
