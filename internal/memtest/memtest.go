// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package memtest holds the one heap reading the memory benchmarks share.
// Only benchmarks import it: a reading of the whole process is a bound only
// when nothing else runs in the test binary (make memory).
package memtest

import "runtime"

// LiveHeap is the live heap after two full collections (the second frees
// what the first only finalized).
func LiveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
