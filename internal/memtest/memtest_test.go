// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package memtest

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLiveHeapSeesWhatIsHeld(t *testing.T) {
	before := LiveHeap()
	held := make([]byte, 64<<20)
	after := LiveHeap()
	assert.GreaterOrEqual(t, after-before, uint64(60<<20), "a held 64 MiB block is live")
	runtime.KeepAlive(held)
}
