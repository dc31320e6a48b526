// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package textutil

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFirstNonEmpty(t *testing.T) {
	assert.Empty(t, FirstNonEmpty())
	assert.Empty(t, FirstNonEmpty("", ""))
	assert.Equal(t, "b", FirstNonEmpty("", "b", "c"))
	assert.Equal(t, "a", FirstNonEmpty("a", "b"))
}

func TestPlural(t *testing.T) {
	assert.Equal(t, "1 call", Plural(1, "call"))
	assert.Equal(t, "0 calls", Plural(0, "call"))
	assert.Equal(t, "1234 calls", Plural(1234, "call"))
	assert.Equal(t, "1 file", PluralGrouped(1, "file"))
	assert.Equal(t, "12,345 files", PluralGrouped(12345, "file"))
}

func TestGrouped(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0", 7: "7", 999: "999", 1000: "1,000", 123456: "123,456", 1234567: "1,234,567",
		-1234: "-1,234", -999: "-999", math.MinInt64: "-9,223,372,036,854,775,808",
	} {
		assert.Equal(t, want, Grouped(n), "%d", n)
	}
}
