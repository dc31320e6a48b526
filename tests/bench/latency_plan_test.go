// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLiveWritesAndClosers pins how the live run replays its sessions: one write per prompt,
// starting with the rows written when the prompt is submitted, and, per turn, the line that
// completes it. The first Claude Code session is the one whose turns the old run timed wrongly:
// its first turn ends with its own end marker (an API error), so the write of the
// /rate-limit-options command that follows completes nothing that is still open.
func TestLiveWritesAndClosers(t *testing.T) {
	home := t.TempDir()
	var got []string
	for _, s := range liveSessions(t, fixtureRoots(t)[0], home, 0) {
		closers := s.closers()
		line := 1
		for i, w := range s.writes {
			got = append(got, fmt.Sprintf("%s %d-%d prompt=%t closer=%q", s.session[:8], line, line+len(w.lines)-1, w.prompt != "", closers[i]))
			line += len(w.lines)
		}
	}
	assert.Equal(t, []string{
		`ca2442ad 1-1 prompt=false closer=""`,
		`ca2442ad 2-5 prompt=true closer="own end marker"`, // PING → API error
		`ca2442ad 6-9 prompt=true closer="next prompt"`,    // snapshot, caveat, /rate-limit-options, its output
		`ca2442ad 10-13 prompt=true closer="own end marker"`,
		`4e1f519b 1-1 prompt=false closer=""`,
		`4e1f519b 2-18 prompt=true closer="next prompt"`, // answered with end_turn: no end marker
		`4e1f519b 19-33 prompt=true closer="own end marker"`,
		`019d3c86 1-1 prompt=false closer=""`,
		`019d3c86 2-95 prompt=true closer="own end marker"`, // task_complete
		`019d3c86 96-104 prompt=true closer="own end marker"`,
		`019d3c86 105-113 prompt=true closer="own end marker"`,
		`019d3c86 114-122 prompt=true closer="own end marker"`,
		`019d3c86 123-131 prompt=true closer="own end marker"`,
	}, got)
}

// TestShiftToKeepsTheTurnLive: a write's timestamps end at the write's time at its latest row
// that maps to events; a later stamp (a queue operation of the next prompt, minutes on) is
// clamped, so the turn's events do not look minutes old.
func TestShiftToKeepsTheTurnLive(t *testing.T) {
	lines := [][]byte{
		[]byte(`{"type":"assistant","timestamp":"2026-04-18T00:24:33.522Z"}`),
		[]byte(`{"type":"queue-operation","timestamp":"2026-04-18T00:42:49.976Z"}`),
	}
	at := time.Date(2026, 11, 23, 19, 0, 0, 0, time.UTC)
	out := splitLines(shiftTo(lines, []bool{true, false}, at))
	require.Len(t, out, 2)
	assert.True(t, bytes.Contains(out[0], []byte(`"timestamp":"2026-11-23T19:00:00.000Z"`)), "%s", out[0])
	assert.True(t, bytes.Contains(out[1], []byte(`"timestamp":"2026-11-23T19:00:00.000Z"`)), "%s", out[1])
}
