// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/agents"
)

// copilotRuns gives ccusage's figures for each Copilot CLI session with
// two or more session.shutdown records, run by run: a resumed session is a
// series of runs, each shutdown carrying its own run's usage, and the events
// count each run once, while `ccusage copilot session` keeps each field's
// maximum over the shutdowns. So ccusage is run over each run's records
// alone (a session of its own in a scratch home) and the runs are summed;
// a last run without a shutdown adds its events' per-response output, as
// for a session without any (copilot-output-only-without-shutdown). The
// sessions returned replace ccusage's, under the same key.
func copilotRuns(ctx context.Context, bin string, events []agentevent.Event, scratch string) (map[string]ccSession, error) {
	shutdowns := map[string][]*agentevent.Event{}
	for i := range events {
		ev := &events[i]
		if ev.Attributes[agentevent.AttrCopilotUsageScope] == "session" {
			shutdowns[ev.SessionID] = append(shutdowns[ev.SessionID], ev)
		}
	}
	runs := map[string][]string{} // session → its runs' scratch session ids
	for _, sess := range slices.Sorted(mapKeys(shutdowns)) {
		evs := shutdowns[sess]
		if len(evs) < 2 {
			continue
		}
		file := evs[0].LogFile
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		lines := bytes.SplitAfter(data, []byte("\n"))
		slices.SortFunc(evs, func(a, b *agentevent.Event) int { return int(a.LogLine - b.LogLine) })
		from := int64(0)
		for k, ev := range evs {
			if ev.LogFile != file || ev.LogLine <= from || ev.LogLine > int64(len(lines)) {
				return nil, fmt.Errorf("copilot session %s: shutdown records out of order in %s", sess, file)
			}
			id := fmt.Sprintf("%s-run%d", sess, k+1)
			dst := filepath.Join(scratch, ".copilot", "session-state", id, "events.jsonl")
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return nil, err
			}
			//nolint:gosec // G703: dst is in the scratch home this function was given
			if err := os.WriteFile(dst, bytes.Join(lines[from:ev.LogLine], nil), 0o600); err != nil {
				return nil, err
			}
			runs[sess] = append(runs[sess], id)
			from = ev.LogLine
		}
	}
	if len(runs) == 0 {
		return nil, nil
	}
	perRun, err := runCcusage(ctx, bin, agents.Lookup(copilotCLI), scratch, true, nil)
	if err != nil {
		return nil, err
	}
	byKey := map[string]ccSession{}
	for _, s := range perRun {
		byKey[s.Key] = s
	}

	out := map[string]ccSession{}
	for sess, ids := range runs {
		sum := ccSession{Key: sess, Definitions: []string{defCopilotRuns}, ModelCosts: map[string]float64{}}
		for _, id := range ids {
			r, ok := byKey[id]
			if !ok {
				return nil, fmt.Errorf("copilot session %s: ccusage reports nothing for its run %s", sess, id)
			}
			sum.Tokens.add(r.Tokens)
			sum.Cost += r.Cost
			for m, c := range r.ModelCosts {
				sum.ModelCosts[m] += c
			}
		}
		// The tail: a last run without a shutdown, its per-response output.
		last := shutdowns[sess][len(shutdowns[sess])-1].LogLine
		var tail tokens
		var tailCost float64
		for i := range events {
			ev := &events[i]
			if ev.SessionID != sess || ev.LogLine <= last {
				continue
			}
			tail.add(eventTokens(ev))
			if ev.CostUSD != nil {
				tailCost += *ev.CostUSD
			}
		}
		if tail == (tokens{Output: tail.Output}) {
			sum.Tokens.add(tail)
			sum.Cost += tailCost
			if tail.Output > 0 {
				sum.Definitions = append(sum.Definitions, defCopilotNoShutdown)
			}
		}
		out[sess] = sum
	}
	return out, nil
}
