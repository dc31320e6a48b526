// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package openclaw

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/agents"
	"github.com/agentotel/agentotel/internal/vendors/pi"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
	"github.com/agentotel/agentotel/tests/testenv"
)

// ccusageSession is a session of `ccusage openclaw session --json`.
type ccusageSession struct {
	testenv.CcusageSession
	TotalCost float64 `json:"totalCost"`
}

// TestCorpusMatchesCcusage stages the corpus into a home the way the
// descriptor lays it out and holds every session's tokens and cost, summed
// over the parser's events, to ccusage's (its sessions named by
// SessionKey): the live transcript and the archives alike.
func TestCorpusMatchesCcusage(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not running ccusage")
	}
	home := t.TempDir()
	d := agents.Lookup(Source)
	require.NotNil(t, d)
	require.NoError(t, d.Fixtures.Stage(stagingOf(t, corpusDir(t), home)))

	type totals struct {
		Tokens vendortest.Tokens
		Cost   float64
	}
	ours := map[string]totals{}
	root := filepath.Join(home, ".openclaw")
	patterns := d.Include(root)
	var files []string
	for _, p := range patterns {
		m, err := doublestar.FilepathGlob(p)
		require.NoError(t, err)
		files = append(files, m...)
	}
	require.Len(t, files, len(transcripts(t, corpusDir(t))), "the include patterns match every staged transcript")
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		p := NewParser(f, pi.Options{})
		var events []agentevent.Event
		for _, l := range vendortest.SplitLines(data) {
			events = append(events, p.Parse(l.Data, l.No, l.Offset)...)
		}
		for i := range events {
			ev := &events[i]
			k := d.Ccusage.SessionKey(ev.LogFile, ev.SessionID)
			tot := ours[k]
			tot.Tokens = addTokens(tot.Tokens, vendortest.SumTokens(events[i:i+1]))
			if ev.CostUSD != nil {
				tot.Cost += *ev.CostUSD
			}
			ours[k] = tot
		}
	}

	theirs := map[string]totals{}
	for _, s := range testenv.CcusageSessions[ccusageSession](t, home, "openclaw") {
		theirs[s.SessionID] = totals{Tokens: vendortest.CcusageTokens(s.CcusageSession), Cost: s.TotalCost}
	}
	require.Len(t, theirs, len(ours), "the same sessions")
	for k, want := range theirs {
		got, ok := ours[k]
		require.Truef(t, ok, "ccusage's session %s has no events", k)
		assert.Equalf(t, want.Tokens, got.Tokens, "session %s: tokens", k)
		assert.InDeltaf(t, want.Cost, got.Cost, 1e-9, "session %s: cost", k)
		t.Logf("%s: input %d output %d cache read %d cache write %d cost %.8f", k, got.Tokens.Input, got.Tokens.Output, got.Tokens.CacheRead, got.Tokens.CacheCreation, got.Cost)
	}
}

func addTokens(a, b vendortest.Tokens) vendortest.Tokens {
	return vendortest.Tokens{
		Input:         a.Input + b.Input,
		Output:        a.Output + b.Output,
		CacheRead:     a.CacheRead + b.CacheRead,
		CacheCreation: a.CacheCreation + b.CacheCreation,
	}
}

// stagingOf stages the corpus folder dir into home by plain copies.
func stagingOf(t *testing.T, dir, home string) *agents.Staging {
	return &agents.Staging{
		Dir:  dir,
		Home: home,
		Copy: func(src, dst string) error {
			testenv.CopyFile(t, src, filepath.Join(home, dst))
			return nil
		},
		Note: func(msg string) { t.Log(msg) },
	}
}
