// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package spanmodel

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestTruncateUTF8(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 5, "abc"},
		{"abcdef", 3, "abc"},
		{"aé", 2, "a"},
		{"日本語", 7, "日本"},
		{"a\xffb", 10, "a\uFFFDb"},
		{"abc", 0, ""},
	} {
		got := truncateUTF8(tc.in, tc.n)
		assert.Equal(t, tc.want, got, "%q/%d", tc.in, tc.n)
		assert.True(t, utf8.ValidString(got))
		assert.LessOrEqual(t, len(got), max(tc.n, len(tc.want)))
	}
	assert.Equal(t, strings.Repeat("x", 4096), truncateUTF8(strings.Repeat("x", 5000), 4096))
}
