// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package spanmodel

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestMergeChange(t *testing.T) {
	for _, tc := range []struct {
		changes []string
		want    string
	}{
		{[]string{"modified", "modified"}, "modified"},
		{[]string{"created", "modified"}, "created"},
		{[]string{"created", "deleted"}, "deleted"},
		{[]string{"modified", "deleted"}, "deleted"},
		{[]string{"deleted", "created"}, "modified"},
		{[]string{"moved", "modified"}, "moved"},
		{[]string{"modified", "moved"}, "moved"},
	} {
		got := ""
		for _, c := range tc.changes {
			got = mergeChange(got, c)
		}
		assert.Equal(t, tc.want, got, "%v", tc.changes)
	}
}

func TestSummaryWording(t *testing.T) {
	file := func(n int) []fileJSON { return make([]fileJSON, n) }
	test := func(n int) []testJSON { return make([]testJSON, n) }
	for _, tc := range []struct {
		facts turnFacts
		want  string
	}{
		{turnFacts{}, "No changes"},
		{turnFacts{files: file(1), linesAdded: 15, linesRemoved: 3}, "Modified 1 file, +15 -3 lines"},
		{turnFacts{files: file(2), linesAdded: 15, linesRemoved: 3, tests: test(1), testsRun: 5, testsPassed: 5}, "Modified 2 files, +15 -3 lines, 5/5 tests passed"},
		{turnFacts{files: file(1), linesRemoved: 4}, "Modified 1 file, +0 -4 lines"},
		{turnFacts{files: file(3)}, "Modified 3 files"},
		{turnFacts{tests: test(2), testsRun: 12, testsPassed: 11}, "11/12 tests passed"},
		{turnFacts{tests: test(1), testsRun: 0}, "0/0 tests passed"},
	} {
		assert.Equal(t, tc.want, summary(tc.facts))
	}
}

func TestRollupTimestampsKeepTheirPrecision(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 120_000_000, time.FixedZone("CET", 3600))
	assert.Equal(t, "2026-01-02T02:04:05.12Z", *timestamp(at))
	assert.Nil(t, timestamp(time.Time{}))
}

func TestListJSONDoesNotEscapeCommands(t *testing.T) {
	assert.Equal(t, `[{"command":"make lint && go test ./... > out.txt","exit_code":null,"timestamp":null}]`,
		listJSON([]commandJSON{{Command: "make lint && go test ./... > out.txt"}}))
	assert.Equal(t, "[]", listJSON[fileJSON](nil))
}
