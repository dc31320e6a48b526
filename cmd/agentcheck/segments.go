// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/agents"
)

// copilotRuns gives the figures each Copilot CLI session is held to when
// ccusage's own reading of it is not the whole session: a resumed session
// (two or more session.shutdown records) and a session with responses
// after its last shutdown, or without any. A resumed session is a series
// of runs, each shutdown carrying its own run's usage, and the events
// count each run once, while `ccusage copilot session` keeps each field's
// maximum over the shutdowns and reads nothing after the last one. So
// ccusage is run over each run's records alone (a session of its own in a
// scratch home) and the runs are summed (copilot-runs-summed). A last run
// without a shutdown is run the same way, closed by a shutdown record the
// check writes: per model, the output its responses state, each response
// under the model tailModels names for it
// (copilot-output-only-without-shutdown), so ccusage's rates price it too.
// The sessions returned replace ccusage's, under the same key, or are added.
func copilotRuns(ctx context.Context, bin string, events []agentevent.Event, scratch string) (map[string]ccSession, error) {
	shutdowns := map[string][]*agentevent.Event{}
	files := map[string]string{}
	for i := range events {
		ev := &events[i]
		if ev.SessionID == "" || ev.LogFile == "" {
			continue
		}
		if _, ok := files[ev.SessionID]; !ok {
			files[ev.SessionID] = ev.LogFile
		}
		if ev.Attributes[agentevent.AttrCopilotUsageScope] == "session" {
			shutdowns[ev.SessionID] = append(shutdowns[ev.SessionID], ev)
		}
	}
	runs := map[string][]string{} // session → its runs' scratch session ids
	tails := map[string]bool{}    // session → its last run is one without a shutdown
	write := func(id string, data []byte) error {
		dst := filepath.Join(scratch, ".copilot", "session-state", id, "events.jsonl")
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		//nolint:gosec // G703: dst is in the scratch home this function was given
		return os.WriteFile(dst, data, 0o600)
	}
	for _, sess := range slices.Sorted(mapKeys(files)) {
		evs := shutdowns[sess]
		file := files[sess]
		if len(evs) > 0 {
			file = evs[0].LogFile
		}
		if filepath.Ext(file) != ".jsonl" {
			continue // a history snapshot: no runs, no tokens
		}
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		lines := bytes.SplitAfter(data, []byte("\n"))
		slices.SortFunc(evs, func(a, b *agentevent.Event) int { return int(a.LogLine - b.LogLine) })
		// The usage events of one shutdown (one per model) share its line.
		var ends []int64
		for _, ev := range evs {
			if ev.LogFile != file || ev.LogLine < 1 || ev.LogLine > int64(len(lines)) {
				return nil, fmt.Errorf("copilot session %s: shutdown records out of order in %s", sess, file)
			}
			if len(ends) == 0 || ends[len(ends)-1] != ev.LogLine {
				ends = append(ends, ev.LogLine)
			}
		}
		from := int64(0)
		if len(ends) > 0 {
			from = ends[len(ends)-1]
		}
		tail := tailShutdown(lines, from)
		if len(ends) < 2 && tail == nil {
			continue // ccusage's own reading is the whole session
		}
		from = 0
		for k, end := range ends {
			id := fmt.Sprintf("%s-run%d", sess, k+1)
			if err := write(id, bytes.Join(lines[from:end], nil)); err != nil {
				return nil, err
			}
			runs[sess] = append(runs[sess], id)
			from = end
		}
		if tail != nil {
			id := fmt.Sprintf("%s-run%d", sess, len(ends)+1)
			run := append(bytes.Join(lines[from:], nil), tail...)
			if err := write(id, run); err != nil {
				return nil, err
			}
			runs[sess] = append(runs[sess], id)
			tails[sess] = true
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
		sum := ccSession{Key: sess, ModelCosts: map[string]float64{}}
		if len(shutdowns[sess]) > 0 {
			sum.Definitions = append(sum.Definitions, defCopilotRuns)
		}
		if tails[sess] {
			sum.Definitions = append(sum.Definitions, defCopilotNoShutdown)
		}
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
		out[sess] = sum
	}
	return out, nil
}

// tailShutdown is the session.shutdown record the check writes after the
// records from line from+1 on, a last run the CLI wrote none for: per
// model, the output tokens its responses state, under the model tailModels
// names for each; nil when they state none.
func tailShutdown(lines [][]byte, from int64) []byte {
	out, requests, last := tailModels(lines, from)
	if len(out) == 0 {
		return nil
	}
	type usage struct {
		InputTokens      int64 `json:"inputTokens"`
		OutputTokens     int64 `json:"outputTokens"`
		CacheReadTokens  int64 `json:"cacheReadTokens"`
		CacheWriteTokens int64 `json:"cacheWriteTokens"`
	}
	type requestCount struct {
		Count int64 `json:"count"`
		Cost  int64 `json:"cost"`
	}
	type metric struct {
		Requests requestCount `json:"requests"`
		Usage    usage        `json:"usage"`
	}
	metrics := map[string]metric{}
	for m, n := range out {
		metrics[m] = metric{Requests: requestCount{Count: requests[m]}, Usage: usage{OutputTokens: n}}
	}
	rec := map[string]any{
		"type":      "session.shutdown",
		"id":        "agentcheck-tail-shutdown",
		"timestamp": last,
		"data":      map[string]any{"shutdownType": "routine", "modelMetrics": metrics},
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return nil
	}
	var prefix []byte
	if n := len(lines); n > 0 && len(lines[n-1]) > 0 && !bytes.HasSuffix(lines[n-1], []byte("\n")) {
		prefix = []byte("\n") // the file ends mid-line
	}
	return append(append(prefix, b...), '\n')
}

// tailRecord is what tailModels reads of a Copilot CLI record.
type tailRecord struct {
	Type      string `json:"type"`
	Timestamp string `json:"timestamp"`
	Data      struct {
		Model         string `json:"model"`
		SelectedModel string `json:"selectedModel"`
		NewModel      string `json:"newModel"`
		CurrentModel  string `json:"currentModel"`
		ToolCallID    string `json:"toolCallId"`
		OutputTokens  int64  `json:"outputTokens"`
		ToolRequests  []struct {
			ToolCallID string `json:"toolCallId"`
		} `json:"toolRequests"`
	} `json:"data"`
}

// names is the model the record names, "" for none.
func (r *tailRecord) names() string {
	d := &r.Data
	switch r.Type {
	case "session.start", "session.resume":
		return d.SelectedModel
	case "session.model_change":
		return d.NewModel
	case "session.shutdown":
		return d.CurrentModel
	case "assistant.message", "tool.execution_complete":
		return d.Model
	}
	return ""
}

// tailModels sums the output tokens of the responses after line from by
// the model each was served by, read from the file alone (not from the
// events): the model the response names; else the model its own tool
// calls' tool.execution_complete records name (the first that does); else
// the nearest record before it that names one, else the nearest after it
// (a start's or resume's selectedModel, a model change's newModel, a
// response's or a tool result's model, a shutdown's currentModel). A
// response no record gives a model is left out. It also gives the number
// of responses per model and the last timestamp.
func tailModels(lines [][]byte, from int64) (out, requests map[string]int64, last string) {
	recs := make([]tailRecord, len(lines))
	completed := map[string]string{}
	for i, l := range lines {
		if len(bytes.TrimSpace(l)) == 0 || json.Unmarshal(l, &recs[i]) != nil {
			recs[i] = tailRecord{}
			continue
		}
		r := &recs[i]
		if r.Type == "tool.execution_complete" && r.Data.Model != "" && r.Data.ToolCallID != "" {
			completed[r.Data.ToolCallID] = r.Data.Model
		}
	}
	out, requests = map[string]int64{}, map[string]int64{}
	for i := int(from); i < len(recs); i++ {
		r := &recs[i]
		if r.Timestamp != "" {
			last = r.Timestamp
		}
		if r.Type != "assistant.message" || r.Data.OutputTokens <= 0 {
			continue
		}
		model := r.Data.Model
		for _, tr := range r.Data.ToolRequests {
			if model != "" {
				break
			}
			model = completed[tr.ToolCallID]
		}
		for j := i - 1; j >= 0 && model == ""; j-- {
			model = recs[j].names()
		}
		for j := i + 1; j < len(recs) && model == ""; j++ {
			model = recs[j].names()
		}
		if model == "" {
			continue
		}
		out[model] += r.Data.OutputTokens
		requests[model]++
	}
	return out, requests, last
}
