// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package textutil holds the small text helpers the components share.
package textutil

import (
	"strconv"
	"strings"
)

// FirstNonEmpty returns the first of v that is not empty, or "".
func FirstNonEmpty(v ...string) string {
	for _, s := range v {
		if s != "" {
			return s
		}
	}
	return ""
}

// Plural is n and word, with an s unless n is 1: "1 call", "3 calls".
func Plural(n int64, word string) string {
	return plural(strconv.FormatInt(n, 10), n, word)
}

// PluralGrouped is Plural with n's digits grouped by thousands, for logs:
// "1 file", "12,345 files".
func PluralGrouped(n int64, word string) string {
	return plural(Grouped(n), n, word)
}

func plural(count string, n int64, word string) string {
	if n == 1 {
		return count + " " + word
	}
	return count + " " + word + "s"
}

// Grouped is n with its digits grouped by thousands: "1,234,567".
func Grouped(n int64) string {
	s := strconv.FormatInt(n, 10)
	digits := s
	if n < 0 {
		digits = s[1:]
	}
	if len(digits) <= 3 {
		return s
	}
	var b strings.Builder
	if n < 0 {
		b.WriteByte('-')
	}
	for i := range len(digits) {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(digits[i])
	}
	return b.String()
}
